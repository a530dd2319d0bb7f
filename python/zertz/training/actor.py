"""The self-play actor of a distributed run (:mod:`zertz.training.distributed`): plays chunks of
games in the engine with the network it is sent, and returns their files as bytes."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from zertz.training.layout import NETWORK_SUFFIX, chunk_name
from zertz.training.records import ChunkSummary, PlayedChunk


def ray_module() -> ModuleType:
    """Ray, or ImportError saying how to install it (``zertz[ray]``)."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            "distributed training needs Ray: pip install 'zertz[ray]' (or ray)"
        ) from None
    return ray


class SelfPlayActor:
    """A self-play worker: plays chunks of games with the network it is sent (Ray actor)."""

    def __init__(
        self, index: int, settings: dict[str, Any], warmup: dict[str, Any], device: str
    ) -> None:
        self.index = index
        self.settings = settings
        self.warmup = warmup
        self.device = device
        self.dir = Path(tempfile.mkdtemp(prefix=f"zertz-actor-{index}-"))
        self.model: tuple[int, Path] | None = None

    def pid(self) -> int:
        """The actor's process (for tests that kill it)."""
        return os.getpid()

    def play(
        self, seq: int, games: int, seed: int, version: int, model: bytes | None, threads: int
    ) -> tuple[PlayedChunk, dict[str, bytes]]:
        """Plays chunk ``seq``: ``games`` games from ``seed`` with the network ``model`` (the
        bytes of a network file, :func:`zertz.exported.encode`'s, trained for ``version``
        learner steps; written as ``model-VERSION.safetensors`` and loaded by the engine, which
        checks it as any network file), or rollout MCTS with the warm-up settings when ``model``
        is None. Returns the chunk's description and its files (shards and records) by
        name."""
        from zertz_engine import selfplay

        name = chunk_name(self.index, seq)
        out = self.dir / name
        shutil.rmtree(out, ignore_errors=True)
        guide: dict[str, Any]
        if model is None:
            guide = {"evaluator": "rollout", "config": self.warmup}
        else:
            if self.model is None or self.model[0] != version:
                path = self.dir / f"model-{version}{NETWORK_SUFFIX}"
                path.write_bytes(model)
                if self.model is not None:
                    self.model[1].unlink(missing_ok=True)
                self.model = (version, path)
            guide = {"model": self.model[1], "config": self.settings, "device": self.device}
        started = time.time()
        summary = selfplay(out, games=games, seed=seed, threads=threads, **guide)
        files = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
        shutil.rmtree(out, ignore_errors=True)
        summary.pop("shards", None)
        played = PlayedChunk(
            actor=self.index,
            seq=seq,
            version=version,
            warmup=model is None,
            summary=ChunkSummary.from_json(summary, f"the engine's summary of chunk {name}"),
            started=started,
            pid=os.getpid(),
        )
        return played, files
