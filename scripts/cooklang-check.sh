#!/usr/bin/env bash
# Reads a build's Cooklang dump (recipes-cooklang*.zip) with the official parser's Python bindings and
# compares it with the JSON dump: `bash scripts/cooklang-check.sh [DIST]` (default dist). The bindings
# come from PyPI into tests/.venv-cooklang, pinned.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=tests/.venv-cooklang
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet cooklang-bindings==0.6.0
fi
exec "$venv/bin/python" scripts/cooklang-check.py "${1:-dist}"
