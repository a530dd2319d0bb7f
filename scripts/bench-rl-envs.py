#!/usr/bin/env python3
"""Steps a second of the RL front ends with random masked actions, as a library steps them: the
Stable-Baselines3 VecEnv over the Rust environment (``zertz.sb3.VecEnv``: ``step`` and
``env_method("action_masks")``, what MaskablePPO calls), Gymnasium's ``VectorEnv``, and one
``ZertzEnv``; against ``random`` and ``greedy`` opponents and with two players. A step is one
action of the learner (the opponent's answers are played inside it). Prints one line per case.

    .venv/bin/python scripts/bench-rl-envs.py --envs 256 --seconds 5
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import numpy as np

from zertz.gymnasium import VectorEnv, ZertzEnv
from zertz.sb3 import VecEnv


def rate(step: Callable[[], int], seconds: float) -> float:
    """Steps a second of ``step`` (which returns the steps it took) over ``seconds``."""
    for _ in range(3):
        step()
    n, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        n += step()
    return n / (time.perf_counter() - started)


def cpu() -> str:
    for line in open("/proc/cpuinfo", encoding="utf-8"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--envs", type=int, default=256)
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--seconds", type=float, default=5.0)
    args = p.parse_args()
    print(f"{cpu()}, {os.cpu_count()} cores; {args.board} rings, {args.envs} games")
    for opponent in ("random", "greedy", None):
        sb3 = VecEnv(args.envs, args.board, opponent=opponent, seed=0)
        sb3.reset()

        def sb3_step(env: VecEnv = sb3) -> int:
            np.stack(env.env_method("action_masks"))
            env.step(env.sample_actions())
            return env.num_envs

        vector = VectorEnv(args.envs, args.board, opponent=opponent, seed=0)
        vector.reset(seed=0)

        def vector_step(env: VectorEnv = vector) -> int:
            env.action_masks()
            env.step(env.sample_actions())
            return env.num_envs

        single = ZertzEnv(args.board, opponent=opponent)
        single.reset(seed=0)
        rng = np.random.default_rng(0)

        def single_step(env: ZertzEnv = single, rng: np.random.Generator = rng) -> int:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, _, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
            return 1

        name = opponent or "two players"
        for front, step in (
            ("zertz.sb3.VecEnv", sb3_step),
            ("zertz.gymnasium.VectorEnv", vector_step),
            ("zertz.gymnasium.ZertzEnv (one game)", single_step),
        ):
            print(f"{name:>12}  {front:<36} {rate(step, args.seconds):>10,.0f} steps/s")


if __name__ == "__main__":
    main()
