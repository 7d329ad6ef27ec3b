#!/usr/bin/env bash
# Builds the content into dist/ and the Worker into edge/build/ (wrangler.toml's [build] command).
# `scripts/build.sh worker` builds only the Worker (scripts/deploy.sh builds the site from git itself).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# The test harness builds once and starts many workers; each wrangler start runs this again.
[ "${COMMONPLACE_PREBUILT:-}" = 1 ] && exit 0

if [ "${1:-}" != worker ]; then
  cargo build --quiet --release -p builder
  ./target/release/builder build --content content --out dist
fi

# worker-build would download wasm-bindgen from GitHub; use the one scripts/setup.sh installed.
export WASM_BINDGEN_BIN="${WASM_BINDGEN_BIN:-$(command -v wasm-bindgen)}"
export ESBUILD_BIN="${ESBUILD_BIN:-$PWD/node_modules/.bin/esbuild}"
(cd edge && worker-build --profile worker --no-opt >/dev/null)
