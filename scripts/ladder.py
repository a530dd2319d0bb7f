#!/usr/bin/env python3
"""A ladder of Rust's players: matches with paired openings (``zertz.match``), and one
Elo rating per player fitted to all the games at once (maximum likelihood of the logistic model,
a draw half a win, the first player at 0), with 95% intervals from the fit's curvature. Prints
a Markdown table (docs/rl-libraries.md holds one) and each pair's score with each side's CPU
seconds a move; ``--plot`` draws the ratings.

Any player of ``zertz match`` stands on it: a fixed budget (``mcts:1000``, ``nn:builtin:32``), a
time per move (``alphabeta:time=1``, ``nn:builtin:time=1``), or a network file of your own
(``nn:agent.safetensors:1``, the policy and the engine's tactics; ``nn:agent.safetensors:200``,
inside the engine's search). By default every pair plays (a round robin); ``--span K`` plays
each player against the K after it in the order given (list them weakest first), which places
a player with fewer games: the fit needs only a connected chain of pairs.

``--results FILE`` keeps each pair's result as a JSON line as it ends, and reads the file
first: a pair already there with the same settings is not played again (either order; a
player is the same in any spelling, a network file only with the same bytes), and every stored
pair between the players enters the fit. An interrupted ladder goes on where it
stopped, and a new agent is placed by naming it among the others: only its own pairs play.

    .venv/bin/python scripts/ladder.py --games 20
    .venv/bin/python scripts/ladder.py --players random greedy mcts:100 --games 40 --board 61
    .venv/bin/python scripts/ladder.py --games 100 --span 2 --results ladder.jsonl \
        --plot ladder.svg --players random greedy nn:agent.safetensors:1 alphabeta:time=1

Every argument and player is checked before the first game (the match settings by Rust's
ranges, ``--games`` a positive even count, at least two players and none named twice in any
spelling, each player built once for the board: a network read and able to play it, a ``cmd:``
program started and answering its name); a wrong one is refused with one line (``error: ...``,
status 2) and nothing is played. Of the default players, those that cannot play ``--board`` (the
built-in network plays 37 rings) are left out with a note.

Needs the engine (``zertz[train]``) for ``zertz.match``.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

import zertz
from zertz.agents import player, same_player
from zertz.files import append_text, read_bytes, read_text
from zertz_engine import BUILTIN_MODEL, builtin_model

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
        fail(
            f"{message} (usage: ladder.py [--players SPEC ...] [--games EVEN] [--board RINGS] "
            "[--span K] [--results FILE] [--plot FILE])"
        )


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
            search_threads=args.search_threads,
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


#: The settings a stored result must share to be used again (besides its two players).
SETTINGS = ("games", "board", "opening_actions", "seed", "search_threads")


def schedule(players: list[str], span: int) -> list[tuple[int, int]]:
    """The pairs to play: every pair (``span`` 0), or each player against the ``span`` after it.

    >>> schedule(["a", "b", "c", "d"], 2)
    [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3)]
    """
    n = len(players)
    if span == 0:
        return list(itertools.combinations(range(n), 2))
    return [(i, j) for i in range(n) for j in range(i + 1, min(n, i + 1 + span))]


def read_results(path: Path, settings: dict[str, int]) -> list[dict[str, Any]]:
    """The results stored in ``path`` (none if it does not exist) played with ``settings``; a
    file that is not a regular one within its bound, or a line that is not a result, is refused
    (OSError or ValueError naming it and the line)."""
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(read_text(path, "metrics").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict):
                raise ValueError("not an object")
            for key in ("a", "b", "a_id", "b_id"):
                if not isinstance(row.get(key), str):
                    raise ValueError(f"no player {key!r}")
            for key in ("a_cpu", "b_cpu"):
                value = row.get(key)
                if value is not None and (
                    isinstance(value, bool) or not isinstance(value, float | int)
                ):
                    raise ValueError(f"{key!r} is not a number")
            for key in ("wins", "draws", "losses", *SETTINGS):
                value = row.get(key)
                if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                    raise ValueError(f"{key!r} is not a count")
        except ValueError as e:
            raise ValueError(f"{path} line {n}: not a ladder result ({e})") from None
        if all(row[k] == settings[k] for k in SETTINGS):
            rows.append(row)
    return rows


def identity(spec: str) -> str:
    """What a stored result's player must be to stand for ``spec``: its canonical spec (any
    spelling of one player is one), and for a network the start of the SHA-256 of its file's
    bytes (a file trained again, or another version's built-in network, is another player)."""
    parsed = zertz.parse_player(spec)
    model = parsed["model"]
    if model is None:
        return str(parsed["name"])
    if model == BUILTIN_MODEL:
        data = builtin_model()
    else:
        data = read_bytes(model, "network")
    digest = hashlib.sha256(data).hexdigest()[:16]
    return f"{parsed['name']} sha256:{digest}"


def cpu_a_move(effort: Any) -> float | None:
    """The CPU seconds a move of a side's effort (``zertz.match``'s ``a_effort``), if known."""
    if not isinstance(effort, dict) or not effort.get("moves"):
        return None
    cpu = effort.get("cpu_seconds")
    return None if cpu is None else float(cpu) / float(effort["moves"])


def draw(path: Path, players: list[str], ratings: np.ndarray, se: np.ndarray, title: str) -> None:
    """A plot of the ratings with their 95% intervals, weakest at the bottom, into ``path``
    (its suffix names the format: ``.svg``, ``.png``, ...)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.fonttype"] = "none"  # the names stay text: smaller, and searchable

    order = np.argsort(ratings)
    fig, ax = plt.subplots(figsize=(7, 0.9 + 0.38 * len(players)))
    y = np.arange(len(players))
    ax.errorbar(
        ratings[order],
        y,
        xerr=1.96 * se[order],
        fmt="o",
        color="#1f5f8b",
        ecolor="#7aa6c2",
        capsize=3,
    )
    ax.set_yticks(y, [players[i] for i in order], fontfamily="monospace", fontsize=9)
    ax.set_xlabel(f"Elo over {players[0]} (95% interval)")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None} if path.suffix == ".svg" else None)
    plt.close(fig)


def main(argv: list[str] | None = None) -> None:
    p = Parser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", nargs="+", default=DEFAULT_PLAYERS)
    p.add_argument("--games", type=int, default=20, help="games of each pair (even)")
    p.add_argument("--board", type=int, default=37)
    p.add_argument("--opening-actions", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="games played at once (0: every core)")
    p.add_argument(
        "--search-threads",
        type=int,
        default=1,
        help="threads of each search (0: share the cores)",
    )
    p.add_argument("--span", type=int, default=0, help="pairs: each player and the K after it")
    p.add_argument("--results", type=Path, default=None, help="JSON lines of results, kept")
    p.add_argument("--plot", type=Path, default=None, help="draw the ratings (.svg, .png)")
    args = p.parse_args(argv)
    if args.span < 0:
        fail(f"--span must be 0 (every pair) or more, not {args.span}")
    players = check(args, args.players is DEFAULT_PLAYERS)
    settings = {key: getattr(args, key) for key in SETTINGS}
    try:
        stored = read_results(args.results, settings) if args.results else []
        if args.results:
            append_text(args.results, "")  # a file it cannot write is refused before any game
    except (OSError, ValueError) as e:
        fail(f"--results: {e}")
    try:
        ids = [identity(spec) for spec in players]
    except (OSError, ValueError) as e:
        fail(f"--players: {e}")
    index = {key: n for n, key in enumerate(ids)}
    results: dict[tuple[int, int], tuple[int, int, int]] = {}
    cpu: dict[tuple[int, int], tuple[float | None, float | None]] = {}
    for row in stored:
        i, j = index.get(row["a_id"]), index.get(row["b_id"])
        if i is not None and j is not None:
            results[(i, j)] = (row["wins"], row["draws"], row["losses"])
            cpu[(i, j)] = (row.get("a_cpu"), row.get("b_cpu"))
    todo = [
        (i, j)
        for i, j in schedule(players, args.span)
        if (i, j) not in results and (j, i) not in results
    ]
    if stored:
        print(
            f"ladder: {len(results)} pairs from {args.results}, {len(todo)} to play",
            file=sys.stderr,
        )
    started = time.monotonic()
    for n, (i, j) in enumerate(todo, 1):
        try:
            m = zertz.match(players[i], players[j], **settings, threads=args.threads)
        except KeyboardInterrupt:
            fail("stopped", 130)
        except (ValueError, RuntimeError, OSError) as e:
            fail(f"{players[i]} - {players[j]}: {e}", 1)
        results[(i, j)] = (m["wins"], m["draws"], m["losses"])
        cpu[(i, j)] = (cpu_a_move(m.get("a_effort")), cpu_a_move(m.get("b_effort")))
        if args.results:
            row = {"a": players[i], "b": players[j], "a_id": ids[i], "b_id": ids[j], **settings}
            row.update(wins=m["wins"], draws=m["draws"], losses=m["losses"])
            row.update(a_cpu=cpu[(i, j)][0], b_cpu=cpu[(i, j)][1], seconds=m.get("seconds"))
            append_text(args.results, json.dumps(row) + "\n")
        print(
            f"[{n}/{len(todo)}, {time.monotonic() - started:.0f} s] {players[i]} - "
            f"{players[j]}: {m['wins']}-{m['draws']}-{m['losses']}",
            file=sys.stderr,
            flush=True,
        )
    ratings, se = fit(players, results)
    head = (
        f"{args.games} games a pair, {args.board} rings, {args.opening_actions} opening actions, "
        f"seed {args.seed}"
    )
    print(f"{head}:\n")
    print("| player | Elo | 95% interval |")
    print("|---|---|---|")
    for name, r, s in sorted(zip(players, ratings, se, strict=True), key=lambda x: x[1]):
        interval = "(anchor)" if s == 0 else f"{r - 1.96 * s:+.0f} to {r + 1.96 * s:+.0f}"
        print(f"| `{name}` | {r:+.0f} | {interval} |")
    print("\n| pair | W-D-L of the first | CPU ms a move (first / second) |")
    print("|---|---|---|")
    for (i, j), (w, d, lost) in sorted(results.items()):
        seconds = " / ".join("?" if c is None else f"{1000 * c:.1f}" for c in cpu[(i, j)])
        print(f"| `{players[i]}` - `{players[j]}` | {w}-{d}-{lost} | {seconds} |")
    if args.plot:
        try:
            draw(args.plot, players, ratings, se, head)
        except (OSError, ValueError) as e:
            fail(f"--plot: {e}", 1)
        print(f"ladder: drew {args.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()
