#!/usr/bin/env bash
# How the voice match's thresholds were chosen (BENCHMARKS.md, "Voices"): recorded-speaker voices of
# Debian's festival (kal and ked, two American men; slt, an American woman), espeak-ng's variants, and
# kal's voice moved in pitch and speed with sox, each saying four different passages of about 15 s.
# Every passage is embedded with `builder embed-voice` (the encoder `builder identify` uses); a
# voiceprint is the mean of three of a voice's passages, matched with the voice's fourth passage (a
# known voice) and with every passage of every other voice (strangers). Prints the cosines the
# thresholds are chosen from. Synthetic voices are not podcast speech: see BENCHMARKS.md.
#
#   bash scripts/voice-thresholds.sh        (needs festival, its voices, espeak-ng and sox:
#                                            scripts/setup.sh --test installs them)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-tests/.work/voice-thresholds}
mkdir -p "$WORK"
cargo build --quiet --release -p builder

passages=(
  "When we started the project we had no idea how many people would read the transcripts. The first month was quiet. Then a newsroom wrote to us and asked whether we could find a quote in an old episode."
  "I think the hardest part of building a search engine is deciding what not to index. Every word you keep costs memory, and every word you drop is a question someone cannot ask."
  "My grandmother cooked without recipes. She measured flour with a teacup and salt with her palm, and when I asked her to write it down she laughed and said the bread would tell me."
  "The river was higher than anyone could remember, so the bridge was closed for a week. We walked the long way round, past the old mill and the school, and talked about everything except the flood."
)

# voice name → the command that reads text on stdin and writes a WAV to the file named by $out.
say() {
  local voice=$1 text=$2 out=$3
  case "$voice" in
    festival-*) echo "$text" | text2wave -eval "(voice_${voice#festival-})" -o "$out.raw.wav" ;;
    espeak-*) espeak-ng -v "${voice#espeak-}" -w "$out.raw.wav" "$text" ;;
    kal-pitch-down) say festival-kal_diphone "$text" "$out.src" && sox "$out.src.wav" "$out.raw.wav" pitch -200 && rm "$out.src.wav" ;;
    kal-faster) say festival-kal_diphone "$text" "$out.src" && sox "$out.src.wav" "$out.raw.wav" tempo 1.15 && rm "$out.src.wav" ;;
  esac
  sox "$out.raw.wav" -r 16000 -c 1 -b 16 "$out.wav" && rm "$out.raw.wav"
}

voices=(festival-kal_diphone festival-ked_diphone festival-cmu_us_slt_arctic_hts
  espeak-en espeak-en-us espeak-en-gb-x-rp espeak-en+f3 espeak-en-us+m3 espeak-en-gb-scotland
  kal-pitch-down kal-faster)

: > "$WORK/embeddings.jsonl"
for voice in "${voices[@]}"; do
  for idx in "${!passages[@]}"; do
    out="$WORK/$voice-$idx"
    [ -f "$out.wav" ] || say "$voice" "${passages[$idx]}" "$out"
    # The whole passage (as a label's speech), and two stretches of 3 s (as one cue of a transcript).
    for part in whole 0-3 4-7; do
      range=(); [ "$part" = whole ] || range=(--from "${part%-*}" --to "${part#*-}")
      ./target/release/builder embed-voice --audio "$out.wav" "${range[@]}" \
        | python3 -c 'import json,sys; a=json.load(sys.stdin); print(json.dumps({"voice": sys.argv[1], "passage": int(sys.argv[2]), "part": sys.argv[3], "seconds": a["seconds"], "embedding": a["embedding"]}))' "$voice" "$idx" "$part" \
        >> "$WORK/embeddings.jsonl"
    done
  done
done

python3 - "$WORK/embeddings.jsonl" <<'EOF'
import json, math, sys
every = [json.loads(line) for line in open(sys.argv[1])]
rows = [r for r in every if r["part"] == "whole"]
cues = [r for r in every if r["part"] != "whole"]
unit = lambda v: [x / math.sqrt(sum(y * y for y in v)) for x in v]
cos = lambda a, b: sum(x * y for x, y in zip(unit(a), unit(b)))
voices = sorted({r["voice"] for r in rows})
by = {v: [r["embedding"] for r in sorted((r for r in rows if r["voice"] == v), key=lambda r: r["passage"])] for v in voices}
print(f"{len(rows)} passages of {len(voices)} voices, {min(r['seconds'] for r in rows):.1f}-{max(r['seconds'] for r in rows):.1f} s each")
# Passage against passage.
same = [cos(a, b) for v in voices for i, a in enumerate(by[v]) for b in by[v][i + 1:]]
other = [(cos(a, b), v, w) for i, v in enumerate(voices) for w in voices[i + 1:] for a in by[v] for b in by[w]]
print(f"passage vs passage, same voice:      min {min(same):.3f}  mean {sum(same)/len(same):.3f}")
print(f"passage vs passage, different voice: max {max(c for c, _, _ in other):.3f}  mean {sum(c for c, _, _ in other)/len(other):.3f}")
closest = sorted(other, reverse=True)[:5]
print("closest different voices:", "; ".join(f"{v}~{w} {c:.3f}" for c, v, w in closest))
# Print (three passages) against the held-out passage, leaving each passage out in turn.
def mean(vs):
    return unit([sum(x) / len(vs) for x in zip(*vs)])
known, stranger, margins = [], [], []
for held in range(4):
    prints = {v: mean([e for i, e in enumerate(by[v]) if i != held]) for v in voices}
    for v in voices:
        scores = sorted(((cos(by[v][held], p), w) for w, p in prints.items()), reverse=True)
        own = next(c for c, w in scores if w == v)
        best_other = next(c for c, w in scores if w != v)
        known.append(own)
        margins.append(own - best_other)
        # The same passage as a stranger: every print but its own voice's.
        stranger.append(best_other)
print(f"print vs its own voice's held-out passage: min {min(known):.3f}  mean {sum(known)/len(known):.3f}")
print(f"print vs a stranger (best other print):    max {max(stranger):.3f}  mean {sum(stranger)/len(stranger):.3f}")
print(f"own voice's lead over the best other print: min {min(margins):.3f}")
for threshold in (0.70, 0.75, 0.80, 0.85, 0.90):
    kept = sum(c >= threshold for c in known) / len(known)
    wrong = sum(c >= threshold for c in stranger) / len(stranger)
    print(f"  min cosine {threshold:.2f}: known voices named {kept:6.1%}, strangers voted {wrong:6.1%}")
# Cue against cue (3 s each): what separating the voices of one transcript clusters.
same_cue = [cos(a["embedding"], b["embedding"]) for i, a in enumerate(cues) for b in cues[i + 1:] if a["voice"] == b["voice"]]
other_cue = [(cos(a["embedding"], b["embedding"]), a["voice"], b["voice"]) for i, a in enumerate(cues) for b in cues[i + 1:] if a["voice"] != b["voice"]]
print(f"cue vs cue (3 s), same voice:      min {min(same_cue):.3f}  5th percentile {sorted(same_cue)[len(same_cue)//20]:.3f}  mean {sum(same_cue)/len(same_cue):.3f}")
print(f"cue vs cue (3 s), different voice: max {max(c for c, _, _ in other_cue):.3f}  95th percentile {sorted(c for c, _, _ in other_cue)[len(other_cue)*19//20]:.3f}")
print("closest different cues:", "; ".join(f"{v}~{w} {c:.3f}" for c, v, w in sorted(other_cue, reverse=True)[:3]))
EOF
