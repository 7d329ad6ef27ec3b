#!/usr/bin/env bash
# Feed reading (BENCHMARKS.md, "Intake"): one RSS feed per show of the Changelog corpus (CC BY-SA 4.0,
# © Changelog Media LLC; extracted and imported into tests/.work, never committed), written in the
# spellings feeds in the wild use, read by `domain::quotes::feed` and by podcastparser (PyPI) side by
# side: throughput of each, and whether they agree on every item's guid, audio, transcripts and people.
# About 3 minutes on a 2-core machine when the corpus is already imported (scripts/bench-quotes.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
WORK=tests/.work
if [ ! -d "$WORK/corpus-content/shows" ]; then
  if [ ! -d "$WORK/corpus/jsparty" ]; then
    mkdir -p "$WORK/corpus"
    tar -xJf ../shared/corpora/changelog-transcripts.tar.xz -C "$WORK/corpus"
  fi
  cargo build --quiet --release -p builder
  mkdir -p "$WORK/corpus-content"
  ./target/release/builder import --format changelog-md --input "$WORK/corpus" --out "$WORK/corpus-content/shows" --created 2026-03-01
fi
if [ ! -x "$WORK/venv/bin/python" ]; then python3 -m venv "$WORK/venv"; fi
"$WORK/venv/bin/pip" install --quiet 'podcastparser==0.6.11'
"$WORK/venv/bin/python" scripts/bench-feeds.py
