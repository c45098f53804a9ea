#!/usr/bin/env python3
"""Writes the image bombs of the attack corpus (tests/attack/corpus) from what is committed:

  gif-bomb-65535.gif            62 bytes: a GIF whose screen and frame say 65535 x 65535 (a
                                loader that decodes whole frames would want 16 GiB)
  progressive-bomb-65500.jpg    progressive-16x12.jpg (a 16 x 12 progressive JPEG libvips wrote)
                                with its frame header patched to 65500 x 65500 (libjpeg keeps
                                the whole coefficient image of a progressive JPEG: 24 GiB)

Run it after changing either; the outputs are committed beside it."""
import pathlib
import struct

corpus = pathlib.Path(__file__).resolve().parent / "corpus"

# GIF89a, logical screen 65535 x 65535 without a colour table, one image of the same size with a
# 2-colour local table, LZW minimum code size 2, one sub-block of 29 bytes of codes (a clear code,
# a few pixels, then zeros), then the trailer: 62 bytes.
gif = (b"GIF89a" + struct.pack("<HHBBB", 65535, 65535, 0, 0, 0) +
       b"\x2c" + struct.pack("<HHHHB", 0, 0, 65535, 65535, 0x80) + b"\x00\x00\x00\xff\xff\xff" +
       b"\x02\x1d\x8c\x2d\x99\x87\x2a\x1c\xdc\x33\xa0\x02\x75\xec\x95\xfa\xa8\xde\x60\x8c\x04\x91" +
       b"\x4c\x01" + bytes(7) + b"\x00\x3b")
assert len(gif) == 62
(corpus / "gif-bomb-65535.gif").write_bytes(gif)

jpeg = bytearray((corpus / "progressive-16x12.jpg").read_bytes())
at = 2
while True:
    assert jpeg[at] == 0xFF, "not a marker"
    marker = jpeg[at + 1]
    length = struct.unpack(">H", jpeg[at + 2:at + 4])[0]
    if marker == 0xC2:  # SOF2: length, precision, height, width
        jpeg[at + 5:at + 9] = struct.pack(">HH", 65500, 65500)
        break
    at += 2 + length
(corpus / "progressive-bomb-65500.jpg").write_bytes(bytes(jpeg))
print("wrote", len(gif), "and", len(jpeg), "bytes")
