# shellcheck shell=bash
# For the bench scripts: `wrangler dev --local` in the background, from a folder of its own.
#   source scripts/dev-local-lib.sh
#   dev_local DIR PORT READY_PATH [LIMIT_S]
# starts it in DIR (DIR/wrangler.toml, state persisted in DIR/state, log in DIR/wrangler.log), waits
# until READY_PATH answers (at most LIMIT_S seconds, default 600), and stops it when the calling
# script exits. Run from the project root.
dev_local() {
  local dir=$1 port=$2 ready=$3 limit=${4:-600}
  local wrangler="$PWD/node_modules/.bin/wrangler"
  export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
  (cd "$dir" && exec setsid "$wrangler" dev --local --ip 127.0.0.1 --port "$port" --persist-to state \
    --inspector-port "$((port + 1))" --show-interactive-dev-session=false --live-reload=false \
    > wrangler.log 2>&1) &
  # shellcheck disable=SC2064 # the port and folder are fixed now
  trap "pkill -f 'wrangler.*--port $port' 2>/dev/null || true; pkill -f 'workerd.*$dir' 2>/dev/null || true" EXIT
  local started
  started=$(date +%s)
  until curl -sf "http://127.0.0.1:$port$ready" >/dev/null; do
    sleep 1
    if [ $(( $(date +%s) - started )) -gt "$limit" ]; then
      echo "wrangler dev in $dir did not answer $ready"
      tail "$dir/wrangler.log"
      exit 1
    fi
  done
}

# For the bench scripts: a wrangler.toml for our Worker (edge/build) serving ASSETS (a build's static
# assets) with the production bindings a read needs (PACKS, DB), written to DIR/wrangler.toml.
#   bench_wrangler_toml DIR NAME ASSETS
bench_wrangler_toml() {
  cat > "$1/wrangler.toml" <<TOML
name = "$2"
main = "$PWD/edge/build/worker/shim.mjs"
compatibility_date = "2025-09-01"
[assets]
directory = "$3"
binding = "ASSETS"
run_worker_first = true
html_handling = "auto-trailing-slash"
not_found_handling = "none"
[[r2_buckets]]
binding = "PACKS"
bucket_name = "commonplace-packs"
[[d1_databases]]
binding = "DB"
database_name = "commonplace"
database_id = "7e2b5f0a-0c0d-4c3e-9a51-0000c0ffee00"
migrations_dir = "$PWD/migrations"
TOML
}
