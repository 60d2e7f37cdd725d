"""Reference all-MiniLM-L6-v2 sentence embeddings in plain numpy, independent of candle.

The values printed here are the ones tests/minilm.rs checks the Rust encoder against.
Needs numpy, safetensors and tokenizers (not in the project venv; any scratch venv will do):
    python -m venv /tmp/ref && /tmp/ref/bin/pip install numpy safetensors tokenizers
    /tmp/ref/bin/python tests/data/minilm_reference.py MODEL_DIR
"""

import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

TEXTS = ["hello world", "list files in a folder"]


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):  # the exact (erf) GELU BERT uses
    from math import erf

    return 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))


def embed(w, ids):
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids]
    x = x + w["embeddings.position_embeddings.weight"][:n] + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    heads, hd = 12, 32
    for i in range(6):
        p = f"encoder.layer.{i}."
        lin = lambda name, v: v @ w[p + name + ".weight"].T + w[p + name + ".bias"]  # noqa: E731
        q = lin("attention.self.query", x).reshape(n, heads, hd).transpose(1, 0, 2)
        k = lin("attention.self.key", x).reshape(n, heads, hd).transpose(1, 0, 2)
        v = lin("attention.self.value", x).reshape(n, heads, hd).transpose(1, 0, 2)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(hd)
        s = np.exp(s - s.max(-1, keepdims=True))
        s = s / s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(1, 0, 2).reshape(n, heads * hd)
        x = layer_norm(lin("attention.output.dense", ctx) + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        h = gelu(lin("intermediate.dense", x))
        x = layer_norm(lin("output.dense", h) + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    v = x.mean(0)
    return v / np.linalg.norm(v)


def main():
    d = sys.argv[1]
    w = {k: v.astype(np.float64) for k, v in load_file(f"{d}/model.safetensors").items()}
    tok = Tokenizer.from_file(f"{d}/tokenizer.json")
    tok.no_padding()
    for t in TEXTS:
        ids = tok.encode(t).ids
        v = embed(w, ids)
        print(repr(t), ids, [round(float(x), 6) for x in v[:5]])


if __name__ == "__main__":
    main()
