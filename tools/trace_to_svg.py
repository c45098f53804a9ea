#!/usr/bin/env python3
"""Turns a Chrome/Perfetto JSON trace (vtpage's TraceRecorder, vtpage-viewer --trace) into an SVG
timeline, one lane per thread, and prints a table of stage durations (p50 / p99 per stage and
thread) and of each page's waits between stages. Python standard library only.

    tools/trace_to_svg.py trace.json -o timeline.svg
    tools/trace_to_svg.py trace.json --summary-only
    tools/trace_to_svg.py trace.json -o part.svg --from-ms 120 --to-ms 180
"""

import argparse
import html
import json
import math
import sys
from collections import defaultdict

# A stored page's stages in pipeline order (docs/trace.md).
PAGE_STAGES = ["request", "commit", "read", "decode", "fill", "ready", "visible"]
COLOURS = {
    "request": "#4e79a7",
    "commit": "#f28e2b",
    "read": "#59a14f",
    "decode": "#e15759",
    "fill": "#6a3d9a",
    "ready": "#76b7b2",
    "visible": "#edc948",
    "render": "#9c755f",
    "feedback": "#bab0ac",
    "commit batch": "#ffbe7d",
    "evict batch": "#d4a6c8",
    "pool acquire": "#a0cbe8",
    "pool release": "#86bcb6",
    "map": "#8cd17d",
    "decommit": "#ff9da7",
}
FALLBACK = ["#86bcb6", "#ff9da7", "#8cd17d", "#d4a6c8", "#fabfd2", "#a0cbe8", "#ffbe7d"]


def colour_of(name):
    if name in COLOURS:
        return COLOURS[name]
    return FALLBACK[sum(map(ord, name)) % len(FALLBACK)]


def percentile(values, fraction):
    """The nearest-rank percentile of a non-empty list."""
    ordered = sorted(values)
    rank = max(0, math.ceil(fraction * len(ordered)) - 1)
    return ordered[rank]


def load(path):
    with open(path, encoding="utf-8") as file:
        trace = json.load(file)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names = {}
    timed = []
    for event in events:
        if event.get("ph") == "M":
            if event.get("name") == "thread_name":
                names[event["tid"]] = event["args"]["name"]
            continue
        if event.get("ph") in ("X", "i", "I"):
            timed.append(event)
    return names, timed, trace.get("otherData", {}) if isinstance(trace, dict) else {}


def thread_name(names, tid):
    return names.get(tid, "thread %s" % tid)


def stage_table(names, events):
    """p50 / p99 / max of each complete event's duration, by thread and name (milliseconds)."""
    durations = defaultdict(list)
    for event in events:
        if event["ph"] == "X":
            durations[(thread_name(names, event["tid"]), event["name"])].append(
                event.get("dur", 0.0) / 1000.0)
    rows = []
    for (thread, name), values in sorted(durations.items()):
        rows.append((thread, name, len(values), percentile(values, 0.5), percentile(values, 0.99),
                     max(values)))
    return rows


def page_waits(events):
    """Per page, the first time it reached each stage; then the waits between stages (ms)."""
    first = defaultdict(dict)
    for event in events:
        page = event.get("args", {}).get("page")
        if page is None or event.get("cat") != "page" or event["name"] not in PAGE_STAGES:
            continue
        stages = first[page]
        stages[event["name"]] = min(stages.get(event["name"], math.inf), event["ts"])
    waits = defaultdict(list)
    for stages in first.values():
        present = [stage for stage in PAGE_STAGES if stage in stages]
        for before, after in zip(present, present[1:]):
            waits[(before, after)].append((stages[after] - stages[before]) / 1000.0)
        if "request" in stages and "visible" in stages:
            waits[("request", "visible")].append(
                (stages["visible"] - stages["request"]) / 1000.0)
    return len(first), waits


def print_summary(names, events, other, out):
    rows = stage_table(names, events)
    out.write("%-28s %-22s %8s %10s %10s %10s\n" %
              ("thread", "stage", "count", "p50 ms", "p99 ms", "max ms"))
    for thread, name, count, p50, p99, most in rows:
        out.write("%-28s %-22s %8d %10.3f %10.3f %10.3f\n" % (thread, name, count, p50, p99, most))
    pages, waits = page_waits(events)
    if pages:
        out.write("\n%d pages; from stage to stage (first time each):\n" % pages)
        out.write("%-22s %8s %10s %10s %10s\n" % ("wait", "pages", "p50 ms", "p99 ms", "max ms"))
        order = {stage: i for i, stage in enumerate(PAGE_STAGES)}
        for (before, after), values in sorted(
                waits.items(), key=lambda item: (order[item[0][0]], -order[item[0][1]])):
            out.write("%-22s %8d %10.3f %10.3f %10.3f\n" %
                      ("%s -> %s" % (before, after), len(values), percentile(values, 0.5),
                       percentile(values, 0.99), max(values)))
    if other.get("dropped") or other.get("dropped_threads"):
        out.write("\nthe recorder dropped %s events (full rings) and %s (threads beyond its "
                  "limit)\n" % (other.get("dropped", 0), other.get("dropped_threads", 0)))


