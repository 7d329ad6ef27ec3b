#!/usr/bin/env bash
# Builds the content into the production layout (OUT = the open-data tree, OUT.assets = the static
# assets, OUT.r2 = the R2 packs) and the Worker into edge/build/ (wrangler.toml's [build] command).
#   CONTENT=content OUT=dist [COMMONPLACE_R2_STATE=.wrangler/state] scripts/build.sh
# A CONTENT folder that is a git repository is built from its HEAD commit, so a rebuild after a new
# commit redoes only what the commit changed. With COMMONPLACE_R2_STATE set, the packs the build made
# are put into that local R2 (scripts/r2-local.sh), which is noted beside the build: later builds of
# OUT fill it themselves before they switch to the new build.
# `scripts/build.sh worker` builds only the Worker (scripts/deploy.sh builds the site from git itself);
# `scripts/build.sh compile` only compiles the builder, the Worker and `bundle` (scripts/dev.sh, so a
# first run shows cargo's progress before wrangler starts).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
# The test harness builds once and starts many workers; each wrangler start runs this again.
[ "${COMMONPLACE_PREBUILT:-}" = 1 ] && exit 0
CONTENT=${CONTENT:-content}
OUT=${OUT:-dist}
target=${CARGO_TARGET_DIR:-target}
# On a terminal cargo shows what it compiles and how far it is; elsewhere (wrangler, tests) it is quiet.
quiet=--quiet
[ -t 2 ] && quiet=

say() { printf '==> %s\n' "$*" >&2; }

# The `local` profile: release code without the whole-program link step (Cargo.toml), so a change
# rebuilds in seconds; deploys build `release` (scripts/deploy.sh).
compile_builder() {
  say "compiling the builder (the local profile)"
  cargo build $quiet --profile local -p builder
}

# The Worker: its wasm (the `worker` profile, built for size), then `bundle` makes edge/build/ of it
# (wasm-bindgen's glue, the entry shim, one esbuild bundle). WASM_BINDGEN_USE_JS_SYS makes workers-rs's
# macros use js-sys's futures, as the shim expects.
compile_worker() {
  say "compiling the Worker (wasm32, the worker profile) and bundle"
  WASM_BINDGEN_USE_JS_SYS=1 cargo build $quiet --lib -p edge --target wasm32-unknown-unknown --profile worker
  cargo build $quiet --profile local -p bundle
}

case "${1:-}" in
  compile)
    compile_builder
    compile_worker
    exit 0
    ;;
  worker) ;;
  *)
    compile_builder
    say "building $CONTENT into $OUT"
    if [ -d "$CONTENT/.git" ] && [ "$CONTENT" != content ]; then
      "$target/local/builder" build --git "$CONTENT" --rev HEAD --out "$OUT"
    else
      "$target/local/builder" build --content "$CONTENT" --out "$OUT"
    fi
    if [ -n "${COMMONPLACE_R2_STATE:-}" ]; then
      bash scripts/r2-local.sh "$OUT" "$COMMONPLACE_R2_STATE"
    fi
    ;;
esac

compile_worker
"$target/local/bundle" --wasm "$target/wasm32-unknown-unknown/worker/edge.wasm" --out edge/build \
  --esbuild node_modules/.bin/esbuild
