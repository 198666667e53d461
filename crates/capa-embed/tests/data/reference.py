"""Writes reference.json: all-MiniLM-L6-v2 embeddings computed independently of the Rust code.

A plain NumPy forward pass of the BERT encoder (float64) over the weights in model.safetensors,
with the Python `tokenizers` package, mean pooling and normalisation as sentence-transformers
does. The Rust test (tests/reference.rs) asks for a cosine similarity of at least 0.9999 with
these vectors. Run with numpy and tokenizers installed:

    python reference.py "$CAPA_MODEL_DIR" > reference.json
"""

import json
import struct
import sys
from math import erf, sqrt

import numpy as np
from tokenizers import Tokenizer

SENTENCES = [
    "List the collaborators of a repository",
    "who else can push to this repo",
    "github.create_issue Create an issue owner repo title body labels",
    "Deletes a tag from an image in the container registry; the tag's manifest stays if other tags point at it.",
    "",
]


def load_weights(path):
    with open(path, "rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
        data = f.read()
    weights = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        weights[name] = np.frombuffer(data[start:end], dtype="<f4").reshape(info["shape"]).astype(np.float64)
    return weights


def layer_norm(x, w, b, eps=1e-12):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


gelu = np.vectorize(lambda v: 0.5 * v * (1.0 + erf(v / sqrt(2.0))))


def embed(weights, ids):
    w = weights
    n = len(ids)
    x = w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:n]
    x = x + w["embeddings.token_type_embeddings.weight"][0]
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
    for i in range(6):
        p = f"encoder.layer.{i}."
        lin = lambda t, name: t @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        q, k, v = (lin(x, f"attention.self.{m}").reshape(n, 12, 32).transpose(1, 0, 2) for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / sqrt(32)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        context = (probs @ v).transpose(1, 0, 2).reshape(n, 384)
        x = layer_norm(lin(context, "attention.output.dense") + x, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"])
        inner = gelu(lin(x, "intermediate.dense"))
        x = layer_norm(lin(inner, "output.dense") + x, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"])
    mean = x.mean(0)
    return mean / np.linalg.norm(mean)


def main():
    model_dir = sys.argv[1]
    weights = load_weights(f"{model_dir}/model.safetensors")
    tokenizer = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tokenizer.no_padding()
    tokenizer.enable_truncation(256)
    out = []
    for sentence in SENTENCES:
        ids = tokenizer.encode(sentence).ids
        out.append({"text": sentence, "tokens": len(ids), "vector": [round(float(v), 7) for v in embed(weights, ids)]})
    json.dump(out, sys.stdout, indent=None)
    sys.stdout.write("\n")


main()
