"""Supervised pretraining on game records (``[pretrain]``), and the human-move benchmark of a
run's network on the dataset's validation games."""

from __future__ import annotations

import math
import numbers
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from zertz._zertz import DATASET_SPLITS, action_space_size, shard_glob
from zertz._zertz import dataset as make_dataset
from zertz.data import load_shards
from zertz.human import benchmark, dataset_manifest
from zertz.nn import ZertzNet, check_finite
from zertz.training.fitting import Augmenter, Learner, batch_arrays, sgd_step
from zertz.training.progress import RunProgress
from zertz.training.protocols import TrainingRun


def dataset_shards(dataset: str | Path, board: int, split: str) -> list[Path]:
    """The shards of ``board`` in a dataset's ``split`` (one of ``zertz.DATASET_SPLITS``): the
    writer of its rings."""
    return sorted((Path(dataset) / split).glob(shard_glob(board)))


def boards(run: TrainingRun) -> list[int]:
    """The boards the run pretrains on (the run's own when ``pretrain.boards`` is empty)."""
    return sorted(set(run.cfg.pretrain.boards or [run.board]))


def ensure_dataset(run: TrainingRun, log: Callable[[str], None]) -> None:
    """Makes ``pretrain.dataset`` from ``pretrain.records`` when it does not exist yet (or is an
    empty folder), then checks that it is a complete dataset: a folder without its manifest (a
    build stopped part-way, or one of an older version) is refused with ValueError, never used
    (:func:`zertz.human.dataset_manifest`)."""
    pt = run.cfg.pretrain
    folder = Path(pt.dataset)
    if pt.records and not (folder.is_dir() and any(folder.iterdir())):
        log(f"making {pt.dataset} from {', '.join(pt.records)}")
        s = make_dataset(pt.records, pt.dataset, boards=boards(run), seed=run.cfg.run.seed)
        for leftover in s["removed_leftovers"]:
            log(f"  removed {leftover}: an earlier build of {pt.dataset} was stopped part-way")
        log(
            f"  {s['train_games']} training games ({s['train_samples']} positions), "
            f"{s['validation_games']} validation games; left out {s['filtered']}, "
            f"failed {s['failed']}"
        )
    again = (
        f"remove {folder}, and the run makes it again from pretrain.records" if pt.records else ""
    )
    dataset_manifest(folder, again)


def pretrain(run: TrainingRun, log: Callable[[str], None]) -> dict[str, Any]:
    """``pretrain.steps`` SGD steps on the training shards of the dataset
    (:func:`learn_shards`), with the run's optimizer and generator."""
    pt = run.cfg.pretrain
    ensure_dataset(run, log)
    by_board = training_shards(pt.dataset, boards(run))
    run.net.train()
    stats = learn_shards(
        Learner.of(run),
        by_board,
        steps=pt.steps,
        batch_size=pt.batch_size,
        learning_rate=pt.learning_rate,
        chunk_shards=pt.chunk_shards,
        device=run.device,
        report=lambda done, samples: log(
            f"  pretraining: {done}/{pt.steps} steps, {samples} positions read"
        ),
        advice="lower pretrain.learning_rate (in a new run folder)",
    )
    run.net.eval()
    check_finite(run.net, f"after pretraining step {stats['pretrain_steps']}")
    return stats


def training_shards(dataset: str | Path, boards: list[int]) -> dict[int, list[Path]]:
    """The training shards of each of ``boards`` in ``dataset``; ValueError when a board has
    none."""
    train, _ = DATASET_SPLITS
    by_board = {b: dataset_shards(dataset, b, train) for b in boards}
    missing = [b for b, s in by_board.items() if not s]
    if missing:
        raise ValueError(
            f"{dataset}/train holds no shards of {missing} rings: make the dataset with "
            "zertz dataset RECORDS --out DIR (--boards ...)"
        )
    return by_board


