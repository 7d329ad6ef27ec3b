#!/usr/bin/env bash
# The editors' pages at corpus scale (BENCHMARKS.md, "Quotes"): the whole Changelog corpus (CC BY-SA
# 4.0, © Changelog Media LLC) as a site where nobody has reviewed a name yet. Each episode keeps its
# human-edited run and gains a machine run of its turns, some words and speakers changed (`asr-bench`,
# so two runs compare with differences), and
# each label's name is one source's vote instead of an editor's decision (so every label is
# `tentative` and in the review queue: about 6,600). Then, through `wrangler dev --local` on the
# production layout (scripts/bench-reads.sh), signed in as an editor: the review queue, two runs
# compared, and an episode page, as ratios to the no-IO request, with each page's weight; beside them a
# read of one D1 query (the recipe change feed, empty), the floor of any read that asks D1 as the sign-in does.
#   scripts/bench-review.sh [DURATION]      # DURATION of each kind's wrk run, default 15s
# Imports the corpus into tests/.work/corpus-content when scripts/bench-quotes.sh has not; about 5 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
WORK=tests/.work
cargo build --quiet --release -p builder
if [ ! -d "$WORK/corpus-content/shows" ]; then
  mkdir -p "$WORK/corpus" "$WORK/corpus-content"
  cp -r content/recipes "$WORK/corpus-content/"
  [ -d "$WORK/corpus/jsparty" ] || tar -xJf ../shared/corpora/changelog-transcripts.tar.xz -C "$WORK/corpus"
  ./target/release/builder import --format changelog-md --input "$WORK/corpus" --out "$WORK/corpus-content/shows" --created 2026-03-01
fi
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
    # A machine run differs from the edited one: a word misheard in every ninth turn, and every
    # thirteenth turn given to the next voice.
    voices = sorted({segment["speaker"] for segment in run["segments"]})
    for i, segment in enumerate(run["segments"]):
        words = segment["text"].split()
        if i % 9 == 4 and len(words) > 2:
            words[len(words) // 2] = "um"
            segment["text"] = " ".join(words)
            segment.pop("words", None)
        if i % 13 == 6 and len(voices) > 1:
            segment["speaker"] = voices[(voices.index(segment["speaker"]) + 1) % len(voices)]
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
echo "review queue: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total'])" "$WORK/review-dist/episodes/review.json") labels;" \
  "episodes/review.json $(wc -c < "$WORK/review-dist/episodes/review.json") bytes and $(find "$WORK/review-dist/episodes/review" -name '*.json' | wc -l) parts"
bash scripts/build.sh
bash scripts/bench-reads.sh "$WORK/review-dist" "${1:-15s}" "review-page d1-read compare-page episode-page"
