#!/usr/bin/env bash
# The speaker encoder on an hour of audio (BENCHMARKS.md, "Voices"): an hour-long MP3 (44.1 kHz
# stereo, 128 kbit/s, as podcasts are published) of two festival voices taking turns, served from
# loopback, heard by `builder identify` through its real path (fetch, decode, resample, features,
# encoder). Two cases, each its own content folder:
#   labelled   — a run whose labels say who speaks: each label's longest clean minute is embedded;
#   separating — a publisher's transcript with every turn under one label: every turn of the hour is
#                embedded and the voices grouped (the most work identify ever does on one episode).
# Prints CPU seconds (user + system) and peak memory of each `builder identify`; with PEER_PYTHON (a
# Python with resemblyzer 0.1.4, torch and librosa), the same for the Python package beside it.
#
#   bash scripts/bench-voices.sh     (needs festival, espeak-ng, sox and lame: scripts/setup.sh --test
#                                     installs all but lame, `apt-get install lame`)
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-tests/.work/bench-voices}
mkdir -p "$WORK"
cargo build --quiet --release -p builder
command -v lame >/dev/null || { echo "lame is needed to make the MP3: apt-get install lame" >&2; exit 1; }

passages=(
  "When we started the project we had no idea how many people would read the transcripts. The first month was quiet, and then a newsroom wrote to us."
  "I think the hardest part of building a search engine is deciding what not to index. Every word you keep costs memory."
  "My grandmother cooked without recipes. She measured flour with a teacup and salt with her palm, and the bread told her the rest."
  "The river was higher than anyone could remember, so the bridge was closed for a week and we walked the long way round."
  "Thank you for having me. I have listened to this show for years, and I never thought I would be sitting on this side of the microphone."
  "We should talk about what happens when the build fails halfway. Nobody wants to wake up to a site that serves half of yesterday."
)
for idx in "${!passages[@]}"; do
  for voice in kal_diphone cmu_us_slt_arctic_hts; do
    out="$WORK/$voice-$idx.wav"
    [ -f "$out" ] || { echo "${passages[$idx]}" | text2wave -eval "(voice_$voice)" -o "$out.raw.wav" \
      && sox "$out.raw.wav" -r 44100 -c 2 -b 16 "$out" && rm "$out.raw.wav"; }
  done
done

# An hour of turns, alternating voices, and the two runs that describe it.
python3 - "$WORK" <<'EOF'
import json, os, sys, wave
work = sys.argv[1]
parts = [(v, i) for i in range(6) for v in ("kal_diphone", "cmu_us_slt_arctic_hts")]
frames, labelled, unknown, t, k = [], [], [], 0.0, 0
gap = b"\0" * (44100 * 4 // 2)  # half a second of stereo silence
while t < 3600:
    voice, idx = parts[k % len(parts)]
    with wave.open(f"{work}/{voice}-{idx}.wav") as w:
        data = w.readframes(w.getnframes())
    seconds = len(data) / (44100 * 4)
    label = "A" if voice == "kal_diphone" else "B"
    for run, speaker in ((labelled, label), (unknown, "UNKNOWN")):
        run.append({"speaker": speaker, "start_s": round(t, 3), "end_s": round(t + seconds, 3), "text": f"Turn {k}."})
    frames += [data, gap]
    t += seconds + 0.5
    k += 1
with wave.open(f"{work}/hour.wav", "wb") as w:
    w.setnchannels(2); w.setsampwidth(2); w.setframerate(44100)
    w.writeframes(b"".join(frames))
for case, segments in (("labelled", labelled), ("separating", unknown)):
    folder = f"{work}/{case}/shows/bench/hour"
    os.makedirs(f"{folder}/runs", exist_ok=True)
    json.dump({"title": "Bench", "licence": "CC0-1.0"}, open(f"{work}/{case}/shows/bench/show.json", "w"))
    json.dump({"pipeline": "svc", "kind": "asr", "created": "2026-01-01", "imported_from": "webvtt",
               "segments": segments}, open(f"{folder}/runs/svc.json", "w"))
print(f"{t / 60:.1f} minutes, {k} turns")
EOF
[ -f "$WORK/hour.mp3" ] || lame --quiet -b 128 "$WORK/hour.wav" "$WORK/hour.mp3"
rm -f "$WORK/hour.wav"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$WORK" >/dev/null 2>&1 &
server=$!
trap 'kill $server' EXIT
sleep 1
for case in labelled separating; do
  for episode in "$WORK/$case/shows/bench/hour"; do
    python3 - "$episode/episode.json" "http://127.0.0.1:$port/hour.mp3" <<'EOF'
import json, sys
json.dump({"title": "An hour", "source_url": "https://example.com/bench/hour", "published": "2026-01-01",
           "audio_url": sys.argv[2]}, open(sys.argv[1], "w"))
EOF
    rm -f "$episode/names.json" "$episode/runs/svc+voices.json"
    python3 -c 'import json,sys; p=sys.argv[1]; r=json.load(open(p)); r.pop("speaker_embeddings", None); json.dump(r, open(p, "w"))' "$episode/runs/svc.json"
  done
  python3 - "$case" "$WORK/$case" "$port" <<'EOF'
import os, resource, subprocess, sys, time
case, content, port = sys.argv[1:]
env = dict(os.environ, ENVIRONMENT="dev", FETCH_ALLOW_LOOPBACK=f"127.0.0.1:{port}")
start = time.monotonic()
done = subprocess.run(["./target/release/builder", "identify", "--content", content, "--all"], env=env,
                      capture_output=True, text=True)
wall = time.monotonic() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
report = [line.strip() for line in done.stderr.splitlines() if "voices:" in line]
print(f"{case:<11} CPU {usage.ru_utime + usage.ru_stime:6.1f} s  wall {wall:6.1f} s  peak memory {usage.ru_maxrss / 1024:5.0f} MB")
for line in report:
    print("   ", line[:150])
EOF
done

# The peer, side by side: the Python package on the same file and stretches.
if [ -n "${PEER_PYTHON:-}" ]; then
  echo "== peer: Resemblyzer in Python"
  for case in labelled separating; do
    "$PEER_PYTHON" scripts/bench-voices-peer.py "$WORK" "$case"
  done
fi