def learn_shards(
    learner: Learner,
    by_board: dict[int, list[Path]],
    *,
    steps: int,
    batch_size: int,
    learning_rate: float,
    chunk_shards: int,
    device: torch.device,
    report: Callable[[int, int], None],
    advice: str,
) -> dict[str, Any]:
    """``steps`` SGD steps of the learner's network (in training mode) on the shards of
    ``by_board``, the boards in turn, a chunk of ``chunk_shards`` random shards at a time (each
    chunk learnt once, in random batches under random symmetries); the learning rate falls from
    ``learning_rate`` to a tenth of it (cosine). ``report(steps done, positions read)`` after
    each chunk. The losses' means and the counts back; NonFiniteError (ending with ``advice``)
    where the loss is not finite."""
    augment = {b: Augmenter(b, device) for b in by_board}
    sums = {"policy_loss": 0.0, "value_loss": 0.0, "captures_loss": 0.0}
    started = time.perf_counter()
    done, chunk, samples = 0, 0, 0
    while done < steps:
        board = list(by_board)[chunk % len(by_board)]
        files = by_board[board]
        pick = torch.randperm(len(files), generator=learner.gen)[:chunk_shards].tolist()
        data = load_shards([files[i] for i in pick], action_space_size(board))
        n = len(data["value"])
        samples += n
        # A dataset's positions are all policy targets; self-play's only its full searches.
        arrays = batch_arrays(data, data["value"], data["full_search"], device)
        order = torch.randperm(n, generator=learner.gen).to(device)
        for start in range(0, n, batch_size):
            if done >= steps:
                break
            progress = done / max(1, steps)
            lr = learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))
            idx = order[start : start + batch_size]
            batch = tuple(a[idx] for a in arrays)
            at = done

            def diverged(loss: float, pl: float, vl: float, at: int = at) -> str:
                return f"pretraining diverged at step {at}: the loss is {loss}; {advice}"

            pl_f, vl_f, cl_f = sgd_step(learner, lr, augment[board], batch, diverged)
            sums["policy_loss"] += pl_f
            sums["value_loss"] += vl_f
            sums["captures_loss"] += cl_f
            done += 1
        chunk += 1
        report(done, samples)
    return {
        "pretrain_steps": done,
        "pretrain_policy_loss": sums["policy_loss"] / max(1, done),
        "pretrain_value_loss": sums["value_loss"] / max(1, done),
        "pretrain_captures_loss": sums["captures_loss"] / max(1, done),
        "pretrain_samples": samples,
        "pretrain_seconds": time.perf_counter() - started,
    }


def clone(
    network: Any,
    dataset: str | os.PathLike[str],
    *,
    records: Sequence[str | os.PathLike[str]] = (),
    boards: list[int] | None = None,
    steps: int = 3000,
    batch_size: int = 256,
    learning_rate: float = 2e-3,
    weight_decay: float = 1e-4,
    chunk_shards: int = 4,
    value_weight: float = 1.0,
    captures_weight: float = 1.0,
    seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool = True,
) -> dict[str, Any]:
    """Behaviour cloning: ``network`` learns the moves (and the results) of the games of a
    dataset made by ``zertz dataset`` / :func:`zertz.dataset` (its training shards), in place,
    as ``[pretrain]`` of a training run does: ``steps`` AdamW steps of ``batch_size`` positions
    under random symmetries of the board, the learning rate falling from ``learning_rate`` to a
    tenth (cosine); the loss is the policy's cross-entropy plus ``value_weight`` times the
    value's squared error plus ``captures_weight`` times the auxiliary head's (each side's
    captures at the game's end, which trains the trunk too). A progress bar with the ETA goes to
    stderr (a terminal or a notebook) and a line at the end unless ``progress`` is False.
    Returns the losses' means, the positions read and the seconds.

    ``network`` is a :class:`~zertz.nn.ZertzNet`, a :class:`zertz.boardnet.BoardNet` or a
    :class:`zertz.sb3.BoardPolicy` (their network learns; a policy's optimizer is left alone).
    ``dataset`` is made from ``records`` (files, folders or archives of boardspace.net
    records: ``../shared/records/boardspace-zertz.tar.xz``) when it does not exist yet; a folder
    that is not a complete dataset is refused (ValueError). ``boards``: the boards learnt
    (default: the network's). The network is in eval mode after."""
    net = _network_of(network)
    learning = _Learning(
        steps=steps,
        batch_size=batch_size,
        chunk_shards=chunk_shards,
        learning_rate=learning_rate,
        weight_decay=weight_decay,
        value_weight=value_weight,
        captures_weight=captures_weight,
        seed=seed,
    )
    learnt = sorted(set(boards or net.boards))
    if bad := [b for b in learnt if b not in net.boards]:
        raise ValueError(f"the network plays boards {net.boards}, not {bad}")
    if isinstance(records, str | bytes | os.PathLike):
        # A path is a sequence of characters: each would be read as a record.
        raise TypeError(f"records must be a list of paths, not one path: [{records!r}]")
    folder = _folder("dataset", dataset)
    if records and not (folder.is_dir() and any(folder.iterdir())):
        made = make_dataset(list(records), folder, boards=learnt, seed=seed)
        if progress:
            print(
                f"clone: made {folder}: {made['train_games']} training games "
                f"({made['train_samples']} positions)",
                file=sys.stderr,
            )
    again = f"remove {folder}, and clone makes it again from records" if records else ""
    dataset_manifest(folder, again)
    return _learn("clone", net, training_shards(folder, learnt), learning, device, progress)


