#!/usr/bin/env python3
"""Writes the search model in the form the hub uses it, for the package (issue 40).

The hub holds the encoder's dense weights in f16 (crates/capa-embed/src/bert.rs, `Dense`): it
reads them as f32 and rounds each to f16 when it loads. This writes them already rounded, the
same way (IEEE 754 round-half-to-even, as Rust's `half::f16::from_f32`), so the hub loads the
same numbers from a smaller file and its vectors are bit for bit those of the original file
(crates/capa-embed/tests/model.rs checks it). Every other tensor the hub reads stays f32 as it
was (the vocabulary table is quantised to 8 bits from f32 at load, and rounding it to f16 first
would change it); tensors the hub never reads (the pooler, `position_ids`) are left out.

  scripts/model-f16.py SOURCE_DIR TARGET_DIR

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


def is_dense_weight(name: str, shape: list) -> bool:
    """The encoder's dense (linear) weights: what the hub keeps in f16."""
    return name.startswith("encoder.layer.") and name.endswith(".weight") and len(shape) == 2


def convert(source: Path, target: Path) -> None:
    data = source.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + header_len])
    body = memoryview(data)[8 + header_len :]
    out_header = {"__metadata__": {"format": "pt", "converted": "capabilities scripts/model-f16.py v1"}}
    chunks = []
    offset = 0
    for name in sorted(k for k in header if k != "__metadata__"):
        info = header[name]
        if name in UNUSED:
            continue
        start, end = info["data_offsets"]
        raw = body[start:end]
        if info["dtype"] == "F32" and is_dense_weight(name, info["shape"]):
            values = array("f")
            values.frombytes(raw)
            if sys.byteorder != "little":
                values.byteswap()
            raw = struct.pack(f"<{len(values)}e", *values)
            dtype = "F16"
        else:
            raw = bytes(raw)
            dtype = info["dtype"]
        out_header[name] = {"dtype": dtype, "shape": info["shape"], "data_offsets": [offset, offset + len(raw)]}
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
