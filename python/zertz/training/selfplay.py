"""Self-play of a training run, in the engine in this process (``zertz.selfplay``): Rust's
settings of the run, chunks that survive an interruption, the replay window."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zertz._zertz import selfplay_config
from zertz.training.config import TrainConfig
from zertz.training.layout import local_chunk_name
from zertz.training.protocols import TrainingRun
from zertz.training.records import ChunkSummary, write_chunk
from zertz_engine import selfplay


def chunk_seed(*parts: int) -> int:
    """A 63-bit seed from a tuple of integers (distinct tuples, distinct seeds)."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def selfplay_settings(cfg: TrainConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """Rust's self-play settings from [selfplay], and those of the warm-up: the same
    with [warmup]'s simulations. Checked by Rust (ValueError naming a bad key). The
    warm-up plays with the rollout evaluator, which chooses Rust's search preset
    "rollout" (a high c_puct and an optimistic first-play urgency, one leaf per round: with
    uniform priors the network's settings hardly explore; BENCHMARKS.md, "Rollout MCTS and
    greedy") unless [selfplay.search] names a preset."""
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


def play_iteration(run: TrainingRun, iteration: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Plays the missing chunks of an iteration with the current self-play network (or, in
    the warm-up, rollout MCTS); returns the totals of all its chunks (those kept from before
    an interruption too)."""
    folder = run.layout.chunks(iteration)
    folder.mkdir(exist_ok=True)
    warmup = iteration < run.cfg.warmup.iterations
    guide: dict[str, Any]
    if warmup:
        guide = {"evaluator": "rollout", "config": run.warmup_settings}
        games = run.cfg.warmup.games
    else:
        # The network the checkpoint names (best.safetensors is only a convenience copy of it).
        guide = {
            "model": run.layout.model(run.state.best),
            "config": run.selfplay_settings,
            "device": run.cfg.run.device,
            "cuda_graphs": run.cfg.run.cuda_graphs_flag,
        }
        games = run.cfg.selfplay.games
    chunks = run.cfg.selfplay.chunks
    summaries: list[ChunkSummary] = []
    for c in range(chunks):
        n = games // chunks + (1 if c < games % chunks else 0)
        seed = chunk_seed(run.cfg.run.seed, iteration, c)

        def play(tmp: Path, n: int = n, seed: int = seed) -> ChunkSummary:
            summary = selfplay(tmp, games=n, seed=seed, **guide)
            # The shards by name: the folder is renamed once written.
            return ChunkSummary.from_json(summary, f"the engine's summary of {tmp}").by_name()

        # A chunk finished before an interruption is kept, and counted in the iteration's
        # totals; the leftovers of an interrupted attempt go.
        summary, played = write_chunk(folder, local_chunk_name(c), play)
        if played:
            log(
                f"  self-play chunk {c + 1}/{chunks}: {summary.games} games"
                f"{' of rollout MCTS' if warmup else ''}, "
                f"{summary.samples} positions in {summary.seconds:.1f} s"
            )
        summaries.append(summary)
    return chunk_totals(summaries)


def chunk_totals(summaries: list[ChunkSummary]) -> dict[str, float]:
    """The totals of self-play chunks from their summaries (games, samples, actions,
    evaluations, seconds, network_seconds), the share of their time spent in the network, and
    the most worker threads a chunk played on (``workers``: which games are searched together,
    and so the network's batches, depend on it; a seed plays the same games with the same
    number of workers)."""
    totals: dict[str, float] = {"workers": 0.0}
    share_time = 0.0
    for s in summaries:
        counted = {
            "games": s.games,
            "samples": s.samples,
            "actions": s.actions,
            "evaluations": s.evaluations,
            "seconds": s.seconds,
            "network_seconds": s.network_seconds or 0.0,
        }
        for k, v in counted.items():
            totals[k] = totals.get(k, 0.0) + float(v)
        totals["workers"] = max(totals["workers"], float(s.workers))
        share_time += float(s.network_share or 0.0) * s.seconds
    totals["network_share"] = share_time / max(totals.get("seconds", 0.0), 1e-9)
    return totals


def window(run: TrainingRun, iteration: int) -> list[Path]:
    """Shards of the last ``train.window`` iterations up to ``iteration``."""
    first = max(0, iteration - run.cfg.train.window + 1)
    paths: list[Path] = []
    for i in range(first, iteration + 1):
        paths += run.layout.shard_files(i)
    return paths
