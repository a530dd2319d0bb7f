#!/usr/bin/env python3
"""A ladder of the engine's players: a round robin of matches with paired openings
(``zertz.match``), and one Elo rating per player fitted to all the games at once (maximum
likelihood of the logistic model, a draw half a win, ``random`` at 0), with 95% intervals from
the fit's curvature. Prints a Markdown table (docs/rl-libraries.md holds one) and each pair's
score.

    .venv/bin/python scripts/ladder.py --games 20
    .venv/bin/python scripts/ladder.py --players random greedy mcts:100 --games 40 --board 61

Needs the engine (``zertz[train]``) for ``zertz.match``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time

import numpy as np

import zertz

DEFAULT_PLAYERS = ["random", "greedy", "mcts:100", "alphabeta:2", "nn:builtin:32"]


def fit(
    players: list[str], results: dict[tuple[int, int], tuple[int, int, int]]
) -> tuple[np.ndarray, np.ndarray]:
    """Ratings (Elo, the first player at 0) and their standard errors, by Newton's method on
    the log-likelihood of every game (scores s of i against j: s log p + (1 - s) log(1 - p),
    p = 1 / (1 + 10^((r_j - r_i) / 400))). A small prior (a game drawn against the first player)
    keeps a player that won or lost every game finite."""
    n = len(players)
    k = math.log(10) / 400
    r = np.zeros(n)
    pairs = [(i, j, w + 0.5 * d, w + d + lost) for (i, j), (w, d, lost) in results.items()]
    pairs += [(0, i, 0.5, 1) for i in range(1, n)]  # the prior
    for _ in range(100):
        grad = np.zeros(n)
        hess = np.zeros((n, n))
        for i, j, score, games in pairs:
            p = 1 / (1 + math.exp(-k * (r[i] - r[j])))
            g = k * (score - games * p)
            h = k * k * games * p * (1 - p)
            grad[i] += g
            grad[j] -= g
            hess[i, i] -= h
            hess[j, j] -= h
            hess[i, j] += h
            hess[j, i] += h
        step = np.zeros(n)
        step[1:] = np.linalg.solve(hess[1:, 1:], -grad[1:])
        r += step
        if np.abs(step).max() < 1e-6:
            break
    cov = np.linalg.inv(-hess[1:, 1:])
    se = np.concatenate([[0.0], np.sqrt(np.diag(cov))])
    return r, se


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", nargs="+", default=DEFAULT_PLAYERS)
    p.add_argument("--games", type=int, default=20, help="games of each pair (even)")
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--opening-actions", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    players = args.players
    results: dict[tuple[int, int], tuple[int, int, int]] = {}
    started = time.monotonic()
    pairs = list(itertools.combinations(range(len(players)), 2))
    for n, (i, j) in enumerate(pairs, 1):
        m = zertz.match(
            players[i],
            players[j],
            games=args.games,
            board=args.board,
            seed=args.seed,
            opening_actions=args.opening_actions,
            threads=args.threads,
        )
        results[(i, j)] = (m["wins"], m["draws"], m["losses"])
        print(
            f"[{n}/{len(pairs)}, {time.monotonic() - started:.0f} s] {players[i]} - "
            f"{players[j]}: {m['wins']}-{m['draws']}-{m['losses']}",
            file=sys.stderr,
            flush=True,
        )
    ratings, se = fit(players, results)
    print(
        f"{args.games} games a pair, {args.board} rings, {args.opening_actions} opening actions, "
        f"seed {args.seed}:\n"
    )
    print("| player | Elo | 95% interval |")
    print("|---|---|---|")
    for name, r, s in sorted(zip(players, ratings, se, strict=True), key=lambda x: x[1]):
        interval = "(anchor)" if s == 0 else f"{r - 1.96 * s:+.0f} to {r + 1.96 * s:+.0f}"
        print(f"| `{name}` | {r:+.0f} | {interval} |")
    print("\n| pair | W-D-L of the first |")
    print("|---|---|")
    for (i, j), (w, d, lost) in results.items():
        print(f"| `{players[i]}` - `{players[j]}` | {w}-{d}-{lost} |")


if __name__ == "__main__":
    main()