def lanes_of(names, events):
    """Each thread's lane: its complete events stacked by nesting depth."""
    by_thread = defaultdict(list)
    for event in events:
        by_thread[event["tid"]].append(event)
    lanes = []
    for tid, thread_events in by_thread.items():
        # The pages of a batch share one span (a commit of 64 pages): drawn once.
        merged = {}
        for event in (e for e in thread_events if e["ph"] == "X"):
            key = (event["name"], event["ts"], event.get("dur", 0.0))
            page = event.get("args", {}).get("page")
            if key not in merged:
                merged[key] = dict(event, pages=[])
            if page is not None:
                merged[key]["pages"].append(page)
        complete = sorted(merged.values(), key=lambda e: (e["ts"], -e.get("dur", 0.0)))
        ends = []  # the end of the open event at each depth
        placed = []
        for event in complete:
            end = event["ts"] + event.get("dur", 0.0)
            depth = 0
            while depth < len(ends) and ends[depth] > event["ts"]:
                depth += 1
            if depth == len(ends):
                ends.append(end)
            else:
                ends[depth] = end
                del ends[depth + 1:]
            placed.append((depth, event))
        instants = [e for e in thread_events if e["ph"] != "X" and e.get("s") != "g"]
        lanes.append((thread_name(names, tid), max(1, len(ends)), placed, instants))
    lanes.sort(key=lambda lane: lane[0])
    return lanes


def write_svg(names, events, path, width, start_ms, end_ms, title):
    if start_ms is not None or end_ms is not None:
        low = (start_ms or 0.0) * 1000.0
        high = end_ms * 1000.0 if end_ms is not None else math.inf
        events = [e for e in events if e["ts"] + e.get("dur", 0.0) >= low and e["ts"] <= high]
    if not events:
        raise SystemExit("trace_to_svg: no events to draw")
    begin = min(e["ts"] for e in events)
    finish = max(e["ts"] + e.get("dur", 0.0) for e in events)
    if start_ms is not None:
        begin = max(begin, start_ms * 1000.0)
    if end_ms is not None:
        finish = min(finish, end_ms * 1000.0)
    span = max(finish - begin, 1.0)
    label_width, row, top, axis = 190, 12, 46, 24
    plot = width - label_width - 10

    def x_of(ts):
        return label_width + (min(max(ts, begin), finish) - begin) / span * plot

    lanes = lanes_of(names, events)
    height = top + sum(depth * row + 10 for _, depth, _, _ in lanes) + axis + 30
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
             'font-family="sans-serif" font-size="11">' % (width, height),
             '<rect width="100%" height="100%" fill="white"/>',
             '<text x="10" y="18" font-size="14" font-weight="bold">%s</text>' %
             html.escape(title)]
    legend_x = 10
    drawn = {e["name"] for e in events}
    extra = [name for name in COLOURS if name not in PAGE_STAGES and name in drawn]
    for stage in PAGE_STAGES + extra:
        parts.append('<rect x="%d" y="28" width="10" height="10" fill="%s"/>' %
                     (legend_x, colour_of(stage)))
        parts.append('<text x="%d" y="37">%s</text>' % (legend_x + 13, stage))
        legend_x += 20 + 7 * len(stage)
    y = top
    for name, depth, placed, instants in lanes:
        lane_height = depth * row + 6
        parts.append('<rect x="%d" y="%d" width="%d" height="%d" fill="#f6f6f6"/>' %
                     (label_width, y, plot, lane_height))
        parts.append('<text x="6" y="%d">%s</text>' % (y + 12, html.escape(name)))
        for level, event in placed:
            x = x_of(event["ts"])
            w = max(x_of(event["ts"] + event.get("dur", 0.0)) - x, 0.6)
            pages = event["pages"]
            tip = "%s %.3f ms%s" % (event["name"], event.get("dur", 0.0) / 1000.0,
                                    " page%s %s" % ("s" if len(pages) > 1 else "",
                                                    " ".join(map(str, pages[:16])))
                                    if pages else "")
            parts.append('<rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s">'
                         '<title>%s</title></rect>' %
                         (x, y + 3 + level * row, w, row - 2, colour_of(event["name"]),
                          html.escape(tip)))
        for event in instants:
            x = x_of(event["ts"])
            parts.append('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="%s" stroke-width="1.5">'
                         '<title>%s</title></line>' %
                         (x, y + 1, x, y + lane_height - 1, colour_of(event["name"]),
                          html.escape(event["name"])))
        y += lane_height + 4
    for event in events:  # frame starts across every lane
        if event.get("s") == "g" and event["name"] == "begin_frame":
            x = x_of(event["ts"])
            parts.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#555555" '
                         'stroke-opacity="0.35" stroke-dasharray="2,2"/>' % (x, top, x, y))
    # The time axis, in milliseconds from the first event drawn.
    ticks = 8
    for i in range(ticks + 1):
        ts = begin + span * i / ticks
        x = x_of(ts)
        parts.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#888888"/>' %
                     (x, y + 2, x, y + 7))
        parts.append('<text x="%.1f" y="%d" text-anchor="middle">%.1f ms</text>' %
                     (x, y + 19, ts / 1000.0))
    parts.append("</svg>")
    with open(path, "w", encoding="utf-8") as file:
        file.write("\n".join(parts) + "\n")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", help="a Chrome/Perfetto JSON trace")
    parser.add_argument("-o", "--output", help="the SVG to write")
    parser.add_argument("--width", type=int, default=1400, help="the SVG's width in pixels")
    parser.add_argument("--from-ms", type=float, help="draw from this time (ms) on")
    parser.add_argument("--to-ms", type=float, help="draw up to this time (ms)")
    parser.add_argument("--title", default="vtpage trace", help="the picture's title")
    parser.add_argument("--summary-only", action="store_true", help="print the tables only")
    args = parser.parse_args(argv)
    names, events, other = load(args.trace)
    print_summary(names, events, other, sys.stdout)
    if args.summary_only:
        return 0
    if not args.output:
        parser.error("-o/--output is needed (or --summary-only)")
    write_svg(names, events, args.output, args.width, args.from_ms, args.to_ms, args.title)
    print("wrote %s" % args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
