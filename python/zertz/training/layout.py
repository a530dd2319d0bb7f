"""The run folder's layout: every path of a training run, in one place (:class:`RunLayout`).

A run lives in one folder::

    RUN/config.toml            the run's settings (a copy; a resumed run must use the same ones)
    RUN/.lock                  held by the process that trains the run (one at a time)
    RUN/checkpoint.pt          model, optimizer, step, iteration, RNG states, ladder (atomic)
    RUN/shards/iter-0003/c1/   shards and records of one self-play chunk (complete folders only;
                               c-a002-000017/ on Ray: chunk 17 of actor 2)
        shard-*.npz, games-*.jsonl   the engine's shards and game records
        summary.json           the engine's summary of the chunk (shards by name)
        chunk.json             on Ray only: who played it with which network (ChunkRecord)
    RUN/shards/iter-0003/.c1.partial-PID/  a chunk being written (renamed into place once whole)
    RUN/models/iter-0003.safetensors  network files (iter-N has been trained for N iterations)
    RUN/models/iter-0003-average.safetensors  the mean of the last networks (train.average)
    RUN/models/best.safetensors  the network self-play uses when gating is on; the latest otherwise
    RUN/matches/iter-0003-TAG.jsonl  every evaluation game (TAG: previous, or the opponent);
                               ``.iter-0003-TAG.jsonl.partial-PID`` while the match is played
    RUN/metrics.jsonl          one JSON object per iteration
    RUN/tb/                    TensorBoard files
    RUN/curves.png             ``zertz plot RUN``'s figure (by default)

These names are those of every run written so far: a run folder resumes only if they stay; but
for the networks, which an older zertz exported as TorchScript (``models/iter-0003.pt``,
``models/best.pt``: :meth:`RunLayout.legacy_networks`) and a run converts into network files
when it resumes (:func:`zertz.exported.convert_network`, which runs nothing of them). A file or
folder being written is ``.NAME.partial-PID`` beside it, Rust's one name of a partial
output (:func:`zertz._zertz.partial_path`; :func:`leftovers`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from zertz import files
from zertz._zertz import partial_path, shard_glob

#: The suffix of the run's networks (network files: :data:`zertz.exported.NETWORK_SUFFIX`).
NETWORK_SUFFIX = ".safetensors"

#: The suffix of the networks an older zertz exported as TorchScript (programs, which a run
#: converts when it resumes and never runs).
LEGACY_SUFFIX = ".pt"

#: The chunk folders of a distributed run: ``c-a{actor:03d}-{seq:06d}`` (the one-machine loop's
#: are ``c0``, ``c1``...; the window reads both).
CHUNK_PREFIX = "c-a"

#: The engine's summary of a chunk, in its folder.
SUMMARY_FILE = "summary.json"

#: The distributed learner's record of a chunk, in its folder.
RECORD_FILE = "chunk.json"


def opponent_tag(opponent: str) -> str:
    """The TAG of ``matches/iter-N-TAG.jsonl`` for a match against ``opponent`` (a player spec as
    the config spells it); two opponents of one evaluation must not share one.

    >>> opponent_tag("mcts:1000")
    'mcts_1000'
    """
    return re.sub(r"[^A-Za-z0-9.-]+", "_", opponent)


def local_chunk_name(chunk: int) -> str:
    """The folder name of chunk ``chunk`` of an iteration of the one-machine loop.

    >>> local_chunk_name(1)
    'c1'
    """
    return f"c{chunk}"


def chunk_name(actor: int, seq: int) -> str:
    """The folder name of chunk ``seq`` of actor ``actor``.

    >>> chunk_name(3, 17)
    'c-a003-000017'
    """
    return f"{CHUNK_PREFIX}{actor:03d}-{seq:06d}"


def parse_chunk_name(name: str) -> tuple[int, int] | None:
    """``(actor, seq)`` of a chunk folder's name, None for other names.

    >>> parse_chunk_name("c-a003-000017"), parse_chunk_name("c0")
    ((3, 17), None)
    """
    if not name.startswith(CHUNK_PREFIX):
        return None
    actor, _, seq = name[len(CHUNK_PREFIX) :].partition("-")
    if not (actor.isdigit() and seq.isdigit()):
        return None
    return int(actor), int(seq)


def temporary_chunk(folder: Path, name: str) -> Path:
    """The folder this process writes chunk ``name`` of ``folder`` into before it renames it
    into place: ``.NAME.partial-PID``, Rust's name of every partial output.

    >>> temporary_chunk(Path("iter-0001"), "c1").name == f".c1.partial-{os.getpid()}"
    True
    """
    return partial_path(folder / name)


def leftovers(target: Path) -> list[Path]:
    """The partial outputs of ``target`` (``.NAME.partial-PID`` beside it) that earlier attempts
    left (:func:`zertz.files.leftovers`)."""
    return files.leftovers(target.parent, target.name)


def leftover_chunks(folder: Path, name: str) -> list[Path]:
    """The temporary folders of chunk ``name`` in ``folder`` that earlier attempts left
    (:func:`leftovers`), and those of the versions before Rust's name (``.NAME.tmp``,
    ``.NAME.PID.tmp``: no process writes them any more)."""
    return sorted([*leftovers(folder / name), *folder.glob(f".{name}.*tmp")])


@dataclass(frozen=True)
class RunLayout:
    """The paths of the run folder ``root`` (the tree is in the module's docs)."""

    root: Path

    @classmethod
    def of_checkpoint(cls, checkpoint: str | os.PathLike[str]) -> RunLayout:
        """The run folder of the checkpoint ``checkpoint``: the folder that holds it.

        >>> RunLayout.of_checkpoint("runs/a/checkpoint.pt").config.as_posix()
        'runs/a/config.toml'
        """
        return cls(Path(checkpoint).parent)

    @classmethod
    def of_match_games(cls, path: str | os.PathLike[str]) -> RunLayout | None:
        """The run folder whose match games ``path`` names (:meth:`match_games`, read from the
        path alone, as a run's metrics name them: the folder may have moved since), or None for
        a path that is not in a run's ``matches/``.

        >>> RunLayout.of_match_games("/old/run/matches/iter-0002-random.jsonl").root.as_posix()
        '/old/run'
        >>> RunLayout.of_match_games("/old/run/iter-0002-random.jsonl") is None
        True
        """
        folder = Path(path).parent
        layout = cls(folder.parent)
        return layout if layout.matches == folder else None

    @property
    def config(self) -> Path:
        return self.root / "config.toml"

    @property
    def lock(self) -> Path:
        return self.root / ".lock"

    @property
    def checkpoint(self) -> Path:
        return self.root / "checkpoint.pt"

    @property
    def metrics(self) -> Path:
        return self.root / "metrics.jsonl"

    @property
    def tensorboard(self) -> Path:
        return self.root / "tb"

    @property
    def curves(self) -> Path:
        return self.root / "curves.png"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def shards(self) -> Path:
        return self.root / "shards"

    @property
    def matches(self) -> Path:
        return self.root / "matches"

    @property
    def folders(self) -> tuple[Path, ...]:
        """The folders a run makes when it starts."""
        return (self.shards, self.models, self.matches)

    def model(self, iteration: int) -> Path:
        """The network after ``iteration`` iterations, as exported."""
        return self.models / f"iter-{iteration:04d}{NETWORK_SUFFIX}"

    def average(self, iteration: int) -> Path:
        """The mean of the networks up to ``iteration`` (``train.average``)."""
        return self.models / f"iter-{iteration:04d}-average{NETWORK_SUFFIX}"

    @property
    def best(self) -> Path:
        """The best network so far (a copy of one of :meth:`model` or :meth:`average`)."""
        return self.models / f"best{NETWORK_SUFFIX}"

    def is_network(self, path: Path) -> bool:
        """Whether ``path`` is one of the run's exported networks (``models/*.safetensors``: a
        :meth:`model`, an :meth:`average` or :attr:`best`).

        >>> layout = RunLayout(Path("run"))
        >>> [layout.is_network(p) for p in (layout.model(3), layout.best, layout.checkpoint)]
        [True, True, False]
        """
        return path.parent == self.models and path.suffix == NETWORK_SUFFIX

    def legacy_networks(self) -> list[Path]:
        """The networks in ``models/`` that an older zertz exported as TorchScript
        (``iter-0003.pt``, ``iter-0003-average.pt``, ``best.pt``) and that have no network file
        beside them yet (:meth:`is_network` of the same name), in order.

        >>> RunLayout(Path("no-such-run")).legacy_networks()
        []
        """
        if not self.models.is_dir():
            return []
        return [
            old
            for old in sorted(self.models.glob(f"*{LEGACY_SUFFIX}"))
            if re.fullmatch(r"iter-\d{4,}(-average)?|best", old.stem)
            and not old.with_suffix(NETWORK_SUFFIX).exists()
        ]

    def chunks(self, iteration: int) -> Path:
        """The folder of the self-play chunks of iteration ``iteration`` (0 is the first)."""
        return self.shards / f"iter-{iteration:04d}"

    def chunk(self, iteration: int, name: str) -> Path:
        """The folder of chunk ``name`` of iteration ``iteration``."""
        return self.chunks(iteration) / name

    def shard_files(self, iteration: int) -> list[Path]:
        """The shards of every complete chunk of iteration ``iteration``, in order."""
        return sorted(self.chunks(iteration).glob(f"c*/{shard_glob()}"))

    def chunk_records(self) -> dict[str, Path]:
        """The ``chunk.json`` of every chunk the distributed learner filed, by the chunk's name
        (:func:`chunk_name`), in order."""
        records = sorted(self.shards.glob(f"iter-*/{CHUNK_PREFIX}*/{RECORD_FILE}"))
        return {path.parent.name: path for path in records}

    def match_games(self, iteration: int, tag: str) -> Path:
        """The games of the evaluation match ``tag`` of the network of ``iteration``."""
        return self.matches / f"iter-{iteration:04d}-{tag}.jsonl"

    def partial_match_games(self, iteration: int, tag: str) -> Path:
        """Where this process writes the games of :meth:`match_games` while the match is played
        (the one name of partial outputs, ``.NAME.partial-PID``; renamed into place once over).

        >>> layout = RunLayout(Path("run"))
        >>> name = layout.partial_match_games(2, "random").name
        >>> name == f".iter-0002-random.jsonl.partial-{os.getpid()}"
        True
        """
        return partial_path(self.match_games(iteration, tag))
