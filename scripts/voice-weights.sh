#!/usr/bin/env bash
# Fetches the speaker encoder's weights once (scripts/setup.sh and the content repo's sync workflow
# call it): nothing when they are cached already, and never an error — without them the voice source
# of `builder identify` abstains saying why.
#
#   bash scripts/voice-weights.sh
set -uo pipefail
cd "$(dirname "$0")/.."

# The speaker encoder's weights (`builder identify`'s voices, `builder embed-voice`): Resemblyzer 0.1.4's
# wheel from PyPI, checked by its SHA-256 (scripts/voice-model.py), the weights taken out as safetensors
# and cached; nothing is committed. Without them the voice source abstains saying why.
VOICE_WEIGHTS="${XDG_CACHE_HOME:-$HOME/.cache}/commonplace/voice/resemblyzer-ge2e-0.1.4.safetensors"
if [ ! -s "$VOICE_WEIGHTS" ]; then
  echo "==> fetching the speaker encoder's weights (Resemblyzer 0.1.4's wheel from PyPI, 16 MB, once)" >&2
  wheels=$(mktemp -d)
  if python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$wheels" 'resemblyzer==0.1.4' \
    && mkdir -p "$(dirname "$VOICE_WEIGHTS")" \
    && python3 scripts/voice-model.py "$wheels"/Resemblyzer-0.1.4-py3-none-any.whl "$VOICE_WEIGHTS.part" \
    && mv "$VOICE_WEIGHTS.part" "$VOICE_WEIGHTS"; then
    :
  else
    echo "==> the speaker encoder's weights could not be had: voices are not embedded until they are" >&2
  fi
  rm -rf "$wheels"
fi

