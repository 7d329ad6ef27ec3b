#!/usr/bin/env bash
# MCP figures for BENCHMARKS.md ("Agents"): `tools/list` and a `search_recipes` call through the real
# Worker in `wrangler dev --local`, measured with wrk and a Lua script for the POST bodies.
# Usage: scripts/bench-mcp.sh [seconds per run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-15}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
state=$(mktemp -d)
work=$(mktemp -d)
export WRANGLER_SEND_METRICS=false CI=true NO_COLOR=1 COMMONPLACE_PREBUILT=1
node_modules/.bin/wrangler d1 migrations apply DB --local --persist-to "$state" >/dev/null
setsid node_modules/.bin/wrangler dev --local --ip 127.0.0.1 --port "$port" --persist-to "$state" \
  --show-interactive-dev-session=false --live-reload=false >"$work/wrangler.log" 2>&1 &
pgid=$!
trap 'kill -TERM -- -$pgid 2>/dev/null || true; rm -rf "$state" "$work"' EXIT
for _ in $(seq 1 300); do curl -sf "http://127.0.0.1:$port/search/manifest.json" >/dev/null && break; sleep 0.2; done

cat >"$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = os.getenv("MCP_BODY")
done = function(summary, latency, requests)
  io.write(string.format("requests %d, errors %d, p50 %.2f ms, p99 %.2f ms\n", summary.requests,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.timeout,
    latency:percentile(50) / 1000, latency:percentile(99) / 1000))
end
LUA
run() {
  local name=$1 body=$2
  curl -sf -H 'Content-Type: application/json' --data "$body" "http://127.0.0.1:$port/mcp" >/dev/null
  printf '%s (4 connections, %ss): ' "$name" "$secs"
  MCP_BODY=$body wrk -t2 -c4 -d"${secs}s" -s "$work/post.lua" "http://127.0.0.1:$port/mcp" | tail -1
}
run "tools/list" '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
run "tools/call search_recipes" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_recipes","arguments":{"q":"lentil soup","limit":10}}}'
