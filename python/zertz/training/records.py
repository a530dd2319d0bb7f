"""The typed records of a training run, and the writer of its self-play chunks.

- :class:`ChunkSummary`: the engine's summary of a self-play chunk (``summary.json``) as the loop
  reads it;
- :class:`ChunkRecord`: the distributed learner's record of a chunk it filed (``chunk.json``);
- :class:`PlayedChunk`: what a self-play actor sends back with a chunk's files;
- :class:`LearnerStatus`: where the distributed learner's run stands (its reply to the driver);
- :func:`write_chunk`: a finished chunk into the run folder, atomically (the one-machine loop
  and the distributed learner both file their chunks with it).

Each record is read with a check of its keys (ValueError naming the file, or what sent it, for
one without them), and the files are written as they always were (``json.dumps`` of the same
keys in the same order): run folders written before resume.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zertz.files import read_json, write_atomic
from zertz.training.layout import RECORD_FILE, SUMMARY_FILE, leftover_chunks, temporary_chunk


def _missing(
    data: object, keys: tuple[str, ...], source: str | os.PathLike[str], what: str
) -> Mapping[str, Any]:
    """``data`` as a mapping once it has every key of ``keys``; ValueError naming ``source``."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{source} is not {what}: not a JSON object")
    missing = [k for k in keys if k not in data]
    if missing:
        raise ValueError(f"{source} is not {what}: it has no {', '.join(missing)}")
    return data


def _count(data: Mapping[str, Any], key: str, source: str | os.PathLike[str], what: str) -> int:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{source} is not {what}: {key} = {value!r} is not an integer")
    return value


def _number(data: Mapping[str, Any], key: str, source: str | os.PathLike[str], what: str) -> float:
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{source} is not {what}: {key} = {value!r} is not a number")
    return float(value)


def _read_json(path: Path) -> object:
    """The JSON of a record's file (:func:`zertz.files.read_json`: a regular file within
    ``LIMITS["json"]``, OSError naming it otherwise; ValueError for one that is not JSON)."""
    return read_json(path, "json")


@dataclass(frozen=True)
class ChunkSummary:
    """The engine's summary of a self-play chunk (``zertz.selfplay``'s dict), as the loop reads
    it. ``engine`` is the whole dict, which ``summary.json`` holds unchanged."""

    games: int
    samples: int
    seconds: float
    actions: int = 0
    evaluations: int = 0
    #: Seconds in the network and their share of ``seconds`` (None: rollout MCTS, no network).
    network_seconds: float | None = None
    network_share: float | None = None
    #: The worker threads the chunk played on (0 in summaries written before it was recorded).
    workers: int = 0
    #: The chunk's shards as the engine named them (by name once filed; none on Ray).
    shards: tuple[str, ...] = ()
    engine: dict[str, Any] = field(default_factory=dict, repr=False)

    REQUIRED = ("games", "samples", "seconds")
    WHAT = "a self-play chunk's summary"

    @classmethod
    def from_json(cls, data: object, source: str | os.PathLike[str]) -> ChunkSummary:
        """The summary of the engine's dict (or of its JSON); ValueError naming ``source`` for
        one without games, samples and seconds, or with values of other types."""
        d = _missing(data, cls.REQUIRED, source, cls.WHAT)

        def count(key: str) -> int:
            return 0 if d.get(key) is None else _count(d, key, source, cls.WHAT)

        def maybe(key: str) -> float | None:
            return None if d.get(key) is None else _number(d, key, source, cls.WHAT)

        shards = d.get("shards") or []
        if not isinstance(shards, list) or not all(isinstance(s, str) for s in shards):
            raise ValueError(f"{source} is not {cls.WHAT}: shards = {shards!r}")
        return cls(
            games=_count(d, "games", source, cls.WHAT),
            samples=_count(d, "samples", source, cls.WHAT),
            seconds=_number(d, "seconds", source, cls.WHAT),
            actions=count("actions"),
            evaluations=count("evaluations"),
            network_seconds=maybe("network_seconds"),
            network_share=maybe("network_share"),
            workers=count("workers"),
            shards=tuple(shards),
            engine=dict(d),
        )

    @classmethod
    def read(cls, path: Path) -> ChunkSummary:
        """The summary in ``path`` (a chunk's ``summary.json``)."""
        return cls.from_json(_read_json(path), path)

    def to_json(self) -> dict[str, Any]:
        """What ``summary.json`` holds: the engine's dict."""
        return dict(self.engine)

    def by_name(self) -> ChunkSummary:
        """The same summary with its shards by name (its folder is renamed once written)."""
        names = [Path(p).name for p in self.shards]
        engine = {**self.engine, "shards": names} if "shards" in self.engine else self.engine
        return dataclasses.replace(self, shards=tuple(names), engine=engine)


