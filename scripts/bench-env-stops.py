"""How soon Ctrl-C ends the searches that the Python side runs: for each front (the vector
environments' and the single game's opponents, ``zertz.player``, ``zertz.evaluate``), searching
player and board, starts a child that steps or plays, sends SIGINT once its search is under way,
and prints the seconds from the signal to the child's report that the call raised (the target:
within 2 s; docs/hostile-input.md). The tests check that the stop comes and what it leaves
(``python/tests/test_rl_conformance.py``, ``test_rl_libraries.py``), not how soon: they pass on
a busy machine, and this figure is measured here, on a quiet one.

    .venv/bin/python scripts/bench-env-stops.py
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

FRONTS = ["VecEnv", "VectorEnv", "ZertzEnv", "player", "evaluate"]

CASES = [("alphabeta:7", 61), ("alphabeta:12", 37), ("mcts:1048576", 61)]

#: How long the child runs before the signal: its first searches are under way.
SETTLE = 2.0

#: The child: argv = front, spec, board. It prints "ready" before the call that searches and
#: "stopped" when that call raises KeyboardInterrupt.
CHILD = r"""
import sys
import numpy as np
import zertz
from zertz.gymnasium import VectorEnv, ZertzEnv

front, spec, board = sys.argv[1], sys.argv[2], int(sys.argv[3])
if front == "VecEnv":
    env = zertz.VecEnv(2, board, opponent=spec, first_player="P0", threads=2)
    env.reset(seed=0)
    call = lambda: env.step(env.sample_actions())
elif front == "VectorEnv":
    env = VectorEnv(2, board, opponent=spec, first_player="P0", threads=2)
    env.reset(seed=0)
    call = lambda: env.step(env.sample_actions())
elif front == "ZertzEnv":
    env = ZertzEnv(board, opponent=spec, first_player="P0")
    env.reset(seed=0)
    call = lambda: env.step(int(env.action_masks().argmax()))
elif front == "player":
    player = zertz.player(spec, board)
    call = lambda: player.choose(zertz.Game(board))
else:
    first = lambda obs, mask: int(mask.argmax())
    call = lambda: zertz.evaluate(first, [spec], games=2, board=board, progress=False)
print("ready", flush=True)
try:
    call()
    print("finished", flush=True)
except KeyboardInterrupt:
    print("stopped", flush=True)
"""


def stop_after(front: str, spec: str, board: int) -> float:
    """Seconds from SIGINT to the child's report that its call raised (inf: it never did)."""
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, front, spec, str(board)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert child.stdout is not None
    try:
        if child.stdout.readline() != "ready\n":
            return float("inf")
        time.sleep(SETTLE)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        said = child.stdout.readline()
        took = time.monotonic() - sent
        return took if said == "stopped\n" else float("inf")
    finally:
        child.kill()
        child.wait()


def main() -> None:
    print(f"{'front':10} {'player':14} {'board':>5} {'seconds':>8}")
    worst = 0.0
    for spec, board in CASES:
        for front in FRONTS:
            took = stop_after(front, spec, board)
            worst = max(worst, took)
            print(f"{front:10} {spec:14} {board:>5} {took:>8.3f}", flush=True)
    print(f"slowest stop: {worst:.3f} s")


if __name__ == "__main__":
    main()
