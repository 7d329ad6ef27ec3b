#!/usr/bin/env bash
# Starts the whole service locally: http://127.0.0.1:8787 on the sample content, or
#   CONTENT=<dir> PORT=<port> [DEV_VARS=<file>] bash scripts/dev.sh
# on any content folder (a work tree, or a git repository built from HEAD), in the production layout:
# static assets plus a local R2 of packs, and a local D1. Another folder gets its own build and state
# under .wrangler/sites/<name>-<hash of its absolute path>/ (scripts/site-lib.sh), so the sample's
# stays as it is and two folders with one name never share a site.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Compiled here, on the terminal, so a first run shows cargo's progress; wrangler's builds then find
# everything compiled.
bash scripts/build.sh compile
export WRANGLER_SEND_METRICS=false CLOUDFLARE_CF_FETCH_ENABLED=false
export CONTENT=${CONTENT:-content}
source scripts/site-lib.sh
site_paths "$CONTENT"
[ "$SITE_OUT" != dist ] || export CONTENT=content
export OUT=$SITE_OUT
STATE=$SITE_STATE
mkdir -p "$(dirname "$OUT")"
echo "serving $CONTENT from $OUT with its local D1 and R2 in $STATE" >&2
# wrangler runs [build] (scripts/build.sh) before serving and again when a watched file changes;
# the first run notes this state's local R2 beside the build (scripts/r2-local.sh), and from then on
# every build of $OUT, by wrangler or by hand in another terminal, fills it before it switches.
export COMMONPLACE_R2_STATE=$STATE
# Development-only settings live in the git-ignored .dev.vars, which `wrangler dev` reads and
# `wrangler deploy` does not. Add ENVIRONMENT=dev (the local sign-in) unless the file already sets
# ENVIRONMENT; anything else in it (AI keys, say) is yours and left alone.
if ! grep -qs '^ENVIRONMENT=' .dev.vars; then
  if [ -s .dev.vars ] && [ -n "$(tail -c1 .dev.vars)" ]; then echo >> .dev.vars; fi
  echo 'ENVIRONMENT=dev' >> .dev.vars
fi
# A site's own settings (another site's intake provider, feeds it may fetch, …): DEV_VARS names a file
# whose values are laid over .dev.vars for this site alone; without it every site reads .dev.vars.
env_files=()
if [ -n "${DEV_VARS:-}" ]; then
  [ -f "$DEV_VARS" ] || { echo "DEV_VARS: there is no file $DEV_VARS" >&2; exit 1; }
  env_files=(--env-file .dev.vars --env-file "$DEV_VARS")
  echo "with the settings of .dev.vars, then $DEV_VARS" >&2
fi
npx wrangler d1 migrations apply DB --local --persist-to "$STATE" >/dev/null
# `--test-scheduled`: GET /__scheduled runs the cron (the followed feeds) at once.
exec npx wrangler dev --local --ip 127.0.0.1 --port "${PORT:-8787}" --persist-to "$STATE" \
  --assets "$OUT.assets" --show-interactive-dev-session=false --test-scheduled "${env_files[@]}"