def distill(
    network: Any,
    games: str | os.PathLike[str],
    *,
    teacher: str | os.PathLike[str] = "builtin",
    board: int | None = None,
    games_played: int = 400,
    simulations: int = 64,
    threads: int = 0,
    steps: int = 2000,
    batch_size: int = 256,
    learning_rate: float = 2e-3,
    weight_decay: float = 1e-4,
    chunk_shards: int = 4,
    value_weight: float = 1.0,
    captures_weight: float = 1.0,
    seed: int = 0,
    device: str | torch.device = "cpu",
    progress: bool = True,
) -> dict[str, Any]:
    """Distillation: ``network`` learns the search of ``teacher`` (a network file, by default
    the built-in network), in place. The teacher plays ``games_played`` games against itself on
    ``board`` (default: the network's first) with ``simulations`` simulations a move on
    ``threads`` threads (0: every core), written as self-play shards into the folder ``games``;
    then the network learns the visit counts of each search as its policy and each game's result
    as its value, ``steps`` AdamW steps as :func:`clone` takes them. A search's visits are a
    better target than the move a person played or the teacher's raw policy: they hold what the
    search found out.

    A folder ``games`` that already holds shards is learnt as it is (no game is played), so the
    games of one teacher can start several networks; one that holds other self-play output (game
    records without shards) is refused (FileExistsError, from the engine). Needs the engine
    (``zertz[train]``). Returns the losses' means, the positions read and the seconds, with
    ``selfplay_seconds`` and ``games`` of the teacher's games (0 when they were there
    already)."""
    from zertz_engine import BUILTIN_MODEL, MIN_SIMULATIONS, selfplay

    net = _network_of(network)
    learning = _Learning(
        steps=steps,
        batch_size=batch_size,
        chunk_shards=chunk_shards,
        learning_rate=learning_rate,
        weight_decay=weight_decay,
        value_weight=value_weight,
        captures_weight=captures_weight,
        seed=seed,
    )
    rings = net.boards[0] if board is None else board
    if rings not in net.boards:
        raise ValueError(f"the network plays boards {net.boards}, not {rings!r}")
    # Checked even where the games are there already, so that a call's mistake is seen at once.
    for name, count, least in (
        ("games_played", games_played, 1),
        ("simulations", simulations, MIN_SIMULATIONS),
        ("threads", threads, 0),
    ):
        if isinstance(count, bool) or not isinstance(count, int) or count < least:
            raise ValueError(f"{name} must be an integer of at least {least}, not {count!r}")
    if not isinstance(teacher, str | os.PathLike):
        # (None would be taken by the engine: games of a search without any network.)
        raise TypeError(
            f"teacher must be a network file's path or {BUILTIN_MODEL!r}, not "
            f"{type(teacher).__name__}"
        )
    folder = _folder("games", games)
    shards = sorted(folder.glob(shard_glob())) if folder.is_dir() else []
    played: dict[str, Any] = {"games": 0, "seconds": 0.0}
    if not shards:
        if progress:
            print(
                f"distill: {teacher} plays {games_played} games at {simulations} simulations "
                f"a move into {folder}",
                file=sys.stderr,
            )
        played = selfplay(
            folder,
            model=teacher,
            board=rings,
            games=games_played,
            full_simulations=simulations,
            full_search_probability=1.0,
            threads=threads,
            seed=seed,
        )
        shards = sorted(folder.glob(shard_glob()))
        if not shards:
            raise ValueError(f"the teacher's {played['games']} games wrote no shard in {folder}")
    stats = _learn("distill", net, {rings: shards}, learning, device, progress)
    return {**stats, "games": played["games"], "selfplay_seconds": played["seconds"]}


@dataclass(frozen=True)
class _Learning:
    """The settings of the supervised steps of :func:`clone` and :func:`distill`, checked when
    made (before anything is read or learnt): ValueError for a count that is not a positive
    int, a rate or weight that is not a finite number (above 0 for the learning rate, at least 0
    for the others) or a seed that is not an int from 0 to ``_MAX_SEED`` (64 bits)."""

    steps: int
    batch_size: int
    chunk_shards: int
    learning_rate: float
    weight_decay: float
    value_weight: float
    captures_weight: float
    seed: int

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "chunk_shards"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        for name in ("learning_rate", "weight_decay", "value_weight", "captures_weight"):
            number = getattr(self, name)
            low = "above 0" if name == "learning_rate" else "at least 0"
            if not _finite(number) or number < 0 or (name == "learning_rate" and number == 0):
                raise ValueError(f"{name} must be a finite number {low}, not {number!r}")
        seed = self.seed
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= _MAX_SEED:
            raise ValueError(f"seed must be an integer from 0 to {_MAX_SEED}, not {seed!r}")


