#!/usr/bin/env bash
# Quote service benchmarks (BENCHMARKS.md, "Issue 5"): imports and builds the whole Changelog corpus
# (CC BY-SA 4.0, © Changelog Media LLC) into tests/.work (ignored, never committed), then runs the
# domain benchmarks: attribution latency, phrase search latency, attribution accuracy.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
WORK=tests/.work
if [ ! -d "$WORK/corpus/jsparty" ]; then
  mkdir -p "$WORK/corpus"
  tar -xJf ../shared/corpora/changelog-transcripts.tar.xz -C "$WORK/corpus"
fi
cargo build --quiet --release -p builder
rm -rf "$WORK/corpus-content" "$WORK/corpus-dist" "$WORK/corpus-dist.state"
mkdir -p "$WORK/corpus-content"
cp -r content/recipes "$WORK/corpus-content/"
echo "== import the corpus (builder import --format changelog-md)"
/usr/bin/time -f "import: %e s wall, %M KiB max RSS" \
  ./target/release/builder import --format changelog-md --input "$WORK/corpus" --out "$WORK/corpus-content/shows" --created 2026-03-01
echo "== build the whole corpus (builder build)"
/usr/bin/time -f "build: %e s wall, %M KiB max RSS" \
  ./target/release/builder build --content "$WORK/corpus-content" --out "$WORK/corpus-dist"
echo "dist: $(du -sh "$WORK/corpus-dist" | cut -f1), $(find "$WORK/corpus-dist" -type f | wc -l) files"
echo "== domain benchmarks"
cargo bench --quiet -p domain --bench quotes