@dataclass(frozen=True)
class ChunkRecord:
    """The distributed learner's record of a chunk it filed (``chunk.json``): who played it
    (``actor``, its chunk number ``seq`` and process ``pid``), with the network trained for
    ``version`` learner steps (or rollout MCTS: ``warmup``), the ``iteration`` it was filed in,
    ``staleness`` (learner steps between its network and the filing), its games and samples."""

    actor: int
    seq: int
    version: int
    warmup: bool
    pid: int
    iteration: int
    staleness: int
    games: int
    samples: int

    WHAT = "a chunk record of the distributed learner"

    @classmethod
    def from_json(cls, data: object, source: str | os.PathLike[str]) -> ChunkRecord:
        """The record of ``data``; ValueError naming ``source`` for one without every key or
        with values of other types."""
        names = tuple(f.name for f in dataclasses.fields(cls))
        d = _missing(data, names, source, cls.WHAT)
        if not isinstance(d["warmup"], bool):
            raise ValueError(f"{source} is not {cls.WHAT}: warmup = {d['warmup']!r}")
        counts = {k: _count(d, k, source, cls.WHAT) for k in names if k != "warmup"}
        return cls(warmup=d["warmup"], **counts)

    @classmethod
    def read(cls, path: Path) -> ChunkRecord:
        """The record in ``path`` (a chunk's ``chunk.json``)."""
        return cls.from_json(_read_json(path), path)

    def to_json(self) -> dict[str, Any]:
        """What ``chunk.json`` holds."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class PlayedChunk:
    """A self-play actor's description of a chunk it played (its files travel beside it):
    chunk ``seq`` of actor ``actor``, played by process ``pid`` from the time ``started`` with
    the network of learner step ``version`` (or rollout MCTS: ``warmup``)."""

    actor: int
    seq: int
    version: int
    warmup: bool
    summary: ChunkSummary
    started: float
    pid: int


@dataclass(frozen=True)
class LearnerStatus:
    """Where the distributed learner's run stands (:meth:`zertz.training.learner.Learner.status`):
    the iteration and the run's ``iterations``, the ``step``, whether the run is ``done``,
    whether the current iteration has the games it needs (``ready``) and is the run's ``last``,
    whether the pretraining is still to do (``pretrain``), each actor's next chunk number
    (``next_seq``), the log lines since the last call, and the network self-play uses now
    (``rollout`` during the warm-up, else ``model``: its bytes, None when the driver has it
    already). A reply to
    :meth:`~zertz.training.learner.Learner.receive` adds the iteration it ``trained`` (its
    metrics line, or None), the chunks received again (``duplicates``) and those ``lost`` with
    their node, by ``(actor, seq)``."""

    iteration: int
    iterations: int
    step: int
    rollout: bool
    model: bytes | None
    done: bool
    ready: bool
    last: bool
    pretrain: bool
    next_seq: dict[int, int]
    logs: list[str]
    trained: dict[str, Any] | None = None
    duplicates: int = 0
    lost: list[tuple[int, int]] = field(default_factory=list)

    WHAT = "a status of the distributed learner"

    @classmethod
    def from_dict(cls, data: object, source: str) -> LearnerStatus:
        """The status of a plain dict (:meth:`to_dict`); ValueError naming ``source`` for one
        without every key a status has (``trained``, ``duplicates`` and ``lost`` may be left
        out)."""
        optional = ("trained", "duplicates", "lost")
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in optional)
        d = _missing(data, names, source, cls.WHAT)
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def write_chunk(
    folder: Path,
    name: str,
    fill: Callable[[Path], ChunkSummary],
    record: ChunkRecord | None = None,
) -> tuple[ChunkSummary, bool]:
    """Files chunk ``name`` in ``folder`` (an iteration's ``shards/iter-N``) atomically: the
    leftovers of interrupted attempts go (:func:`leftover_chunks`), ``fill`` writes the chunk's
    files into a temporary folder (``.NAME.partial-PID``, which it makes) and returns its
    summary, which is written (``summary.json``) with ``record`` (``chunk.json``), and the
    folder is renamed into place. Returns the summary and True; a chunk already there is not
    written again: its summary and False."""
    done = folder / name
    if done.exists():
        return ChunkSummary.read(done / SUMMARY_FILE), False
    folder.mkdir(parents=True, exist_ok=True)
    for old in leftover_chunks(folder, name):
        shutil.rmtree(old, ignore_errors=True)
    tmp = temporary_chunk(folder, name)
    summary = fill(tmp)
    # A full disk: one line naming the file (zertz.files.write_atomic).
    write_atomic(tmp / SUMMARY_FILE, json.dumps(summary.to_json()).encode())
    if record is not None:
        write_atomic(tmp / RECORD_FILE, json.dumps(record.to_json()).encode())
    os.replace(tmp, done)
    return summary, True
