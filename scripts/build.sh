#!/usr/bin/env bash
# Builds the content into the production layout (OUT = the open-data tree, OUT.assets = the static
# assets, OUT.r2 = the R2 packs) and the Worker into edge/build/ (wrangler.toml's [build] command).
#   CONTENT=content OUT=dist [COMMONPLACE_R2_STATE=.wrangler/state] scripts/build.sh
# A CONTENT folder that is a git repository is built from its HEAD commit, so a rebuild after a new
# commit redoes only what the commit changed. With COMMONPLACE_R2_STATE set, the packs the build made
# are put into that local R2 (scripts/r2-local.sh), which is noted beside the build: later builds of
# OUT fill it themselves before they switch to the new build.
# `scripts/build.sh worker` builds only the Worker (scripts/deploy.sh builds the site from git itself).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# The test harness builds once and starts many workers; each wrangler start runs this again.
[ "${COMMONPLACE_PREBUILT:-}" = 1 ] && exit 0
CONTENT=${CONTENT:-content}
OUT=${OUT:-dist}

if [ "${1:-}" != worker ]; then
  # The `local` profile: release code without the whole-program link step (Cargo.toml), so a change
  # rebuilds in seconds; deploys build `release` (scripts/deploy.sh).
  cargo build --quiet --profile local -p builder
  if [ -d "$CONTENT/.git" ] && [ "$CONTENT" != content ]; then
    ./target/local/builder build --git "$CONTENT" --rev HEAD --out "$OUT"
  else
    ./target/local/builder build --content "$CONTENT" --out "$OUT"
  fi
  if [ -n "${COMMONPLACE_R2_STATE:-}" ]; then
    bash scripts/r2-local.sh "$OUT" "$COMMONPLACE_R2_STATE"
  fi
fi

# worker-build would download wasm-bindgen from GitHub; use the one scripts/setup.sh installed.
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export ESBUILD_BIN="${ESBUILD_BIN:-$PWD/node_modules/.bin/esbuild}"
(cd edge && worker-build --profile worker --no-opt >/dev/null)
