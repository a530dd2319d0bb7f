"""Self-play of a training run, in the engine in this process (``zertz.selfplay``): the engine's
settings of the run, chunks that survive an interruption, the replay window."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zertz._zertz import selfplay, selfplay_config
from zertz.training.config import TrainConfig

if TYPE_CHECKING:
    from zertz.training.loop import Run


def chunk_seed(*parts: int) -> int:
    """A 63-bit seed from a tuple of integers (distinct tuples, distinct seeds)."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def selfplay_settings(cfg: TrainConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """The engine's self-play settings from [selfplay], and those of the warm-up: the same
    with [warmup]'s simulations. Checked by the engine (ValueError naming a bad key). The
    warm-up plays with the rollout evaluator, which chooses the engine's search preset
    "rollout" (a high c_puct and an optimistic first-play urgency, one leaf per round: with
    uniform priors the network's settings hardly explore; BENCHMARKS.md, issue 4) unless
    [selfplay.search] names a preset."""
    run = {"board": cfg.run.board, "blitz": cfg.run.blitz}
    settings = {**cfg.selfplay.engine, **run}
    w = cfg.warmup
    warm = {
        **settings,
        "full_simulations": w.full_simulations,
        "fast_simulations": w.fast_simulations,
    }
    checked: list[dict[str, Any]] = []
    for what, table in (("[selfplay]", settings), ("[selfplay] with [warmup]", warm)):
        try:
            selfplay_config(table)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
        checked.append(table)
    return checked[0], checked[1]


def play_iteration(run: Run, iteration: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Plays the missing chunks of an iteration with the current self-play network (or, in
    the warm-up, rollout MCTS); returns the totals of all its chunks (those kept from before
    an interruption too)."""
    folder = run.dir / "shards" / f"iter-{iteration:04d}"
    folder.mkdir(exist_ok=True)
    warmup = iteration < run.cfg.warmup.iterations
    guide: dict[str, Any]
    if warmup:
        guide = {"evaluator": "rollout", "config": run.warmup_settings}
        games = run.cfg.warmup.games
    else:
        # The network the checkpoint names (best.pt is only a convenience copy of it).
        guide = {
            "model": run.model_path(run.state.best),
            "config": run.selfplay_settings,
            "device": run.cfg.run.device,
            "cuda_graphs": run.cfg.run.cuda_graphs,
        }
        games = run.cfg.selfplay.games
    chunks = run.cfg.selfplay.chunks
    summaries: list[dict[str, Any]] = []
    for c in range(chunks):
        done = folder / f"c{c}"
        if done.exists():
            # Finished before an interruption: kept, and counted in the iteration's totals.
            summary = json.loads((done / "summary.json").read_text())
        else:
            n = games // chunks + (1 if c < games % chunks else 0)
            # Leftovers of an interrupted attempt go; each attempt writes its own folder.
            for old in folder.glob(f".c{c}.*tmp"):
                shutil.rmtree(old, ignore_errors=True)
            tmp = folder / f".c{c}.{os.getpid()}.tmp"
            seed = chunk_seed(run.cfg.run.seed, iteration, c)
            summary = selfplay(tmp, games=n, seed=seed, **guide)
            # The shards by name: the folder is renamed below.
            summary["shards"] = [Path(p).name for p in summary["shards"]]
            (tmp / "summary.json").write_text(json.dumps(summary))
            os.replace(tmp, done)
            log(
                f"  self-play chunk {c + 1}/{chunks}: {summary['games']} games"
                f"{' of rollout MCTS' if warmup else ''}, "
                f"{summary['samples']} positions in {summary['seconds']:.1f} s"
            )
        summaries.append(summary)
    return chunk_totals(summaries)


def chunk_totals(summaries: list[dict[str, Any]]) -> dict[str, float]:
    """The totals of self-play chunks from their summaries (games, samples, actions,
    evaluations, seconds, network_seconds), the share of their time spent in the network, and
    the most worker threads a chunk played on (``workers``: which games are searched together,
    and so the network's batches, depend on it; a seed plays the same games with the same
    number of workers)."""
    totals: dict[str, float] = {"workers": 0.0}
    share_time = 0.0
    for summary in summaries:
        for k in ("games", "samples", "actions", "evaluations", "seconds", "network_seconds"):
            totals[k] = totals.get(k, 0.0) + float(summary.get(k) or 0.0)
        totals["workers"] = max(totals["workers"], float(summary.get("workers") or 0.0))
        share_time += float(summary.get("network_share") or 0.0) * float(summary["seconds"])
    totals["network_share"] = share_time / max(totals.get("seconds", 0.0), 1e-9)
    return totals


def window(run: Run, iteration: int) -> list[Path]:
    """Shards of the last ``train.window`` iterations up to ``iteration``."""
    first = max(0, iteration - run.cfg.train.window + 1)
    paths: list[Path] = []
    for i in range(first, iteration + 1):
        paths += sorted((run.dir / "shards" / f"iter-{i:04d}").glob("c*/shard-*.npz"))
    return paths
