#!/usr/bin/env bash
# End-to-end latency through the real Worker in `wrangler dev --local`: wrk replays a list of request
# paths (by default the recipe search bench's 1,000 queries) against a built dist/.
#   scripts/bench-e2e.sh [DIST] [PATHS_FILE] [DURATION]
# e.g. after `cargo bench -p tests --bench build` and `--bench search`:
#   scripts/bench-e2e.sh tests/.work/bench-dist-100000 tests/.work/bench-queries.txt 30s
# or, for phrase search over the whole Changelog corpus, after `scripts/bench-quotes.sh`:
#   scripts/bench-e2e.sh tests/.work/corpus-dist tests/.work/phrase-queries.txt 30s
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=$(realpath "${1:-dist}")
PATHS_FILE=$(realpath "${2:-tests/.work/bench-queries.txt}")
DURATION=${3:-30s}
PORT=${PORT:-8799}
WORK=tests/.work/e2e
rm -rf "$WORK" && mkdir -p "$WORK"
# wrangler dev watches every asset file (inotify), and one Workers deploy holds at most 20,000 files:
# a larger build is served as the two search indexes and the lists they need only (hard links),
# which is all /api/recipes and /api/search read; per-recipe and per-episode files at that scale
# live in R2.
if [ "$(find "$DIST" -type f | head -20001 | wc -l)" -gt 20000 ]; then
  mkdir -p "$WORK/dist"
  for part in search quotes slugs.json shows.json episodes.json; do
    if [ -e "$DIST/$part" ]; then cp -al "$DIST/$part" "$WORK/dist/"; fi
  done
  DIST=$(realpath "$WORK/dist")
fi
cat > "$WORK/wrangler.toml" <<TOML
name = "commonplace-bench"
main = "../../../edge/build/worker/shim.mjs"
compatibility_date = "2025-09-01"
[assets]
directory = "$DIST"
binding = "ASSETS"
run_worker_first = true
html_handling = "auto-trailing-slash"
not_found_handling = "none"
[[d1_databases]]
binding = "DB"
database_name = "commonplace"
database_id = "7e2b5f0a-0c0d-4c3e-9a51-0000c0ffee00"
migrations_dir = "../../../migrations"
[vars]
ENVIRONMENT = "dev"
TOML
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
WRANGLER="$PWD/node_modules/.bin/wrangler"
(cd "$WORK" && "$WRANGLER" d1 migrations apply DB --local --persist-to state >/dev/null)
(cd "$WORK" && exec setsid "$WRANGLER" dev --local --ip 127.0.0.1 --port "$PORT" --persist-to state \
  --inspector-port "$((PORT + 1))" --show-interactive-dev-session=false --live-reload=false > wrangler.log 2>&1) &
trap 'kill -- -$(pgrep -f "port $PORT --persist-to state" | head -1) 2>/dev/null || true; pkill -f "wrangler.*--port $PORT" 2>/dev/null || true' EXIT
started=$(date +%s)
until curl -sf "http://127.0.0.1:$PORT/search/manifest.json" >/dev/null; do
  sleep 1
  if [ $(( $(date +%s) - started )) -gt 600 ]; then echo "the worker did not start"; tail "$WORK/wrangler.log"; exit 1; fi
done
echo "worker ready after $(( $(date +%s) - started )) s on $(find "$DIST" -type f | wc -l) files"
cat > "$WORK/replay.lua" <<'LUA'
local paths = {}
for line in io.lines(os.getenv("PATHS_FILE")) do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
LUA
# One warm-up pass so the isolate has loaded what it caches, then the measured run.
PATHS_FILE="$PATHS_FILE" wrk -t1 -c1 -d5s -s "$WORK/replay.lua" "http://127.0.0.1:$PORT" >/dev/null
PATHS_FILE="$PATHS_FILE" wrk -t2 -c4 -d"$DURATION" --latency -s "$WORK/replay.lua" "http://127.0.0.1:$PORT"
