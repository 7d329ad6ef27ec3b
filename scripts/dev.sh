#!/usr/bin/env bash
# Starts the whole service locally on the sample content: http://127.0.0.1:8787
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
STATE=.wrangler/state
# Development-only settings live in the git-ignored .dev.vars, which `wrangler dev` reads and
# `wrangler deploy` does not. Add ENVIRONMENT=dev (the local sign-in) unless the file already sets
# ENVIRONMENT; anything else in it (AI keys, say) is yours and left alone.
if ! grep -qs '^ENVIRONMENT=' .dev.vars; then
  if [ -s .dev.vars ] && [ -n "$(tail -c1 .dev.vars)" ]; then echo >> .dev.vars; fi
  echo 'ENVIRONMENT=dev' >> .dev.vars
fi
npx wrangler d1 migrations apply DB --local --persist-to "$STATE" >/dev/null
# wrangler runs [build] (scripts/build.sh) before serving.
exec npx wrangler dev --local --ip 127.0.0.1 --port "${PORT:-8787}" --persist-to "$STATE" --show-interactive-dev-session=false
