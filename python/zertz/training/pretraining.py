"""Supervised pretraining on game records (``[pretrain]``), and the human-move benchmark of a
run's network on the dataset's validation games."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zertz._zertz import DATASET_SPLITS, action_space_size, dataset, shard_glob
from zertz.data import load_shards
from zertz.human import benchmark, dataset_manifest
from zertz.nn import check_finite
from zertz.training.fitting import Augmenter, batch_arrays, sgd_step
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
        s = dataset(pt.records, pt.dataset, boards=boards(run), seed=run.cfg.run.seed)
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
    """``pretrain.steps`` SGD steps on the training shards of the dataset, the boards in turn, a
    chunk of ``chunk_shards`` random shards at a time; the learning rate falls from
    ``pretrain.learning_rate`` to a tenth of it (cosine)."""
    pt = run.cfg.pretrain
    ensure_dataset(run, log)
    train, _ = DATASET_SPLITS
    by_board = {b: dataset_shards(pt.dataset, b, train) for b in boards(run)}
    missing = [b for b, s in by_board.items() if not s]
    if missing:
        raise ValueError(
            f"{pt.dataset}/train holds no shards of {missing} rings: make the dataset with "
            "zertz dataset RECORDS --out DIR (--boards ...)"
        )
    augment = {b: Augmenter(b, run.device) for b in by_board}
    dev = run.device
    run.net.train()
    sums = {"policy_loss": 0.0, "value_loss": 0.0, "captures_loss": 0.0}
    started = time.perf_counter()
    done, chunk, samples = 0, 0, 0
    while done < pt.steps:
        board = list(by_board)[chunk % len(by_board)]
        files = by_board[board]
        pick = torch.randperm(len(files), generator=run.gen)[: pt.chunk_shards].tolist()
        data = load_shards([files[i] for i in pick], action_space_size(board))
        n = len(data["value"])
        samples += n
        full = np.ones(n, dtype=bool)
        arrays = batch_arrays(data, data["value"], full, dev)
        order = torch.randperm(n, generator=run.gen).to(dev)
        for start in range(0, n, pt.batch_size):
            if done >= pt.steps:
                break
            progress = done / max(1, pt.steps)
            lr = pt.learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * progress)))
            idx = order[start : start + pt.batch_size]
            batch = tuple(a[idx] for a in arrays)
            at = done

            def diverged(loss: float, pl: float, vl: float, at: int = at) -> str:
                return (
                    f"pretraining diverged at step {at}: the loss is {loss}; lower "
                    "pretrain.learning_rate (in a new run folder)"
                )

            pl_f, vl_f, cl_f = sgd_step(run, lr, augment[board], batch, diverged)
            sums["policy_loss"] += pl_f
            sums["value_loss"] += vl_f
            sums["captures_loss"] += cl_f
            done += 1
        chunk += 1
        log(f"  pretraining: {done}/{pt.steps} steps, {samples} positions read")
    run.net.eval()
    check_finite(run.net, f"after pretraining step {done}")
    return {
        "pretrain_steps": done,
        "pretrain_policy_loss": sums["policy_loss"] / max(1, done),
        "pretrain_value_loss": sums["value_loss"] / max(1, done),
        "pretrain_captures_loss": sums["captures_loss"] / max(1, done),
        "pretrain_samples": samples,
        "pretrain_seconds": time.perf_counter() - started,
    }


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
