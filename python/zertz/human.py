"""The human-move benchmark: how well a policy predicts the moves people (and boardspace's robots)
played in held-out games, and how often its value head predicts the winner.

The games are the validation split of a dataset made by ``zertz dataset`` (``DIR/games.jsonl``
lists them with their moves). At every decision of those games (a turn with more than one legal
whole-turn move: forced moves are left out) every legal whole-turn move is ranked by the network:
a placement by its probability among the legal actions, a capture chain by the product of the
probabilities of its hops, each at its own position. ``top1`` and ``top5`` are the shares of
decisions whose played move ranks first, or among the first five (a tie counts against the
played move); ``value`` is the share of decisions of decided games where the sign of the value
head matches the mover's result. A uniform guess scores about 4% top-1 and 9% top-5 on 37 rings.

``python -m zertz human-moves --model M --dataset DIR`` prints it for an exported model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zertz._zertz import Game

#: A network: ``(planes [B, C, H, W], globals [B, G]) -> (logits [B, A], values [B])`` (a
#: ``ZertzNet`` or an exported model).
Network = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]


@dataclass
class Tally:
    """The counts of one board."""

    games: int = 0
    decisions: int = 0
    top1: int = 0
    top5: int = 0
    value_decisions: int = 0
    value_right: int = 0

    def result(self) -> dict[str, float | int]:
        n, v = max(self.decisions, 1), max(self.value_decisions, 1)
        return {
            "games": self.games,
            "decisions": self.decisions,
            "top1": self.top1 / n,
            "top5": self.top5 / n,
            "value": self.value_right / v,
        }


@dataclass
class _Pending:
    """Positions waiting for the network, and what to do with each answer."""

    games: list[Game] = field(default_factory=list)
    done: list[Callable[[np.ndarray, float], None]] = field(default_factory=list)


def validation_games(
    dataset: str | os.PathLike[str], boards: Iterable[int] | None = None
) -> list[dict[str, Any]]:
    """The validation games of a dataset (``DIR/games.jsonl`` of ``zertz dataset``), optionally of
    some boards only."""
    path = Path(dataset) / "games.jsonl"
    wanted = set(boards) if boards is not None else None
    games = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            try:
                game = json.loads(line)
                split, board, moves = game["split"], int(game["board"]), game["moves"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{i}: not a line of games.jsonl ({e})") from None
            if split == "validation" and (wanted is None or board in wanted):
                if not isinstance(moves, list):
                    raise ValueError(f"{path}:{i}: moves must be a list")
                games.append(game)
    return games


class _Evaluator:
    """Runs the network on positions in batches, calling back with each answer: the softmax over
    the legal actions (as an array over the action space) and the value."""

    def __init__(self, net: Network, device: torch.device, batch: int) -> None:
        self.net, self.device, self.batch = net, device, batch
        self.pending: dict[int, _Pending] = {}

    def ask(self, game: Game, done: Callable[[np.ndarray, float], None]) -> None:
        p = self.pending.setdefault(game.board, _Pending())
        p.games.append(game)
        p.done.append(done)
        if len(p.games) >= self.batch:
            self.run(game.board)

    def run(self, board: int) -> None:
        p = self.pending.pop(board, None)
        if p is None or not p.games:
            return
        encoded = [g.encode() for g in p.games]
        planes = torch.from_numpy(np.stack([e[0] for e in encoded])).to(self.device)
        globals_ = torch.from_numpy(np.stack([e[1] for e in encoded])).to(self.device)
        masks = torch.from_numpy(np.stack([g.legal_action_mask() for g in p.games]))
        with torch.no_grad():
            logits, values = self.net(planes, globals_)
        logits = logits.float().cpu().masked_fill(~masks, float("-inf"))
        probs = torch.softmax(logits, dim=1).numpy()
        for i, done in enumerate(p.done):
            done(probs[i], float(values[i]))

    def flush(self) -> None:
        # Answers may ask for more positions (the hops of a chain): run until none is left.
        while self.pending:
            self.run(next(iter(self.pending)))


def _score_turn(
    game: Game,
    played: str,
    ev: _Evaluator,
    tally: Tally,
    result: float,
) -> None:
    """Ranks the legal whole-turn moves of ``game`` (a decision) and counts the played one."""
    scores: dict[str, float] = {}
    # Chains under way: (game after the hops so far, hops so far, their probability). The root's
    # answer also gives the value.
    open_chains = [0]

    def settle() -> None:
        if open_chains[0]:
            return
        played_score = scores.get(played)
        tally.decisions += 1
        if played_score is None:
            return  # the played move is not legal here: cannot happen for a replayed game
        better = sum(1 for s in scores.values() if s >= played_score) - 1
        tally.top1 += better < 1
        tally.top5 += better < 5

    def expand(g: Game, hops: list[str], prob: float, root: bool) -> None:
        open_chains[0] += 1

        def answer(probs: np.ndarray, value: float) -> None:
            if root and result != 0.0:
                tally.value_decisions += 1
                tally.value_right += (value > 0) == (result > 0) and value != 0
            for action, index in zip(g.legal_actions(), g.legal_action_indices(), strict=True):
                p = prob * float(probs[index])
                if "x" not in action or action == "pass":
                    scores[action] = p  # a placement (or pass): a whole move
                    continue
                child = g.clone()
                child.play(action)
                chain = [*hops, action]
                if child.chain is not None and not child.is_over:
                    expand(child, chain, p, False)
                else:
                    first = chain[0]
                    scores[first + "".join(h[h.index("x") :] for h in chain[1:])] = p
            open_chains[0] -= 1
            settle()

        ev.ask(g.clone(), answer)

    expand(game, [], 1.0, True)


def benchmark(
    net: Network,
    dataset: str | os.PathLike[str],
    *,
    boards: Iterable[int] | None = None,
    max_games: int | None = None,
    device: str | torch.device = "cpu",
    batch: int = 256,
) -> dict[int, dict[str, float | int]]:
    """The human-move benchmark of ``net`` on the validation games of ``dataset`` (see the module
    docs): ``{board: {"games", "decisions", "top1", "top5", "value"}}``, at most ``max_games``
    games per board."""
    if isinstance(net, torch.nn.Module):
        net.eval()
    ev = _Evaluator(net, torch.device(device), batch)
    tallies: dict[int, Tally] = {}
    for game_line in validation_games(dataset, boards):
        board = int(game_line["board"])
        tally = tallies.setdefault(board, Tally())
        if max_games is not None and tally.games >= max_games:
            continue
        tally.games += 1
        winner = game_line.get("winner")
        game = Game(board, first=str(game_line.get("first", "P0")))
        for move in game_line["moves"]:
            if move != "pass" and len(game.legal_moves()) > 1:
                mover = game.to_play
                result = 0.0 if winner is None else (1.0 if winner == mover else -1.0)
                _score_turn(game.clone(), move, ev, tally, result)
            game.play(move)
    ev.flush()
    return {b: t.result() for b, t in sorted(tallies.items())}
