#!/usr/bin/env bash
# Starts the whole service locally on the sample content: http://127.0.0.1:8787
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
STATE=.wrangler/state
npx wrangler d1 migrations apply DB --local --persist-to "$STATE" >/dev/null
# wrangler runs [build] (scripts/build.sh) before serving.
exec npx wrangler dev --local --ip 127.0.0.1 --port "${PORT:-8787}" --persist-to "$STATE" --show-interactive-dev-session=false