#: The largest seed: torch's generators and the engine's self-play take 64 bits.
_MAX_SEED = 2**64 - 1


def _finite(number: object) -> bool:
    """Whether ``number`` is a real number (not a bool) that a float holds, finite."""
    if isinstance(number, bool) or not isinstance(number, numbers.Real):
        return False
    try:
        return math.isfinite(float(number))
    except OverflowError:  # an int past the floats
        return False


def _folder(name: str, path: str | os.PathLike[str]) -> Path:
    """The folder ``path`` as a Path; ValueError for an empty path (which would be the current
    folder) and TypeError for one that is not a path."""
    if not os.fspath(path):
        raise ValueError(f"{name} must name a folder, not an empty path")
    return Path(path)


def _learn(
    what: str,
    net: ZertzNet,
    by_board: dict[int, list[Path]],
    learning: _Learning,
    device: str | torch.device,
    progress: bool,
) -> dict[str, Any]:
    """The supervised steps of :func:`clone` and :func:`distill` on the shards of ``by_board``,
    with a progress bar and a closing line named ``what``; the network is in eval mode after."""
    dev = torch.device(device)
    net.to(dev).train()
    gen = torch.Generator().manual_seed(learning.seed)
    opt = torch.optim.AdamW(
        net.parameters(), lr=learning.learning_rate, weight_decay=learning.weight_decay
    )
    bar = RunProgress(learning.steps, 0, log=lambda line: None, unit="steps") if progress else None
    if bar is not None:
        bar.begin_iterations()

    def report(done: int, samples: int) -> None:
        if bar is not None:
            bar.done = done
            bar.phase = f"{samples} positions read"
            bar.draw()

    try:
        stats = learn_shards(
            Learner(net, opt, gen, learning.value_weight, learning.captures_weight),
            by_board,
            steps=learning.steps,
            batch_size=learning.batch_size,
            learning_rate=learning.learning_rate,
            chunk_shards=learning.chunk_shards,
            device=dev,
            report=report,
            advice="lower learning_rate",
        )
    finally:
        net.eval()
        if bar is not None:
            bar.close()
    check_finite(net, f"after {what} step {stats['pretrain_steps']}")
    if progress:
        print(
            f"{what}: {stats['pretrain_steps']} steps in {stats['pretrain_seconds']:.0f} s, "
            f"{stats['pretrain_samples']} positions read; policy loss "
            f"{stats['pretrain_policy_loss']:.3f}, value loss {stats['pretrain_value_loss']:.3f}",
            file=sys.stderr,
        )
    return {k.removeprefix("pretrain_"): v for k, v in stats.items()}


def _network_of(network: Any) -> ZertzNet:
    """The :class:`~zertz.nn.ZertzNet` of a network, a :class:`~zertz.boardnet.BoardNet` or a
    policy holding one (``body``); TypeError otherwise."""
    for candidate in (network, getattr(network, "net", None), getattr(network, "body", None)):
        if isinstance(candidate, ZertzNet):
            return candidate
        inner = getattr(candidate, "net", None)
        if isinstance(inner, ZertzNet):
            return inner
    raise TypeError(
        "network must be a ZertzNet, a zertz.boardnet.BoardNet or a zertz.sb3.BoardPolicy, "
        f"not {type(network).__name__}"
    )


def human_moves(
    run: TrainingRun, log: Callable[[str], None] = print
) -> dict[str, dict[str, float | int]] | None:
    """The human-move benchmark of the run's network on the dataset's validation games of its
    boards (None without a dataset or with ``benchmark_games = 0``), keyed by the ring count as
    text (JSON keys)."""
    pt = run.cfg.pretrain
    if not pt.dataset or pt.benchmark_games == 0:
        return None
    ensure_dataset(run, log)
    result = benchmark(
        run.net, pt.dataset, boards=boards(run), max_games=pt.benchmark_games, device=run.device
    )
    return {str(b): r for b, r in result.items()}


def describe(human: dict[str, dict[str, float | int]]) -> str:
    """One line per board: top-1, top-5 and the value's share of winners."""
    return "; ".join(
        f"{b} rings: top-1 {r['top1']:.1%}, top-5 {r['top5']:.1%}, value {r['value']:.1%} "
        f"({r['decisions']} decisions of {r['games']} games)"
        for b, r in human.items()
    )
