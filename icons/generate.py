#!/usr/bin/env python3
"""Writes the app and tray icons as PNGs with the standard library only (zlib + struct).

The app icon is a rounded square with a white "C"; the tray icons are the same shape in three
colours: idle (blue), pending approvals (amber) and a source error (red); with approvals paused
(every call that asks is denied) the tray shows a grey square with the pause sign.
Run from anywhere: python3 icons/generate.py
"""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

BLUE = (37, 99, 235)
AMBER = (217, 119, 6)
RED = (220, 38, 38)
GREY = (100, 116, 139)
WHITE = (255, 255, 255)


def mark(u, v, shape):
    """Whether (u, v) of the unit square is white: the "C" ring, or the pause sign's two bars."""
    if shape == "pause":
        return 0.28 <= v <= 0.72 and (0.3 <= u <= 0.43 or 0.57 <= u <= 0.7)
    cu, cv = u - 0.5, v - 0.5
    d = math.hypot(cu, cv)
    angle = math.degrees(math.atan2(cv, cu))
    return 0.2 <= d <= 0.32 and abs(angle) > 45


def coverage(x, y, size, colour, shape="c"):
    """RGBA of pixel (x, y): a rounded square with a ring open to the right (a "C"), or with the
    pause sign."""
    # Work in a unit square with 4x4 supersampling for smooth edges.
    samples = 4
    bg = 0
    fg = 0
    for sy in range(samples):
        for sx in range(samples):
            u = (x + (sx + 0.5) / samples) / size
            v = (y + (sy + 0.5) / samples) / size
            r = 0.2  # corner radius
            du = max(r - u, 0, u - (1 - r))
            dv = max(r - v, 0, v - (1 - r))
            if du * du + dv * dv > r * r:
                continue
            bg += 1
            if mark(u, v, shape):
                fg += 1
    total = samples * samples
    if bg == 0:
        return (0, 0, 0, 0)
    a = bg / total
    f = fg / bg
    rgb = tuple(round(c * (1 - f) + w * f) for c, w in zip(colour, WHITE))
    return rgb + (round(a * 255),)


def png(path, size, colour, shape="c"):
    rows = []
    for y in range(size):
        row = bytearray([0])
        for x in range(size):
            row.extend(coverage(x, y, size, colour, shape))
        rows.append(bytes(row))
    raw = b"".join(rows)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", header))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def main():
    png(os.path.join(HERE, "32x32.png"), 32, BLUE)
    png(os.path.join(HERE, "128x128.png"), 128, BLUE)
    png(os.path.join(HERE, "128x128@2x.png"), 256, BLUE)
    png(os.path.join(HERE, "icon.png"), 512, BLUE)
    png(os.path.join(HERE, "tray-idle.png"), 64, BLUE)
    png(os.path.join(HERE, "tray-pending.png"), 64, AMBER)
    png(os.path.join(HERE, "tray-error.png"), 64, RED)
    png(os.path.join(HERE, "tray-paused.png"), 64, GREY, "pause")


if __name__ == "__main__":
    main()
