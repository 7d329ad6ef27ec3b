#!/usr/bin/env bash
# The editors' pages at corpus scale (BENCHMARKS.md, "Quotes"): the whole Changelog corpus (CC BY-SA
# 4.0, © Changelog Media LLC) as a site where nobody has reviewed a name yet. Each episode keeps its
# human-edited run and gains a machine run of the same turns (`asr-bench`, so two runs compare), and
# each label's name is one source's vote instead of an editor's decision (so every label is
# `tentative` and in the review queue: about 6,600). Then, through `wrangler dev --local` on the
# production layout (scripts/bench-reads.sh), signed in as an editor: the review queue, two runs
# compared, and an episode page, as ratios to the no-IO request, with each page's weight.
#   scripts/bench-review.sh [DURATION]      # DURATION of each kind's wrk run, default 15s
# Needs tests/.work/corpus-content (scripts/bench-quotes.sh makes it); about 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
WORK=tests/.work
[ -d "$WORK/corpus-content/shows" ] || { echo "run scripts/bench-quotes.sh once first (SKIP_E2E=1 is enough)"; exit 1; }
cargo build --quiet --release -p builder
rm -rf "$WORK/review-content" "$WORK/review-dist" "$WORK/review-dist.assets" "$WORK/review-dist.r2"
cp -r "$WORK/corpus-content" "$WORK/review-content"
python3 - "$WORK/review-content/shows" <<'PY'
import json, pathlib, sys
episodes = labels = 0
for names_file in pathlib.Path(sys.argv[1]).glob("*/*/names.json"):
    runs = names_file.parent / "runs"
    (human_run,) = [run for run in runs.glob("*.json")]
    run = json.loads(human_run.read_text())
    run.update(pipeline="asr-bench", kind="asr", imported_from="webvtt")
    (runs / "asr-bench.json").write_text(json.dumps(run))
    names = json.loads(names_file.read_text())
    for label, entry in names["labels"].items():
        decided = entry.pop("human", None)
        if decided:
            entry["votes"] = [{"source": "asr", "name": decided["name"], "evidence": "voice tag in the imported WebVTT file"}]
            labels += 1
    names_file.write_text(json.dumps(names, indent=2))
    episodes += 1
print(f"{episodes} episodes with two runs each; {labels} labels named by one source only")
PY
/usr/bin/time -f "build: %e s wall, %M KiB max RSS" \
  ./target/release/builder build --content "$WORK/review-content" --out "$WORK/review-dist"
echo "review queue: $(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['entries']))" "$WORK/review-dist/episodes/review.json") labels," \
  "episodes/review.json $(wc -c < "$WORK/review-dist/episodes/review.json") bytes"
if [ ! -f edge/build/worker/shim.mjs ]; then bash scripts/build.sh; fi
bash scripts/bench-reads.sh "$WORK/review-dist" "${1:-15s}" "review-page compare-page episode-page"
