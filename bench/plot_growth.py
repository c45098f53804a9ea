#!/usr/bin/env python3
"""Plots the JSON of vtpage-bench-growable-buffer (--json): time against buffer size, log scales.

One column per schedule (doubling, fixed steps); the top row is the time of each step, the
bottom row the time spent since the start. Needs matplotlib (Debian: python3-matplotlib).

    build/bench/vtpage-bench-growable-buffer --json growth.json
    python3 bench/plot_growth.py growth.json -o docs/growable_buffer_growth.png
"""

import argparse
import json
import sys

MARKERS = {"a": "o", "b": "s", "c": "^", "d": "D", "e": "v"}


def size_text(value, _position=None):
    """2 MiB, 256 MiB, 16 GiB: tick labels for sizes in bytes."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            number = value / scale
            return f"{number:.0f} {unit}" if number >= 10 or number.is_integer() else \
                f"{number:.1f} {unit}"
    return f"{value:.0f} B"


def load(path):
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, json.JSONDecodeError) as error:
        sys.exit(f"plot_growth: cannot read {path}: {error}")
    if data.get("benchmark") != "growable_buffer" or not data.get("runs"):
        sys.exit(f"plot_growth: {path} is not the JSON of vtpage-bench-growable-buffer")
    return data


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="the benchmark's --json output")
    parser.add_argument("-o", "--output", help="the PNG to write (default: the JSON's name, .png)")
    parser.add_argument("--dpi", type=int, default=120)
    args = parser.parse_args()
    data = load(args.json)
    output = args.output or (args.json.rsplit(".", 1)[0] + ".png")

    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_growth: needs matplotlib (Debian: apt-get install python3-matplotlib)")

    schedules = []
    for run in data["runs"]:
        if run["schedule"] not in schedules:
            schedules.append(run["schedule"])
    figure, axes = plt.subplots(2, len(schedules), figsize=(6.5 * len(schedules), 9),
                                squeeze=False)
    from matplotlib.ticker import FuncFormatter, LogLocator
    for column, schedule in enumerate(schedules):
        step_axis, total_axis = axes[0][column], axes[1][column]
        title = schedule
        for run in (r for r in data["runs"] if r["schedule"] == schedule):
            title = run.get("schedule_title", schedule)
            steps = run["steps"]
            if not steps:
                continue
            sizes = [step["bytes"] for step in steps]
            times = [max(step["ms"], 1e-4) for step in steps]  # log scale: no zeros
            totals = []
            running = 0.0
            for ms in times:
                running += ms
                totals.append(running)
            label = f"({run['method']}) {run['name']}"
            if not run.get("complete", True):
                label += " (stopped: out of memory)"
            marker = MARKERS.get(run["method"], ".")
            step_axis.plot(sizes, times, marker=marker, markersize=3, linewidth=1.2, label=label)
            total_axis.plot(sizes, totals, marker=marker, markersize=3, linewidth=1.2, label=label)
        step_axis.set_title(f"{title}: time of each step")
        total_axis.set_title(f"{title}: time since the start")
        for axis, ylabel in ((step_axis, "ms per step"), (total_axis, "ms in total")):
            axis.set_xscale("log", base=2)
            axis.xaxis.set_major_locator(LogLocator(base=4))
            axis.xaxis.set_major_formatter(FuncFormatter(size_text))
            axis.set_yscale("log")
            axis.set_xlabel("buffer size after the step")
            axis.set_ylabel(ylabel)
            axis.grid(True, which="both", linewidth=0.3)
        total_axis.legend(fontsize=8, loc="upper left")
    quick = " (quick run)" if data.get("quick") else ""
    figure.suptitle(f"Growing a buffer on {data.get('device', '?')} ({data.get('backend', '?')})"
                    f"{quick}")
    figure.tight_layout()
    figure.savefig(output, dpi=args.dpi)
    print(f"plot_growth: wrote {output}")


if __name__ == "__main__":
    main()
