#!/usr/bin/env bash
# Quote service benchmarks (BENCHMARKS.md, "Quotes"): imports and builds the whole
# Changelog corpus (CC BY-SA 4.0, © Changelog Media LLC) into tests/.work (ignored, never committed),
# then runs
#   1. the domain benchmarks: attribution latency, phrase search latency and bytes read per query,
#      attribution accuracy per episode and over the whole corpus (`cargo bench -p domain --bench quotes`);
#   2. the phrase search peers on the same passages and queries: tantivy and SQLite FTS5
#      (scripts/bench-phrase-peers.py, in a virtualenv of tests/.work with tantivy from PyPI);
#   3. end to end through `wrangler dev --local` on the production layout (scripts/bench-reads.sh):
#      the phrase queries of step 1 and corpus-wide attribution, as ratios to the no-IO request.
# About 25 minutes on a 2-core machine. `SKIP_E2E=1` stops after step 2; `BENCH_DURATION` (default
# 20s) is each end-to-end kind's wrk run.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
WORK=tests/.work
if [ ! -d "$WORK/corpus/jsparty" ]; then
  mkdir -p "$WORK/corpus"
  tar -xJf ../shared/corpora/changelog-transcripts.tar.xz -C "$WORK/corpus"
fi
cargo build --quiet --release -p builder
rm -rf "$WORK/corpus-content" "$WORK/corpus-dist" "$WORK/corpus-dist.state" "$WORK/corpus-dist.assets" "$WORK/corpus-dist.r2"
mkdir -p "$WORK/corpus-content"
cp -r content/recipes "$WORK/corpus-content/"
echo "== import the corpus (builder import --format changelog-md)"
/usr/bin/time -f "import: %e s wall, %M KiB max RSS" \
  ./target/release/builder import --format changelog-md --input "$WORK/corpus" --out "$WORK/corpus-content/shows" --created 2026-03-01
echo "== build the whole corpus (builder build)"
/usr/bin/time -f "build: %e s wall, %M KiB max RSS" \
  ./target/release/builder build --content "$WORK/corpus-content" --out "$WORK/corpus-dist"
echo "dist: $(du -sh "$WORK/corpus-dist" | cut -f1), $(find "$WORK/corpus-dist" -type f | wc -l) files;" \
  "phrase index: $(du -sh "$WORK/corpus-dist/quotes" | cut -f1) in $(find "$WORK/corpus-dist/quotes" -type f | wc -l) files;" \
  "static assets: $(find "$WORK/corpus-dist.assets" -type f | wc -l) files"
echo "== domain benchmarks"
cargo bench --quiet -p domain --bench quotes
echo "== peers: tantivy and SQLite FTS5 on the same passages and queries"
if [ ! -x "$WORK/venv/bin/python" ]; then python3 -m venv "$WORK/venv"; fi
"$WORK/venv/bin/pip" install --quiet 'tantivy==0.27.0'
"$WORK/venv/bin/python" scripts/bench-phrase-peers.py
if [ "${SKIP_E2E:-}" = 1 ]; then exit 0; fi
echo "== end to end through wrangler dev --local (production layout)"
if [ ! -f edge/build/worker/shim.mjs ]; then bash scripts/build.sh; fi
bash scripts/bench-reads.sh "$WORK/corpus-dist" "${BENCH_DURATION:-20s}" "$WORK/phrase-queries.txt phrase attribute-anywhere attribute"
