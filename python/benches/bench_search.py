"""Simulations per second of zertz.MCTS driven from Python (uniform or rollout evaluator, or a
numpy callable that returns uniform logits), from the 37-ring start, with the evaluator's search
preset or the one named (``zertz.search_presets()``).

    .venv/bin/python python/benches/bench_search.py [uniform|rollout|callable] [GAMES] [SIMS]\
        [PRESET]
"""

from __future__ import annotations

import sys
import time

import numpy as np
import numpy.typing as npt

import zertz


def callable_evaluator(
    planes: npt.NDArray[np.float32],
    globals_: npt.NDArray[np.float32],
    masks: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    return np.zeros(masks.shape, dtype=np.float32), np.zeros(len(masks), dtype=np.float32)


def main() -> None:
    kind = sys.argv[1] if len(sys.argv) > 1 else "uniform"
    games = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    sims = int(sys.argv[3]) if len(sys.argv) > 3 else 800
    preset = sys.argv[4] if len(sys.argv) > 4 else None
    mcts = zertz.MCTS(callable_evaluator if kind == "callable" else kind, preset=preset)  # type: ignore[arg-type]
    done, start = 0, time.perf_counter()
    while time.perf_counter() - start < 3.0:
        mcts.search([zertz.Game() for _ in range(games)], sims)
        done += games * sims
    rate = done / (time.perf_counter() - start)
    settings = f", preset {preset}" if preset else ""
    print(f"{kind}{settings}, {games} games x {sims} simulations, from Python: {rate:,.0f} sims/s")


if __name__ == "__main__":
    main()
