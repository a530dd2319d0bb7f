"""The human-move benchmark: how well a policy predicts the moves people (and boardspace's robots)
played in held-out games, and how often its value head predicts the winner.

The games are the validation split of a dataset made by ``zertz dataset`` (``DIR/games.jsonl`` lists
them with their moves; a folder without ``DIR/dataset.json``, the manifest a build writes last, is
incomplete and refused: :func:`dataset_manifest`). At every decision of those games (a turn with
more than one legal whole-turn move: forced moves are left out) every legal whole-turn move is
ranked by the network: a placement by its probability among the legal actions, a capture chain by
the product of the probabilities of its hops, each at its own position. ``top1`` and ``top5`` are
the shares of decisions whose played move ranks first, or among the first five (a tie counts against
the played move); ``value`` is the share of decisions of decided games where the sign of the value
head matches the mover's result. A uniform guess scores about 4% top-1 and 9% top-5 on 37 rings. The
same shares are also given apart for placements (``place_top1``, ``place_top5``; and
``marble_top1``, ``marble_top5`` with the removal left out: a placement's colour and ring ranked by
the probabilities of all its removals summed) and for captures (``capture_top1``, ``capture_top5``).

``python -m zertz human-moves --model M --dataset DIR`` prints it for a network file.

How high can any policy score? :func:`ceiling` measures it where it can be measured: at positions
that recur across the dataset's games (the openings), the best policy plays the players' own
frequencies, and its top-1 and top-5 there follow from the games alone (``python -m zertz
human-ceiling --dataset DIR``).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from zertz._zertz import (
    DATASET_FORMAT,
    DATASET_GAMES,
    DATASET_MANIFEST,
    DATASET_SPLITS,
    DATASET_VERSION,
    Game,
    symmetry_count,
)
from zertz.files import open_binary, read_text

# torch is imported where a network runs (benchmark): the ceiling and the datasets need none.
if TYPE_CHECKING:
    import torch

#: A network: ``(planes [B, C, H, W], globals [B, G]) -> (logits [B, A], values [B])`` (a
#: ``ZertzNet``, such as :func:`zertz.exported.load_network` reads from a network file).
Network = Callable[["torch.Tensor", "torch.Tensor"], tuple["torch.Tensor", "torch.Tensor"]]


@dataclass
class Ranks:
    """How often the played move ranks first, or among the first five, of some decisions."""

    decisions: int = 0
    top1: int = 0
    top5: int = 0

    def add(self, scores: dict[str, float], played: str) -> None:
        """Counts a decision whose moves scored ``scores`` (a tie counts against ``played``)."""
        self.decisions += 1
        mine = scores.get(played)
        if mine is None:
            return  # the played move is not legal here: cannot happen for a replayed game
        better = sum(1 for s in scores.values() if s >= mine) - 1
        self.top1 += better < 1
        self.top5 += better < 5

    def shares(self) -> tuple[float, float]:
        """``(top1, top5)`` as shares of the decisions (0 without decisions)."""
        n = max(self.decisions, 1)
        return self.top1 / n, self.top5 / n


@dataclass
class Tally:
    """The counts of one board: every decision, and apart the placements (also with the
    removal left out, "marble": the colour and the ring right) and the captures."""

    games: int = 0
    every: Ranks = field(default_factory=Ranks)
    place: Ranks = field(default_factory=Ranks)
    marble: Ranks = field(default_factory=Ranks)
    capture: Ranks = field(default_factory=Ranks)
    value_decisions: int = 0
    value_right: int = 0

    def add(self, scores: dict[str, float], played: str) -> None:
        """Counts a decision (see :class:`Ranks`), by kind."""
        self.every.add(scores, played)
        if "x" in played:
            self.capture.add(scores, played)
            return
        self.place.add(scores, played)
        marbles: dict[str, float] = {}
        for move, score in scores.items():
            marble = move.split(",")[0]
            marbles[marble] = marbles.get(marble, 0.0) + score
        self.marble.add(marbles, played.split(",")[0])

    def result(self) -> dict[str, float | int]:
        top1, top5 = self.every.shares()
        place1, place5 = self.place.shares()
        marble1, marble5 = self.marble.shares()
        capture1, capture5 = self.capture.shares()
        return {
            "games": self.games,
            "decisions": self.every.decisions,
            "top1": top1,
            "top5": top5,
            "value": self.value_right / max(self.value_decisions, 1),
            "placements": self.place.decisions,
            "place_top1": place1,
            "place_top5": place5,
            "marble_top1": marble1,
            "marble_top5": marble5,
            "captures": self.capture.decisions,
            "capture_top1": capture1,
            "capture_top5": capture5,
        }


@dataclass
class _Pending:
    """Positions waiting for the network, and what to do with each answer."""

    games: list[Game] = field(default_factory=list)
    done: list[Callable[[np.ndarray, float], None]] = field(default_factory=list)


#: The manifest ``zertz dataset`` writes last into a dataset folder (``dataset.json``: format,
#: version, sources, settings, summary), and the version of the layout this package reads.
MANIFEST = DATASET_MANIFEST


def dataset_manifest(dataset: str | os.PathLike[str], again: str = "") -> dict[str, Any]:
    """The manifest of a complete dataset folder (``DIR/dataset.json``). A folder without one
    was left by a build that was stopped part-way, or made by an older version of zertz: it is
    refused (ValueError, one line that names the folder and what to do: ``again``, by default
    to remove it and make it again with ``zertz dataset``), and so is one of another version;
    FileNotFoundError for no folder, NotADirectoryError for a path that is not one."""
    folder = Path(dataset)
    path = folder / MANIFEST
    again = again or f"remove {folder} and make it again (zertz dataset RECORDS --out {folder})"
    if folder.exists() and not folder.is_dir():
        raise NotADirectoryError(f"{folder}: not a folder, so not a dataset")
    if not folder.is_dir():
        raise FileNotFoundError(
            f"{folder}: no such dataset folder (make it with zertz dataset RECORDS --out {folder})"
        )
    try:
        manifest = json.loads(read_text(path, "json"))
    except FileNotFoundError:
        raise ValueError(
            f"{folder} is an incomplete dataset (no {MANIFEST}: its build was stopped part-way, "
            f"or an older version of zertz made it): {again}"
        ) from None
    except (OSError, ValueError) as e:
        raise ValueError(f"{path} is not a dataset manifest ({e}): {again}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != DATASET_FORMAT:
        raise ValueError(f"{path} is not a dataset manifest: {again}")
    version = manifest.get("version")
    if version != DATASET_VERSION:
        raise ValueError(
            f"{folder} is a dataset of format version {version!r}, and this version of zertz "
            f"reads version {DATASET_VERSION}: {again}"
        )
    return manifest


def dataset_games(
    dataset: str | os.PathLike[str],
    boards: Iterable[int] | None = None,
    split: str | None = None,
) -> list[dict[str, Any]]:
    """The games of a dataset (``DIR/games.jsonl`` of ``zertz dataset``), optionally of some boards
    or one split (``"train"`` or ``"validation"``) only. An incomplete dataset is refused (see
    :func:`dataset_manifest`)."""
    dataset_manifest(dataset)
    path = Path(dataset) / DATASET_GAMES
    wanted = set(boards) if boards is not None else None
    games = []
    # A regular file only, refused before it is opened otherwise (a FIFO would block).
    with io.TextIOWrapper(open_binary(path), encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            try:
                game = json.loads(line)
                kept, board, moves = game["split"], int(game["board"]), game["moves"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"{path}:{i}: not a line of {DATASET_GAMES} ({e})") from None
            if (split is None or kept == split) and (wanted is None or board in wanted):
                if not isinstance(moves, list):
                    raise ValueError(f"{path}:{i}: moves must be a list")
                games.append(game)
    return games


def validation_games(
    dataset: str | os.PathLike[str], boards: Iterable[int] | None = None
) -> list[dict[str, Any]]:
    """The validation games of a dataset, optionally of some boards only."""
    _, validation = DATASET_SPLITS
    return dataset_games(dataset, boards, validation)


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
        import torch

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
        tally.add(scores, played)

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
    import torch

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
        game = Game(board, first_player=str(game_line.get("first_player", "P0")))
        for move in game_line["moves"]:
            if move != "pass" and len(game.legal_moves()) > 1:
                mover = game.to_play
                result = 0.0 if winner is None else (1.0 if winner == mover else -1.0)
                _score_turn(game.clone(), move, ev, tally, result)
            game.play(move)
    ev.flush()
    return {b: t.result() for b, t in sorted(tallies.items())}


def _canonical(game: Game, symmetries: int) -> str:
    """The position of ``game`` as text, the same for every symmetric image of it."""
    return min(game.transformed(s).to_text() for s in range(symmetries))


def _oracle(counts: dict[str, dict[str, int]], min_count: int) -> tuple[int, int, int, int]:
    """``(positions, decisions, top1, top5)`` of the leave-one-out oracle over the positions seen
    at least ``min_count`` times: each occurrence is predicted from the other occurrences' moves
    (most played first; a tie, or a move no other occurrence played, counts against it)."""
    positions = decisions = top1 = top5 = 0
    for moves in counts.values():
        n = sum(moves.values())
        if n < min_count:
            continue
        positions += 1
        decisions += n
        ranked = np.sort(np.fromiter(moves.values(), dtype=np.int64))
        for k in moves.values():
            if k < 2:
                continue  # no other occurrence played it
            # Other moves played at least as often as this one's k - 1 other occurrences.
            better = len(ranked) - int(np.searchsorted(ranked, k - 1)) - 1
            top1 += k * (better < 1)
            top5 += k * (better < 5)
    return positions, decisions, top1, top5


def ceiling(
    dataset: str | os.PathLike[str],
    *,
    boards: Iterable[int] | None = None,
    plies: int = 6,
    min_count: int = 100,
    log: Callable[[str], None] | None = None,
) -> dict[int, dict[str, float | int]]:
    """How predictable the players' moves are where positions recur: over every game of
    ``dataset`` (both splits), the decisions of the first ``plies`` turns (as in
    :func:`benchmark`: forced moves left out) whose position occurs at least ``min_count`` times.
    At such a position the best any policy can do is play the players' own frequencies, so the
    leave-one-out oracle (each occurrence predicted from the moves of the others) estimates the
    highest top-1 and top-5 of :func:`benchmark` there: ``top1``, ``top5``. ``class_top1`` and
    ``class_top5`` count moves that lead to the same position up to a symmetry of the board as
    one, at positions compared up to symmetry too: what is left of the players' variety when
    mirror images are not told apart (a policy cannot score that; it bounds it from above).

    Returns ``{board: {"games", "positions", "decisions", "top1", "top5", "class_positions",
    "class_decisions", "class_top1", "class_top5"}}``; ``log`` gets a line every 10,000 games."""
    if plies < 1 or min_count < 2:
        raise ValueError(f"plies must be >= 1 and min_count >= 2, not {plies} and {min_count}")
    exact: dict[int, dict[str, dict[str, int]]] = {}
    classes: dict[int, dict[str, dict[str, int]]] = {}
    played: dict[int, int] = {}
    for done, line in enumerate(dataset_games(dataset, boards), 1):
        board = int(line["board"])
        symmetries = symmetry_count(board)
        played[board] = played.get(board, 0) + 1
        by_text = exact.setdefault(board, {})
        by_class = classes.setdefault(board, {})
        game = Game(board, first_player=str(line.get("first_player", "P0")))
        # The canonical text of the position, when the last move was a decision (whose result
        # it is): each position is canonicalized once.
        here: str | None = None
        for move in line["moves"][:plies]:
            if move != "pass" and len(game.legal_moves()) > 1:
                text, here = game.to_text(), here or _canonical(game, symmetries)
                game.play(move)
                after = _canonical(game, symmetries)
                at = by_text.setdefault(text, {})
                at[move] = at.get(move, 0) + 1
                at = by_class.setdefault(here, {})
                at[after] = at.get(after, 0) + 1
                here = after
            else:
                game.play(move)
                here = None
        if log is not None and done % 10_000 == 0:
            log(f"  {done} games read")
    result: dict[int, dict[str, float | int]] = {}
    for board in sorted(played):
        positions, decisions, top1, top5 = _oracle(exact[board], min_count)
        c_positions, c_decisions, c_top1, c_top5 = _oracle(classes[board], min_count)
        n, c = max(decisions, 1), max(c_decisions, 1)
        result[board] = {
            "games": played[board],
            "positions": positions,
            "decisions": decisions,
            "top1": top1 / n,
            "top5": top5 / n,
            "class_positions": c_positions,
            "class_decisions": c_decisions,
            "class_top1": c_top1 / c,
            "class_top5": c_top5 / c,
        }
    return result
