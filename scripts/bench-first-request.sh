#!/usr/bin/env bash
# What the Worker's size costs its first request in workerd (BENCHMARKS.md, "The Worker"): our Worker
# (edge/build, on the sample build in dist.assets), a bare JavaScript Worker with static assets in
# front, and the bare Worker carrying our wasm module as a module it imports but never instantiates
# (what compiling the module alone costs), each started ROUNDS times with `wrangler dev --local`. For each start: the seconds
# from launching wrangler to the first answer, that first answer's latency (the isolate's first
# request, after workerd loaded and compiled the module), and the median of the next 20 answers. The
# request does no IO (`OPTIONS /api/recipes`, a CORS preflight; the bare Worker answers it alike).
# The difference between the two Workers is what our module costs a cold start beyond the stack's own.
#   bash scripts/build.sh && bash scripts/bench-first-request.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
PORT=${PORT:-8831}
WORK=$(realpath -m tests/.work/first-request)
rm -rf "$WORK" && mkdir -p "$WORK/ours" "$WORK/bare/public" "$WORK/bare-wasm/public"
[ -f edge/build/worker/shim.mjs ] && [ -d dist.assets ] || { echo "run bash scripts/build.sh first" >&2; exit 1; }
source scripts/dev-local-lib.sh
bench_wrangler_toml "$WORK/ours" commonplace-first-request "$PWD/dist.assets"
cat > "$WORK/bare/worker.js" <<'JS'
export default {
  async fetch(request) {
    return new Response(null, { status: 204, headers: { "access-control-allow-origin": "*" } });
  },
};
JS
echo ok > "$WORK/bare/public/ok.txt"
printf '%s\n' 'name = "bare-first-request"' 'main = "worker.js"' 'compatibility_date = "2025-09-01"' \
  '[assets]' 'directory = "public"' 'binding = "ASSETS"' 'run_worker_first = true' > "$WORK/bare/wrangler.toml"
cp edge/build/index_bg.wasm "$WORK/bare-wasm/module.wasm"
echo ok > "$WORK/bare-wasm/public/ok.txt"
cat > "$WORK/bare-wasm/worker.js" <<'JS'
import module from "./module.wasm";
export default {
  async fetch(request) {
    return new Response(null, { status: 204, headers: { "x-module": String(module instanceof WebAssembly.Module) } });
  },
};
JS
sed 's/bare-first-request/bare-wasm-first-request/' "$WORK/bare/wrangler.toml" > "$WORK/bare-wasm/wrangler.toml"
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
WRANGLER="$PWD/node_modules/.bin/wrangler"
(cd "$WORK/ours" && "$WRANGLER" d1 migrations apply DB --local --persist-to state >/dev/null)
trap 'pkill -f "wrangler.*--port $PORT" 2>/dev/null || true' EXIT

echo "worker    round  ready (s)  first answer (ms)  next 20, median (ms)   wasm: $(wc -c < edge/build/index_bg.wasm) bytes, $(gzip -9 -c edge/build/index_bg.wasm | wc -c) gzipped"
for round in $(seq "$ROUNDS"); do
  for worker in ours bare bare-wasm; do
    python3 - "$WORK/$worker" "$PORT" "$WRANGLER" "$worker" "$round" <<'PY'
import http.client, os, signal, statistics, subprocess, sys, time
folder, port, wrangler, name, round_ = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
log = open(os.path.join(folder, "wrangler.log"), "w")
started = time.perf_counter()
process = subprocess.Popen(
    [wrangler, "dev", "--local", "--ip", "127.0.0.1", "--port", str(port), "--persist-to", "state",
     "--inspector-port", str(port + 1), "--show-interactive-dev-session=false", "--live-reload=false"],
    cwd=folder, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
def ask():
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    began = time.perf_counter()
    connection.request("OPTIONS", "/api/recipes", headers={"Origin": "https://example.org",
                                                           "Access-Control-Request-Method": "GET"})
    connection.getresponse().read()
    return (time.perf_counter() - began) * 1000
try:
    while True:
        if time.perf_counter() - started > 120:
            sys.exit(f"{name} did not answer in 120 s (see {folder}/wrangler.log)")
        try:
            first = ask()
            break
        except (ConnectionError, OSError):
            time.sleep(0.02)
    ready = time.perf_counter() - started
    nexts = [ask() for _ in range(20)]
    print(f"{name:<9} {round_:>5}  {ready:>9.2f}  {first:>17.1f}  {statistics.median(nexts):>20.2f}")
finally:
    os.killpg(process.pid, signal.SIGTERM)
    process.wait()
PY
    sleep 1
  done
done
