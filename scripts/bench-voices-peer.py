"""The peer of `scripts/bench-voices.sh`: the Python package Resemblyzer (with PyTorch, on one thread)
doing what `builder identify` does on the same hour-long MP3 — decode and resample with librosa, then
`embed_utterance(preprocess_wav(...))` of each label's longest minute (labelled) or of the middle 3.2 s
of every turn (separating). Prints CPU seconds and peak memory, as the Rust side is printed.

    PEER_PYTHON=/path/to/python bash scripts/bench-voices.sh
    (a Python with `resemblyzer==0.1.4`, torch and librosa installed; not part of the test command)
"""

import json
import resource
import sys
import time

import librosa
import torch
from resemblyzer import VoiceEncoder, preprocess_wav

torch.set_num_threads(1)
work, case = sys.argv[1], sys.argv[2]
start = time.process_time()
wav, _ = librosa.load(f"{work}/hour.mp3", sr=16000, mono=True)
decoded = time.process_time() - start
segments = json.load(open(f"{work}/{case}/shows/bench/hour/runs/svc.json"))["segments"]
encoder = VoiceEncoder("cpu", verbose=False)
cut = lambda a, b: wav[int(a * 16000) : int(b * 16000)]
if case == "labelled":
    stretches = []
    for label in sorted({s["speaker"] for s in segments}):
        turns = sorted(
            ((s["start_s"], s["end_s"]) for s in segments if s["speaker"] == label and s["end_s"] - s["start_s"] >= 1.5),
            key=lambda t: t[0] - t[1],
        )
        taken, total = [], 0.0
        for a, b in turns:
            if total >= 60:
                break
            b = min(b, a + 60 - total)
            taken.append(cut(a, b))
            total += b - a
        stretches.append(__import__("numpy").concatenate(taken))
else:
    stretches = []
    for s in segments:
        if s["end_s"] - s["start_s"] >= 1.0:
            middle = (s["start_s"] + s["end_s"]) / 2
            stretches.append(cut(max(s["start_s"], middle - 1.6), min(s["end_s"], middle + 1.6)))
begin = time.process_time()
for stretch in stretches:
    encoder.embed_utterance(preprocess_wav(stretch))
encoded = time.process_time() - begin
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(
    f"{case:<11} CPU {decoded + encoded:6.1f} s  (decode {decoded:.1f}, embed {encoded:.1f}; "
    f"{len(stretches)} stretches)  peak memory {peak:5.0f} MB   Resemblyzer 0.1.4 + torch {torch.__version__}, one thread"
)
