#!/usr/bin/env python3
"""Writes the search model in the form the hub uses it, for the package (issue 40).

The hub holds the model's two large parts in a reduced form, made when it loads the original file
(crates/capa-embed/src/bert.rs): the vocabulary's table (30,522 x 384, half the model, only ever
looked up) and the encoder's dense weights, in candle's Q8_0 blocks: each run of 32 values as one
f16 scale and 32 signed bytes. This writes them already reduced, by the same arithmetic (IEEE 754
f32 operations, rounding half to even to f16 as Rust's `half::f16::from_f32`, `f32::round` half
away from zero), so the hub loads the same numbers from a file a quarter of the size, and its
vectors are bit for bit those of the original file (crates/capa-embed/tests/model.rs checks it).
Each is stored as the raw blocks, a U8 tensor named `q8_0` beside the original's `weight`
(`embeddings.word_embeddings.q8_0` is [30522, 408]: 12 blocks of 34 bytes per row). Every other
tensor the hub reads stays f32 as it was; tensors it never reads (the pooler, `position_ids`)
are left out.

  scripts/model-pack.py SOURCE_DIR TARGET_DIR

SOURCE_DIR holds the original files (scripts/setup's models/all-MiniLM-L6-v2); TARGET_DIR gets
the same files with model.safetensors converted. Python's standard library only; the output
depends on the input alone (tensors in name order, no timestamps), so scripts/setup checks it
against a recorded sha256.
"""
import json
import shutil
import struct
import sys
from array import array
from pathlib import Path

# The tensors the hub does not read at all.
UNUSED = {"pooler.dense.weight", "pooler.dense.bias", "embeddings.position_ids"}
# The vocabulary's table.
WORDS = "embeddings.word_embeddings.weight"
# Values per Q8_0 block (candle's QK8_0), each block one f16 scale and 32 signed bytes.
BLOCK = 32


def is_dense_weight(name: str, shape: list) -> bool:
    """The encoder's dense (linear) weights."""
    return name.startswith("encoder.layer.") and name.endswith(".weight") and len(shape) == 2


def f32_values(values: list) -> array:
    """Each value (a Python float, f64) rounded to the nearest f32, ties to even, as a C cast."""
    return array("f", values)


def q8_0(values: array) -> bytes:
    """The Q8_0 blocks of `values` (f32, a multiple of BLOCK), as candle's `BlockQ8_0::from_float`
    computes them on x86: d = amax / 127 and id = 1 / d in f32, each byte `round(x * id)`.

    Every step is one f32 operation on f32 inputs: done in f64 and rounded once to f32, which
    gives the f32 result exactly (f64 carries more than twice f32's precision)."""
    n = len(values) // BLOCK
    amax = [max(abs(v) for v in values[i * BLOCK : (i + 1) * BLOCK]) for i in range(n)]
    d = f32_values([a / 127.0 for a in amax])
    inverse = f32_values([1.0 / x if x != 0.0 else 0.0 for x in d])
    products = f32_values([values[i] * inverse[i // BLOCK] for i in range(len(values))])
    # f32::round: half away from zero; `as i8` saturates (the products stay within +-127.0001).
    rounded = [int(p + 0.5) if p >= 0.0 else -int(-p + 0.5) for p in products]
    qs = array("b", [max(-128, min(127, r)) for r in rounded])
    out = bytearray()
    for i in range(n):
        out += struct.pack("<e", d[i])
        out += qs[i * BLOCK : (i + 1) * BLOCK].tobytes()
    return bytes(out)


def convert(source: Path, target: Path) -> None:
    data = source.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    body = memoryview(data)[8 + header_len :]
    out_header = {"__metadata__": {"format": "pt", "converted": "capabilities scripts/model-pack.py v3"}}
    chunks = []
    offset = 0
    for name in sorted(k for k in header if k != "__metadata__"):
        info = header[name]
        if name in UNUSED:
            continue
        start, end = info["data_offsets"]
        raw = body[start:end]
        shape = info["shape"]
        if (name == WORDS or is_dense_weight(name, shape)) and info["dtype"] == "F32" \
                and len(shape) == 2 and shape[1] % BLOCK == 0:
            values = array("f")
            values.frombytes(raw)
            if sys.byteorder != "little":
                values.byteswap()
            raw = q8_0(values)
            # `…weight` becomes `…q8_0`, where the hub looks for the blocks.
            name, dtype = name[: -len("weight")] + "q8_0", "U8"
            shape = [shape[0], shape[1] // BLOCK * (2 + BLOCK)]
        else:
            raw = bytes(raw)
            dtype = info["dtype"]
        out_header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    encoded = json.dumps(out_header, separators=(",", ":"), sort_keys=True).encode()
    # The format wants the data aligned: pad the header with spaces to a multiple of 8.
    encoded += b" " * (-len(encoded) % 8)
    with target.open("wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for chunk in chunks:
            f.write(chunk)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    target.mkdir(parents=True, exist_ok=True)
    for item in source.rglob("*"):
        relative = item.relative_to(source)
        if item.is_dir() or relative.name in ("model.safetensors", "SHA256SUMS"):
            continue
        (target / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(item, target / relative)
    convert(source / "model.safetensors", target / "model.safetensors")


if __name__ == "__main__":
    main()
