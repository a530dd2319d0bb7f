#!/usr/bin/env python3
"""The plots of BENCHMARKS.md, drawn from the figures they show: each ``docs/plots/NAME.json``
holds a plot's measured figures and where they come from (machine, commit, command), and this
script draws it into ``docs/plots/NAME.svg`` beside it. Edit the figures in the JSON file (with
the table in BENCHMARKS.md), then draw again:

    .venv/bin/python scripts/plots.py                # every plot
    .venv/bin/python scripts/plots.py native-pass    # one

A data file is ``{"title", "x": {"label", "log"?}, "y": {"label", "log"?}, "source": {"machine",
"commit", "command"}, "series": [{"label", "x": [...], "y": [...]}]}``; a ``y`` entry may be a
list of repeated measurements, drawn as points with the line through their median. Needs
matplotlib (``zertz[train]``). Plots of the ladder come from ``scripts/ladder.py --plot``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "plots"


def _finite(value: object) -> bool:
    """Whether ``value`` is a finite number (not a bool, a string or NaN)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def read(path: Path) -> dict[str, Any]:
    """A plot's data file, checked: ValueError naming the file and what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as e:  # not UTF-8, or not JSON
        raise ValueError(f"{path}: not a JSON file ({e})") from None

    def need(ok: bool, what: str) -> None:
        if not ok:
            raise ValueError(f"{path}: {what}")

    need(isinstance(data, dict), "not a JSON object")
    keys = {"title", "x", "y", "source", "series"}
    need(set(data) == keys, f"keys must be {sorted(keys)}, not {sorted(data)}")
    source = {"machine", "commit", "command"}
    need(
        isinstance(data["source"], dict) and set(data["source"]) == source,
        f"source: {sorted(source)}",
    )
    for axis in ("x", "y"):
        a = data[axis]
        need(isinstance(a, dict) and set(a) <= {"label", "log"} and "label" in a, f"{axis}: label")
    need(isinstance(data["series"], list) and bool(data["series"]), "no series")
    for s in data["series"]:
        need(isinstance(s, dict) and set(s) == {"label", "x", "y"}, "a series: label, x, y")
        need(
            isinstance(s["x"], list)
            and isinstance(s["y"], list)
            and len(s["x"]) == len(s["y"]) > 0,
            f"series {s['label']!r}: x and y differ in length",
        )
        ys = [v for y in s["y"] for v in (y if isinstance(y, list) and y else [y])]
        need(
            all(_finite(v) for v in s["x"] + ys),
            f"series {s['label']!r}: every x and y must be a finite number",
        )
    checked: dict[str, Any] = data
    return checked


def draw(data: dict[str, Any], out: Path) -> None:
    """Draws the plot of ``data`` into ``out`` (SVG: the text stays text, no date)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"
    plt.rcParams["svg.hashsalt"] = "zertz"
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for s in data["series"]:
        repeats = [y if isinstance(y, list) else [y] for y in s["y"]]
        middle = [statistics.median(r) for r in repeats]
        (line,) = ax.plot(s["x"], middle, marker="o", label=s["label"])
        if any(len(r) > 1 for r in repeats):
            xs = [x for x, r in zip(s["x"], repeats, strict=True) for _ in r]
            ys = [y for r in repeats for y in r]
            ax.scatter(xs, ys, s=12, alpha=0.4, color=line.get_color())
    for axis, set_label, set_scale in (
        ("x", ax.set_xlabel, ax.set_xscale),
        ("y", ax.set_ylabel, ax.set_yscale),
    ):
        set_label(data[axis]["label"])
        if data[axis].get("log"):
            set_scale("log")
    if data["x"].get("log"):  # ticks at the measured values, written plainly
        ticks = sorted({x for s in data["series"] for x in s["x"]})
        ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
        ax.minorticks_off()
    src = data["source"]
    ax.set_title(data["title"], fontsize=10)
    fig.text(
        0.01,
        0.01,
        f"{src['machine']}, recorded in {src['commit']}: {src['command']}",
        fontsize=6,
        color="#555555",
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(out, metadata={"Date": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("names", nargs="*", help="plots to draw (default: every docs/plots/*.json)")
    p.add_argument("--folder", type=Path, default=FOLDER, help="where the data files are")
    p.add_argument("--out", type=Path, default=None, help="draw here (default: beside the data)")
    args = p.parse_args(argv)
    paths = [args.folder / f"{n}.json" for n in args.names] or sorted(args.folder.glob("*.json"))
    try:
        plots = [(path, read(path)) for path in paths]
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    for path, data in plots:
        out = (args.out or path.parent) / f"{path.stem}.svg"
        draw(data, out)
        print(out)


if __name__ == "__main__":
    main()
