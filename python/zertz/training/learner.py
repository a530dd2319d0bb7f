"""The learner of a distributed run (:mod:`zertz.training.distributed`): the run folder, the
training and the evaluation, in one Ray actor."""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import torch

from zertz.files import read_bytes
from zertz.training import loop
from zertz.training.actor import ray_module
from zertz.training.config import parse_config
from zertz.training.layout import RECORD_FILE, SUMMARY_FILE, chunk_name
from zertz.training.records import (
    ChunkRecord,
    ChunkSummary,
    LearnerStatus,
    PlayedChunk,
    write_chunk,
)
from zertz.training.selfplay import chunk_totals


class Learner:
    """The learner (Ray actor): the run folder, the training, the evaluation."""

    def __init__(self, source: str, folder: str) -> None:
        cfg = parse_config(source)
        threads = cfg.run.torch_threads or max(1, int(cfg.distributed.learner_cpus))
        torch.set_num_threads(threads)
        self.run = loop.Run(cfg, folder)
        self.run.start()
        self.logs: list[str] = []
        #: Chunks filed, by name.
        self.chunks: dict[str, ChunkRecord] = {}
        for name, path in self.run.layout.chunk_records().items():
            self.chunks[name] = ChunkRecord.read(path)
        self.started = time.perf_counter()

    def log(self, line: str) -> None:
        self.logs.append(line)

    def pid(self) -> int:
        """The learner's process (for tests that kill it)."""
        return os.getpid()

    def status(self, version: int = -1) -> LearnerStatus:
        """Where the run stands (:class:`~zertz.training.records.LearnerStatus`), with the log
        lines since the last call; the network's bytes are left out when the driver's is
        already version ``version``."""
        run = self.run
        next_seq: dict[int, int] = {}
        for record in self.chunks.values():
            a = record.actor
            next_seq[a] = max(next_seq.get(a, 0), record.seq + 1)
        logs, self.logs = self.logs, []
        rollout = run.state.iteration < run.cfg.warmup.iterations
        # The network goes only to a driver that has not got this version (none in rollouts).
        send = not rollout and version != run.state.step
        ready = self.ready()
        return LearnerStatus(
            iteration=run.state.iteration,
            iterations=run.cfg.run.iterations,
            step=run.state.step,
            rollout=rollout,
            model=read_bytes(run.layout.best, "network") if send else None,
            done=run.state.iteration >= run.cfg.run.iterations,
            ready=ready,
            last=ready and run.state.iteration + 1 == run.cfg.run.iterations,
            pretrain=bool(run.cfg.pretrain.steps and not run.state.pretrained),
            next_seq=next_seq,
            logs=logs,
        )

    def pretrain(self) -> LearnerStatus:
        """The pretraining on records (``[pretrain]``) before the first iteration."""
        if self.run.cfg.pretrain.steps and not self.run.state.pretrained:
            loop.pretrain(self.run, self.log)
        return self.status()

    def _file(self, played: PlayedChunk, files: dict[str, bytes]) -> bool:
        """Files a chunk into the current iteration's folder; False for one filed before."""
        name = chunk_name(played.actor, played.seq)
        if name in self.chunks:
            return False
        run = self.run
        iteration = run.state.iteration
        record = ChunkRecord(
            actor=played.actor,
            seq=played.seq,
            version=played.version,
            warmup=played.warmup,
            pid=played.pid,
            iteration=iteration,
            staleness=run.state.step - played.version,
            games=played.summary.games,
            samples=played.summary.samples,
        )

        def fill(tmp: Path) -> ChunkSummary:
            tmp.mkdir()
            for file, data in files.items():
                if Path(file).name != file or file.startswith("."):
                    raise ValueError(
                        f"chunk {name}: a file name that is not a plain name: {file!r}"
                    )
                (tmp / file).write_bytes(data)
            return played.summary

        folder = run.layout.chunks(iteration)
        _, written = write_chunk(folder, name, fill, record)
        self.chunks[name] = record if written else ChunkRecord.read(folder / name / RECORD_FILE)
        return written

    def _current(self) -> list[ChunkRecord]:
        """The chunks filed in the iteration now being played."""
        i = self.run.state.iteration
        return [r for r in self.chunks.values() if r.iteration == i]

    def ready(self) -> bool:
        """Whether the chunks of the current iteration are enough to train it: ``warmup.games``
        games in the warm-up, else ``train.steps * train.batch_size / train_ratio`` positions."""
        run = self.run
        cfg = run.cfg
        if run.state.iteration >= cfg.run.iterations:
            return False
        chunks = self._current()
        if run.state.iteration < cfg.warmup.iterations:
            return sum(r.games for r in chunks) >= cfg.warmup.games
        needed = cfg.train.steps * cfg.train.batch_size / cfg.distributed.train_ratio
        return sum(r.samples for r in chunks) >= needed

    def receive(
        self, chunks: list[tuple[Any, Any]], version: int, final: bool = False
    ) -> LearnerStatus:
        """Files the chunks (references to each one's description and files), then trains one
        iteration if the current one is ready, the run's last one only when ``final`` says that
        the actors have stopped. Returns :meth:`status` with ``trained`` (the
        iteration's metrics line, or None), ``duplicates`` (chunks filed before: not counted
        again) and ``lost`` (``(actor, seq)`` of chunks whose files are gone with their node:
        the driver has them played again)."""
        ray = ray_module()
        duplicates = 0
        lost: list[tuple[int, int]] = []
        for played_ref, files_ref in chunks:
            played: PlayedChunk = ray.get(played_ref)
            try:
                files = ray.get(files_ref)
            except ray.exceptions.RayError as e:
                self.log(f"  chunk {played.seq} of actor {played.actor} is lost ({e}): again")
                lost.append((played.actor, played.seq))
                continue
            if not self._file(played, files):
                duplicates += 1
        if duplicates:
            self.log(f"  {duplicates} chunk(s) received again and not counted twice")
        last = self.run.state.iteration + 1 == self.run.cfg.run.iterations
        trained = self._train() if self.ready() and (final or not last) else None
        return dataclasses.replace(
            self.status(version), trained=trained, duplicates=duplicates, lost=lost
        )

    def _train(self) -> dict[str, Any]:
        run = self.run
        i = run.state.iteration
        chunks = self._current()
        started = time.perf_counter()
        self.log(f"iteration {i + 1}/{run.cfg.run.iterations}")
        # Every trained iteration has its self-play folder, chunks or none (State.check_run).
        run.layout.chunks(i).mkdir(parents=True, exist_ok=True)
        totals = chunk_totals(
            [
                ChunkSummary.read(run.layout.chunk(i, chunk_name(r.actor, r.seq)) / SUMMARY_FILE)
                for r in chunks
            ]
        )
        stale = [r.staleness for r in chunks]
        actors = sorted({r.actor for r in chunks})
        self.log(
            f"  {len(chunks)} chunks from actors {actors}: {int(totals.get('games', 0))} games, "
            f"{int(totals.get('samples', 0))} positions; networks "
            f"{sum(stale) / max(1, len(stale)):.0f} steps old on average, {max(stale, default=0)}"
            " at most"
        )
        extra = {
            "distributed": True,
            "chunks": len(chunks),
            "actors": len(actors),
            "staleness_mean": sum(stale) / max(1, len(stale)),
            "staleness_max": max(stale, default=0),
            "wall_seconds": time.perf_counter() - self.started,
        }
        return loop.complete_iteration(run, i, totals, started, self.log, extra)
