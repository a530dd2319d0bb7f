"""Random games through ``zertz.Game`` in a Python loop: the per-call cost of the bindings.

Each game plays a uniform random legal action until the end, with the calls a Python agent
makes: ``legal_action_indices()``, ``play(index)``, ``is_over``. Then each call alone, timed
in a loop, so that what a call costs can be told from what the rules cost.

    .venv/bin/python python/benches/bench_game.py [SECONDS] [BOARD]
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable

import zertz


def games_per_second(board: int, seconds: float) -> tuple[float, float]:
    """Random games per second, and actions per game."""
    rng = random.Random(1)
    games = actions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        g = zertz.Game(board)
        while not g.is_over:
            legal = g.legal_action_indices()
            g.play(int(legal[rng.randrange(len(legal))]))
            actions += 1
        games += 1
    return games / (time.perf_counter() - start), actions / games


def per_call(label: str, f: Callable[[], object], n: int = 200_000) -> None:
    start = time.perf_counter()
    for _ in range(n):
        f()
    ns = (time.perf_counter() - start) / n * 1e9
    print(f"  {label:<40} {ns:8.0f} ns")


def main() -> None:
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 5.0
    board = int(sys.argv[2]) if len(sys.argv) > 2 else 37
    rate, length = games_per_second(board, seconds)
    print(f"{board} rings: {rate:,.0f} random games/s through zertz.Game", end=" ")
    print(f"({length:.1f} actions a game)")
    g = zertz.Game(board)
    first = int(g.legal_action_indices()[0])
    print("per call (start position):")
    per_call("Game.is_over", lambda: g.is_over)
    per_call("Game.to_play", lambda: g.to_play)
    per_call("Game.legal_action_indices()", g.legal_action_indices, 50_000)
    per_call("Game.legal_action_mask()", g.legal_action_mask, 50_000)
    per_call("Game.clone()", g.clone)
    per_call("Game.clone().play(index)", lambda: g.clone().play(first))
    per_call("Game.encode()", g.encode, 50_000)
    per_call("zertz.Game(board)", lambda: zertz.Game(board))


if __name__ == "__main__":
    main()
