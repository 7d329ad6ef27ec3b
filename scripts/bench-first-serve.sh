#!/usr/bin/env bash
# How long a newcomer waits for the first page (BENCHMARKS.md, "First serve"): a clone of this
# repository's HEAD in a scratch folder, with an empty home (so an empty cargo registry, npm and pip
# cache, no node_modules and no cached speaker weights) and an empty target folder, runs
# `bash scripts/dev.sh` as the README says; the clock stops at the first answer of
# http://127.0.0.1:$PORT/. The machine's Rust toolchain (RUSTUP_HOME, with its wasm32 target) is kept,
# as a new machine of this kind has it. Each line the scripts print is stamped with the seconds since
# the start, so the steps' times are the differences between the `==>` lines. Then, with THEN_TEST=1,
# the server stops and `bash scripts/test.sh` runs in the same clone, as a newcomer's next command.
#   [THEN_TEST=1] bash scripts/bench-first-serve.sh
# Leave the machine otherwise idle: the figure is wall time on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8841}
WORK=$(realpath -m tests/.work/first-serve)
# The clone sits beside this checkout, so the tests find ../shared/corpora as they do here.
REPO=$(realpath -m ../commonplace-first-serve)
rm -rf "$WORK" "$REPO" && mkdir -p "$WORK/home"
git clone --quiet --no-hardlinks . "$REPO"
log=$WORK/serve.log

export RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
rustup_bin=$(dirname "$(command -v rustup)")
start=$(date +%s.%N)
# Runs a command in the clone as a newcomer would, each line of its output stamped.
as_newcomer() {
  (
    cd "$REPO"
    export HOME=$WORK/home CARGO_HOME=$WORK/home/.cargo PATH="$rustup_bin:/usr/local/bin:/usr/bin:/bin"
    unset CARGO_TARGET_DIR XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME
    exec "$@"
  ) 2>&1 | stamp
}
# Prefixes each line with the seconds since the start as it arrives (awk would read ahead in blocks).
stamp() {
  local line
  while IFS= read -r line; do
    printf '%s  %s\n' "$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%7.1f", b - a }')" "$line"
  done
}
stop_serving() {
  pkill -f "wrangler dev.*--port $PORT" 2>/dev/null || true
  pkill -f "workerd.*$REPO" 2>/dev/null || true
}
as_newcomer env PORT="$PORT" bash scripts/dev.sh > "$log" &
serve=$!
trap stop_serving EXIT

until curl -fsS -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null; do
  kill -0 $serve 2>/dev/null || { echo "dev.sh stopped before serving:" >&2; tail -n 30 "$log" >&2; exit 1; }
  sleep 1
done
served=$(date +%s.%N)
echo "first page after $(awk -v a="$start" -v b="$served" 'BEGIN { printf "%.0f", b - a }') s; the steps, by when each one's output was written:"
since() { [ -e "$1" ] || return 0; awk -v a="$start" -v b="$(stat -c %.9Y "$1")" -v what="$2" 'BEGIN { printf "%7.1f s  %s\n", b - a, what }'; }
since "$WORK/home/.cache/commonplace/voice/resemblyzer-ge2e-0.1.4.safetensors" "the speaker encoder's weights fetched (setup)"
since "$REPO/node_modules/.installed-from-lock" "wrangler and esbuild installed from the npm registry (setup)"
since "$REPO/target/local/builder" "the builder compiled (local profile)"
since "$REPO/target/wasm32-unknown-unknown/worker/edge.wasm" "the Worker's wasm compiled (worker profile)"
since "$REPO/target/local/bundle" "bundle compiled"
since "$REPO/dist/SHA256SUMS" "the sample content built"
since "$REPO/edge/build/index.js" "the Worker bundled"
awk -v a="$start" -v b="$served" 'BEGIN { printf "%7.1f s  the first page answered\n", b - a }'
grep -E '==>|Ready on' "$log" || true
du -sh "$WORK/home/.cargo/registry" "$REPO/target" "$REPO/node_modules" 2>/dev/null || true
stop_serving
wait $serve 2>/dev/null || true
if [ "${THEN_TEST:-}" = 1 ]; then
  as_newcomer bash scripts/test.sh > "$WORK/test.log" || { echo "test.sh failed:" >&2; tail -n 40 "$WORK/test.log" >&2; exit 1; }
  echo "then bash scripts/test.sh passed; its steps:"
  grep -E '^ *[0-9.]+  == \[' "$WORK/test.log"
  tail -n 1 "$WORK/test.log"
fi
