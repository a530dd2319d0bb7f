"""One game's search on two threads against one, and against what the machine itself gives two
threads (issue 46: two search threads at >= 1.7x one).

Each repetition runs, one after the other in an order that alternates:

- ``one``: ``zertz bench player SPEC --search-threads 1``;
- ``two``: the same with ``--search-threads 2``;
- ``apart``: two ``--search-threads 1`` processes at once, their figures added: two searches
  that share nothing, so the most two threads could give on this machine at this moment (two
  cores that slow each other down, as the vCPUs of a busy host do, show here).

It prints each repetition's simulations per second (summed over the positions of ``zertz bench
player``) and the medians of ``two/one`` and ``apart/one``: a search whose ``two/one`` stays
below ``apart/one`` loses to its own serial part, one at ``apart/one`` to the machine.

    .venv/bin/python scripts/bench-search-threads.py [--spec nn:builtin] [--reps 8]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess


def run(zertz: str, spec: str, board: str, threads: int, seconds: float) -> subprocess.Popen[str]:
    """Starts one ``zertz bench player`` with ``threads`` search threads."""
    args = [zertz, "bench", "player", spec, "--board", board, "--device", "cpu", "--json"]
    args += ["--search-threads", str(threads), "--move-time", str(seconds), "--searches", "1"]
    return subprocess.Popen(args, stdout=subprocess.PIPE, text=True)


def rate(process: subprocess.Popen[str]) -> float:
    """Simulations per second of a finished run: its work over its seconds, every position."""
    out, _ = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"zertz bench player failed with status {process.returncode}")
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    return float(sum(r["work"] for r in rows)) / float(sum(r["seconds"] for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="nn:builtin", help="the player (zertz bench player)")
    parser.add_argument("--board", default="37", help="boards, comma separated")
    parser.add_argument("--reps", type=int, default=8, help="repetitions of the three runs")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds of each search")
    parser.add_argument("--zertz", default=os.environ.get("ZERTZ_BIN", "target/release/zertz"))
    a = parser.parse_args()
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if "model name" in line), "?")
    print(
        f"{a.spec}, {a.board} rings, {a.seconds} s a search; CPU: {model}, {os.cpu_count()} cores"
    )
    print(f"{'rep':>3} {'one':>8} {'two':>8} {'apart':>8} {'two/one':>8} {'apart/one':>9}")
    two_one, apart_one = [], []
    for rep in range(a.reps):
        figures: dict[str, float] = {}
        order = ["one", "two", "apart"] if rep % 2 == 0 else ["apart", "two", "one"]
        for kind in order:
            if kind == "apart":
                pair = [run(a.zertz, a.spec, a.board, 1, a.seconds) for _ in range(2)]
                figures[kind] = sum(rate(p) for p in pair)
            else:
                threads = 1 if kind == "one" else 2
                figures[kind] = rate(run(a.zertz, a.spec, a.board, threads, a.seconds))
        two_one.append(figures["two"] / figures["one"])
        apart_one.append(figures["apart"] / figures["one"])
        print(
            f"{rep:>3} {figures['one']:>8.0f} {figures['two']:>8.0f} {figures['apart']:>8.0f}"
            f" {two_one[-1]:>8.2f} {apart_one[-1]:>9.2f}",
            flush=True,
        )
    print(
        f"median two/one {statistics.median(two_one):.2f}, "
        f"apart/one {statistics.median(apart_one):.2f} over {a.reps} repetitions"
    )


if __name__ == "__main__":
    main()
