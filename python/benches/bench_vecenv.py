"""Steps per second of zertz.VecEnv driven from Python with random legal actions.

Each step is ``env.step(env.sample_actions())``: sampling, playing, resetting finished games,
encoding the observations and writing the legal masks into new numpy arrays. Compare with the
Rust figure of ``cargo run --release -p zertz-vecenv --example steps -- N THREADS BOARD SECONDS``.

    .venv/bin/python python/benches/bench_vecenv.py [N] [THREADS] [BOARD] [SECONDS]
"""

from __future__ import annotations

import sys
import time

import zertz


def main() -> None:
    args = [int(a) for a in sys.argv[1:]]
    n, threads, board, seconds = (args + [1024, 0, 37, 5][len(args) :])[:4]
    env = zertz.VecEnv(n, board, threads=threads, seed=1)
    env.reset(seed=1)
    steps, games = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminations, truncations, _ = env.step(env.sample_actions())
        steps += n
        games += int(terminations.sum() + truncations.sum())
    elapsed = time.perf_counter() - start
    print(
        f"{board} rings, N={n}, {env.threads} threads, from Python: "
        f"{steps / elapsed:,.0f} steps/s with sampling, {games} games finished"
    )


if __name__ == "__main__":
    main()
