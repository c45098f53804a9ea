#!/usr/bin/env python3
"""Draws the streaming layer's parts as docs/streaming-parts.svg: one band per part, in the
order in which they may include one another (a part includes only the bands below it), each
with its public headers (vtpage/streaming/<part>/) and its private files (engine/streaming/<part>/).
Usage: tools/draw_streaming_parts.py [repository root] [output svg]"""
import html
import pathlib
import sys

PARTS = [  # top to bottom: each may include the parts below it
    ("governor", "the frame-time governor"),
    ("feedback", "feedback to page requests, the feedback worker, request latency"),
    ("streamer", "the streamer and its parts, each owning its lock"),
    ("sources", "tile sources, the device fill context, texture sets, page requests"),
    ("io", "the file layer and the read queue (threads or io_uring)"),
    ("archive", "page archives: zstd pages, checksums, the formats' file helpers"),
    ("layout", "texture layouts, tile formats, the feedback entry, pinned pages"),
]


def stems(folder: pathlib.Path) -> list[str]:
    names = sorted({p.stem for p in folder.glob("*") if p.is_file()}) if folder.is_dir() else []
    return names


def wrap(words: list[str], width: int) -> list[str]:
    lines, line = [], ""
    for word in words:
        candidate = f"{line}  {word}" if line else word
        if len(candidate) > width and line:
            lines.append(line)
            line = word
        else:
            line = candidate
    return lines + ([line] if line else [])


def main() -> None:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out = pathlib.Path(sys.argv[2] if len(sys.argv) > 2 else root / "docs/streaming-parts.svg")
    width, left, y = 980, 20, 44
    body = []
    for name, what in PARTS:
        public = stems(root / "engine/include/vtpage/streaming" / name)
        private = [s for s in stems(root / "engine/streaming" / name) if s not in public]
        rows = [("public", line) for line in wrap(public, 100)]
        rows += [("private", line) for line in wrap(private, 100)]
        height = 30 + 16 * len(rows)
        body.append(f'<rect x="{left}" y="{y}" width="{width - 2 * left}" height="{height}" '
                    f'rx="6" fill="#eef3fb" stroke="#5b7db1"/>')
        body.append(f'<text x="{left + 10}" y="{y + 19}" font-weight="bold">{name}/</text>')
        body.append(f'<text x="{left + 110}" y="{y + 19}" fill="#444">{html.escape(what)}</text>')
        for i, (kind, line) in enumerate(rows):
            colour = "#1d4f91" if kind == "public" else "#666"
            body.append(f'<text x="{left + 24}" y="{y + 38 + 16 * i}" fill="{colour}" '
                        f'font-family="monospace" font-size="11">{html.escape(line)}</text>')
        y += height + 10
    header = ('<text x="20" y="24" font-size="15" font-weight="bold">engine/streaming: its parts, '
              'each including only the parts below it</text>'
              '<text x="600" y="24" font-size="11"><tspan fill="#1d4f91">blue: public headers'
              '</tspan>  <tspan fill="#666">grey: private files</tspan></text>')
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{y + 10}" '
           f'font-family="sans-serif" font-size="12"><rect width="100%" height="100%" '
           f'fill="white"/>{header}{"".join(body)}</svg>\n')
    out.write_text(svg)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
