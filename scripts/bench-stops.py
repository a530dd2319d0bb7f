"""How soon a stop ends a match: for each searching player and board, starts ``zertz match
--player P --player random --out FILE``, sends SIGTERM (or SIGINT) once its search is under way,
and prints the seconds from the signal to the program's exit and the records in the file (the
target: within 2 s, every finished game kept; docs/hostile-input.md). The players are those of
``arena/tests/fuzz.rs``'s ``fuzz_stops_during_searches`` (nn:builtin for its stand-in network),
which checks what a stop leaves and that it comes, not how soon: the test passes on a busy
machine, and this figure is measured here, on a quiet one.

    .venv/bin/python scripts/bench-stops.py [ZERTZ]     # default target/release/zertz
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CASES = [
    ("alphabeta", 61),
    ("alphabeta:time=30", 37),
    ("alphabeta:2:time=30", 37),
    ("alphabeta:7", 61),
    ("alphabeta:12", 37),
    ("mcts:1048576", 61),
    ("mcts:time=30", 37),
    ("uniform:1048576", 61),
    ("nn:builtin:1048576", 37),
    ("nn:builtin:10:gumbel=16:time=30", 37),
]

#: How long the match runs before the signal: its first searches are under way.
SETTLE = 2.0


def stop_after(zertz: str, player: str, board: int, sig: signal.Signals) -> tuple[float, int]:
    """Seconds from ``sig`` to the exit of a match of ``player`` on ``board``, and its records."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "games.jsonl"
        args = [zertz, "match", "--player", player, "--player", "random", "--board", str(board)]
        args += ["--games", "4", "--threads", "2", "--out", str(out)]
        child = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(SETTLE)
        sent = time.monotonic()
        child.send_signal(sig)
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            return float("inf"), 0
        took = time.monotonic() - sent
        records = len(out.read_text().splitlines()) if out.exists() else 0
        return took, records


def main() -> None:
    zertz = sys.argv[1] if len(sys.argv) > 1 else "target/release/zertz"
    print(f"{'player':34} {'board':>5} {'signal':>7} {'seconds':>8} {'records':>7}")
    worst = 0.0
    for player, board in CASES:
        for sig in (signal.SIGTERM, signal.SIGINT):
            took, records = stop_after(zertz, player, board, sig)
            worst = max(worst, took)
            print(f"{player:34} {board:>5} {sig.name:>7} {took:>8.3f} {records:>7}")
    print(f"slowest stop: {worst:.3f} s")


if __name__ == "__main__":
    main()
