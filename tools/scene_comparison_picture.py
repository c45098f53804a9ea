#!/usr/bin/env python3
"""Puts a scene drawn through vtpage beside the same scene drawn through ordinary sampled images
(vtpage-viewer --reference-textures) and their difference, scaled up so that it can be seen,
in one PNG; prints the PSNR and the largest error over the pixels the scene covers.

    tools/scene_comparison_picture.py vtpage.png reference.png out.png [--scale 16]

Standard library only: 8-bit RGB or RGBA PNGs, not interlaced (what the viewer writes)."""
import argparse
import math
import struct
import sys
import zlib

SKY = (115, 153, 204)  # the viewer's clear colour (0.45, 0.6, 0.8) as stored


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            if depth != 8 or colour not in (2, 6) or body[12] != 0:
                sys.exit(f"{path}: only 8-bit RGB or RGBA, not interlaced")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b, c = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return rows


def write_png(path, rows):
    height, width = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(v for pixel in row for v in pixel) for row in rows)
    chunk = lambda kind, body: (struct.pack(">I", len(body)) + kind + body +
                                struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n")
        out.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        out.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        out.write(chunk(b"IEND", b""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vtpage")
    parser.add_argument("reference")
    parser.add_argument("out")
    parser.add_argument("--scale", type=int, default=16, help="difference shown times this")
    args = parser.parse_args()
    a, b = read_png(args.vtpage), read_png(args.reference)
    if len(a) != len(b) or len(a[0]) != len(b[0]):
        sys.exit("the two images differ in size")
    squared, samples, largest, covered = 0, 0, 0, 0
    difference = []
    for row_a, row_b in zip(a, b):
        row = []
        for pa, pb in zip(row_a, row_b):
            d = [abs(x - y) for x, y in zip(pa, pb)]
            if pa != SKY or pb != SKY:
                covered += 1
                squared += sum(v * v for v in d)
                samples += 3
                largest = max(largest, max(d))
            row.append(tuple(min(255, v * args.scale) for v in d))
        difference.append(row)
    gap = [(255, 255, 255)] * 8
    write_png(args.out, [ra + gap + rb + gap + rd for ra, rb, rd in zip(a, b, difference)])
    psnr = 10 * math.log10(255 ** 2 / (squared / samples)) if squared else math.inf
    print(f"{args.out}: scene covers {100 * covered / (len(a) * len(a[0])):.1f} % of the image; "
          f"PSNR {psnr:.2f} dB, largest error {largest}/255 (difference shown x{args.scale})")


if __name__ == "__main__":
    main()
