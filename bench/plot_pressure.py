#!/usr/bin/env python3
"""Plots the memory-pressure benchmark: budget, memory and frame time against time.

Reads the stats JSON of a governed viewer run (vtpage-viewer --governor --stats F, with
--pressure-mib for another process taking device memory). Top: vtpage's budget, what its page
pool holds and the device's free memory; middle: resident pages; bottom: frame time (the
slowest frame between two governor steps) with the target. The other process's hold is shaded.
Needs matplotlib (Debian: python3-matplotlib).

    vtpage-viewer --headless --backend cuda --camera-path benchmark --governor \\
        --pressure-mib 60000 --stats pressure.json ...
    python3 bench/plot_pressure.py pressure.json -o docs/viewer-pressure.png
"""

import argparse
import json
import sys


def load(path):
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, json.JSONDecodeError) as error:
        sys.exit(f"plot_pressure: cannot read {path}: {error}")
    timeline = data.get("governor", {}).get("timeline")
    if not timeline or not timeline.get("seconds"):
        sys.exit(f"plot_pressure: {path} has no governor timeline (run the viewer with --governor)")
    return data, timeline


def shade_pressure(axis, pressure):
    if pressure:
        start = pressure["at_seconds"]
        what = (f"{pressure['mib']} MiB" if pressure.get("mib") else
                f"all but {pressure.get('leave_free_mib')} MiB of the free memory")
        axis.axvspan(start, start + pressure["for_seconds"], color="tab:red", alpha=0.08,
                     label=f"another process takes {what}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="the viewer's --stats output")
    parser.add_argument("-o", "--output", help="the PNG to write (default: the JSON's name, .png)")
    parser.add_argument("--dpi", type=int, default=110)
    args = parser.parse_args()
    data, timeline = load(args.json)
    output = args.output or (args.json.rsplit(".", 1)[0] + ".png")
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit("plot_pressure: needs matplotlib (Debian: apt-get install python3-matplotlib)")

    seconds = timeline["seconds"]
    pressure = data.get("pressure")
    figure, (memory, pages, frames) = plt.subplots(
        3, 1, figsize=(10, 9), sharex=True, gridspec_kw={"height_ratios": [3, 2, 2]})
    figure.suptitle(f"vtpage under memory pressure: {data.get('device', '')}, "
                    f"{data.get('camera_path', '')} flight, {data.get('width')} x "
                    f"{data.get('height')}")

    memory.plot(seconds, timeline["budget_mib"], label="budget", color="tab:blue")
    memory.plot(seconds, timeline["held_mib"], label="held by vtpage (page pool)",
                color="tab:green")
    free_axis = memory.twinx()
    free_axis.plot(seconds, [value / 1024 for value in timeline["device_free_mib"]],
                   label="device free (right, GiB)", color="tab:gray", linestyle="--")
    free_axis.set_ylabel("device free, GiB")
    free_axis.set_ylim(bottom=0)
    memory.set_ylabel("MiB")
    memory.set_ylim(bottom=0)
    shade_pressure(memory, pressure)
    lines, labels = memory.get_legend_handles_labels()
    more_lines, more_labels = free_axis.get_legend_handles_labels()
    memory.legend(lines + more_lines, labels + more_labels, loc="lower left", fontsize="small")

    pages.plot(seconds, timeline["resident_pages"], color="tab:purple", label="resident pages")
    pages.set_ylabel("resident pages (2 MiB)")
    pages.set_ylim(bottom=0)
    shade_pressure(pages, pressure)
    pages.legend(loc="lower left", fontsize="small")

    measured = [(t, ms) for t, ms in zip(seconds, timeline["frame_ms"]) if ms is not None and ms >= 0]
    frames.plot([t for t, _ in measured], [ms for _, ms in measured], color="tab:orange",
                linewidth=0.7, label="frame time (slowest since the last step)")
    target = data.get("governor", {}).get("frame_ms_target", 0)
    if target:
        frames.axhline(target, color="tab:red", linestyle=":", label=f"target {target} ms")
    frames.set_ylabel("ms")
    frames.set_ylim(bottom=0)
    frames.set_xlabel("seconds into the flight")
    shade_pressure(frames, pressure)
    frames.legend(loc="upper left", fontsize="small")

    figure.tight_layout()
    figure.savefig(output, dpi=args.dpi)
    print(f"plot_pressure: wrote {output}")


if __name__ == "__main__":
    main()
