#!/usr/bin/env python3
"""A ladder of the engine's players: a round robin of matches with paired openings
(``zertz.match``), and one Elo rating per player fitted to all the games at once (maximum
likelihood of the logistic model, a draw half a win, ``random`` at 0), with 95% intervals from
the fit's curvature. Prints a Markdown table (docs/rl-libraries.md holds one) and each pair's
score.

    .venv/bin/python scripts/ladder.py --games 20
    .venv/bin/python scripts/ladder.py --players random greedy mcts:100 --games 40 --board 61

Every argument and player is checked before the first game (the match settings by the engine's
ranges, ``--games`` a positive even count, at least two players and none named twice in any
spelling, each player built once for the board: a network read and able to play it, a ``cmd:``
program started and answering its name); a wrong one is refused with one line (``error: ...``,
status 2) and nothing is played. Of the default players, those that cannot play ``--board`` (the
built-in network plays 37 rings) are left out with a note.

Needs the engine (``zertz[train]``) for ``zertz.match``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
import time
from typing import NoReturn

import numpy as np

import zertz
from zertz.agents import player, same_player

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


def one_line(message: str) -> str:
    """``message`` on one line (a program's output may have several)."""
    return " / ".join(line.strip() for line in message.splitlines() if line.strip())


def fail(message: str, status: int = 2) -> NoReturn:
    print(f"error: {one_line(message)}", file=sys.stderr)
    sys.exit(status)


class Parser(argparse.ArgumentParser):
    """Refuses wrong arguments with one line (``error: ...``, status 2)."""

    def error(self, message: str) -> NoReturn:
        fail(f"{message} (usage: ladder.py [--players SPEC ...] [--games EVEN] [--board RINGS])")


def check(args: argparse.Namespace, defaults: bool) -> list[str]:
    """The players of the ladder, each checked before any game (see the module's docs); exits
    with one line for a wrong argument or player. Of the default players (``defaults``), one
    that cannot play the board is left out with a note."""
    try:
        zertz.match_config(
            games=args.games,
            board=args.board,
            seed=args.seed,
            opening_actions=args.opening_actions,
            threads=args.threads,
        )
    except (ValueError, TypeError) as e:
        key, _, words = str(e).partition(":")
        fail(f"--{key.replace('_', '-')}:{words}")
    if args.games < 1 or args.games % 2:
        fail(
            f"--games must be a positive even count (each opening is played from both sides), "
            f"not {args.games}"
        )
    for spec in args.players:
        try:
            zertz.parse_player(spec)
        except ValueError as e:
            fail(f"--players: {e}")
    if twice := same_player(args.players):
        first, again, name = twice
        fail(f"--players names one player twice: {first!r} and {again!r} (both {name})")
    players = []
    for spec in args.players:
        try:
            player(spec, args.board)
        except (ValueError, OSError) as e:
            if not defaults:
                fail(f"--players: {spec!r} cannot play: {e}")
            print(f"ladder: leaving out {spec} ({one_line(str(e))})", file=sys.stderr)
            continue
        players.append(spec)
    if len(players) < 2:
        fail(f"--players: a ladder needs at least two players, not {len(players)}")
    return players


def main(argv: list[str] | None = None) -> None:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", nargs="+", default=DEFAULT_PLAYERS)
    p.add_argument("--games", type=int, default=20, help="games of each pair (even)")
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--opening-actions", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="games played at once (0: every core)")
    args = p.parse_args(argv)
    players = check(args, args.players is DEFAULT_PLAYERS)
    results: dict[tuple[int, int], tuple[int, int, int]] = {}
    started = time.monotonic()
    pairs = list(itertools.combinations(range(len(players)), 2))
    for n, (i, j) in enumerate(pairs, 1):
        try:
            m = zertz.match(
                players[i],
                players[j],
                games=args.games,
                board=args.board,
                seed=args.seed,
                opening_actions=args.opening_actions,
                threads=args.threads,
            )
        except KeyboardInterrupt:
            fail("stopped", 130)
        except (ValueError, RuntimeError, OSError) as e:
            fail(f"{players[i]} - {players[j]}: {e}", 1)
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
