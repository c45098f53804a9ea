#!/usr/bin/env python3
"""Checks the stored pages of a baked texture of format version 3 or 4 with Python's xxhash module,
independently of vtpage: each page's stored bytes hashed with XXH3-64 (seed 0) against the
page index, and the header, descriptor and index against the header's checksums.

    python3 tools/check_baked_pages.py texture.vtex            # every page
    python3 tools/check_baked_pages.py texture.vtex --page 7   # one page, its numbers printed

Exit status: 0 all match, 1 a mismatch, 2 not a file of version 3 or 4, 77 the xxhash module is missing
(Debian: python3-xxhash; pip: xxhash).
"""
import argparse
import struct
import sys

try:
    import xxhash
except ImportError:
    print("SKIP: the Python module xxhash is missing (Debian: python3-xxhash)", file=sys.stderr)
    sys.exit(77)

# PageArchiveHeader (128 bytes, little-endian): magic, version, header_bytes, page_count,
# page_bytes, tile_bytes, tiles_per_page, descriptor_offset, descriptor_bytes, index_offset,
# table_offset, data_offset, file_bytes, descriptor/index/table/header checksums, parts per page
# (version 4: a zstd page is that many zstd frames, one after the other; zero in version 3),
# reserved.
HEADER = struct.Struct("<8sIIQQIIQQQQQQQQQQI4s")
# PageIndexEntry (40 bytes): offset, stored_bytes, stored_checksum, page_bytes, encoding, reserved.
ENTRY = struct.Struct("<QQQQII")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--page", type=int, help="check this page only and print its numbers")
    args = parser.parse_args()
    with open(args.file, "rb") as f:
        data = f.read()
    (magic, version, _, page_count, _, _, _, descriptor_offset, descriptor_bytes, index_offset,
     _, _, _, descriptor_sum, index_sum, _, header_sum, parts, _) = HEADER.unpack_from(data, 0)
    if magic != b"VTPGPACK" or version not in (3, 4):
        print(f"{args.file}: not a baked texture of version 3 or 4 ({magic!r}, version {version})")
        return 2
    frames = parts if version == 4 else 1
    bad = 0
    header = bytearray(data[:HEADER.size])
    header[112:120] = bytes(8)  # header_checksum is computed with itself zero
    regions = [("header", bytes(header), header_sum),
               ("descriptor", data[descriptor_offset:descriptor_offset + descriptor_bytes],
                descriptor_sum),
               ("index", data[index_offset:index_offset + page_count * ENTRY.size], index_sum)]
    for name, region, stored in regions:
        if xxhash.xxh3_64_intdigest(region) != stored:
            print(f"{name}: checksum mismatch")
            bad += 1
    pages = range(page_count) if args.page is None else [args.page]
    for page in pages:
        offset, stored_bytes, stored_sum, _, encoding, _ = ENTRY.unpack_from(
            data, index_offset + page * ENTRY.size)
        computed = xxhash.xxh3_64_intdigest(data[offset:offset + stored_bytes])
        if args.page is not None:
            print(f"page {page}: offset {offset}, {stored_bytes} stored bytes "
                  f"({f'zstd, {frames} frames' if encoding else 'raw'}), index {stored_sum:016x}, "
                  f"XXH3 {computed:016x}")
        if computed != stored_sum:
            print(f"page {page}: stored bytes checksum mismatch")
            bad += 1
    print(f"{args.file}: {len(pages)} pages checked, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
