"""The AlphaZero training loop: self-play in Rust with the current network, SGD on a window of
recent games with random symmetries, checkpoints, export, evaluation against the previous network
and the baselines.

A run lives in one folder, ``RUN``: its settings (``config.toml``), the self-play chunks
(``shards/iter-N/``), the checkpoint (``checkpoint.pt``), the exported networks as network files
(``models/*.safetensors``, ``models/best.safetensors`` the one self-play uses), every evaluation
game (``matches/``) and the metrics (``metrics.jsonl``, TensorBoard files in ``tb/``);
:mod:`~zertz.training.layout` has the whole tree, and :class:`~zertz.training.layout.RunLayout`
every path of it. A run of an older zertz, whose networks are TorchScript (``models/*.pt``),
converts them into network files when it resumes.

Stopping at any moment (Ctrl-C, a kill) and starting the same command again resumes from the last
checkpoint: the self-play chunks already finished are kept, and the training continues from the
same step with the same random state.

A fixed ``run.seed`` trains the same network, bit for bit, on the CPU of the same machine with the
same thread counts: torch's in this process (``run.torch_threads``; 0 takes torch's default, which
follows the cores the process may use and ``OMP_NUM_THREADS``) change the order in which the
training's float sums add up, and the self-play workers (``[selfplay] threads``; 0: one per core)
decide which games share the network's batches, whose results differ in the last bits with the
batch (each metrics line records ``torch_threads`` and ``selfplay_workers``). Two such runs write
the same shards and the same ``checkpoint.pt`` byte for byte; the network files hold the same
weights (the same ``sha256``; their metadata holds the time of the export). Not so on a GPU: its
inference threads merge the search threads' requests into batches as they come, and its training
kernels are not bit-reproducible. Evaluation matches replay the same games except where a player
searches for a time (``alphabeta`` without a depth, ``:time=``) or is a program; only gating lets
their results reach the network.

Self-play and evaluation run in the engine, in this process (``zertz.selfplay(model=...)``,
``zertz.match``: the code of ``zertz selfplay`` and ``zertz match``), which runs its own
architecture on the weights of the network files (data, never code); the ``[selfplay]`` settings
are checked by Rust's own types (``zertz.selfplay_config``) before a run folder takes a
config.

The package, by what each module does: :mod:`~zertz.training.config` (the settings),
:mod:`~zertz.training.layout` (the run folder's paths), :mod:`~zertz.training.records` (the typed
records of its chunks and the chunk writer), :mod:`~zertz.training.folder` (the run folder's lock
and checkpoints), :mod:`~zertz.training.selfplay` (self-play in the engine),
:mod:`~zertz.training.fitting` (the SGD steps),
:mod:`~zertz.training.evaluation` (matches, the Elo ladder), :mod:`~zertz.training.metrics`
(metrics and TensorBoard), :mod:`~zertz.training.protocols` (what those steps use of a run),
:mod:`~zertz.training.loop` (the iterations, and the run that the steps are given),
:mod:`~zertz.training.distributed` (the same run on Ray: self-play actors and one learner,
``python -m zertz train --ray ADDRESS``; Ray is the optional extra ``zertz[ray]``; in
:mod:`~zertz.training.actor`, :mod:`~zertz.training.learner`, :mod:`~zertz.training.driver` and
:mod:`~zertz.training.bench`).

The package's names are imported on first use. Training needs torch and the engine (``pip
install 'zertz[train]'``): without them (the torch-free wheel) the names raise ImportError saying
so, while reading a run folder (:func:`final_table`, ``zertz.plot``, the layout) needs neither.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zertz.training.config import (
        MAX_SEED,
        DistributedSection,
        EvalSection,
        RunSection,
        SelfPlaySection,
        TrainConfig,
        TrainSection,
        WarmupSection,
        load_config,
        parse_config,
    )
    from zertz.training.evaluation import final_table
    from zertz.training.fitting import Augmenter, learning_rate, losses
    from zertz.training.folder import State, export_checkpoint, load_checkpoint
    from zertz.training.loop import Run, iterate, train

#: The module of each name of the package. They are imported on first use: the loop needs torch
#: and the engine, and where they are missing its names raise ImportError saying what to install
#: (``zertz.optional.needs_engine``), while what only reads a run folder (its layout, metrics and
#: progress, ``final_table``, ``zertz.plot``) works without them.
_MODULES = {
    "MAX_SEED": "config",
    "DistributedSection": "config",
    "EvalSection": "config",
    "RunSection": "config",
    "SelfPlaySection": "config",
    "TrainConfig": "config",
    "TrainSection": "config",
    "WarmupSection": "config",
    "load_config": "config",
    "parse_config": "config",
    "final_table": "evaluation",
    "Augmenter": "fitting",
    "learning_rate": "fitting",
    "losses": "fitting",
    "State": "folder",
    "export_checkpoint": "folder",
    "load_checkpoint": "folder",
    "Run": "loop",
    "iterate": "loop",
    "train": "loop",
}


def __getattr__(name: str) -> Any:
    from zertz.optional import needs_engine

    module = _MODULES.get(name)
    if module is None:
        # A submodule not imported yet (``zertz.training.loop``).
        if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}"):
            with needs_engine(f"zertz.training.{name}"):
                return importlib.import_module(f"{__name__}.{name}")
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    with needs_engine("zertz.training"):
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "MAX_SEED",
    "Augmenter",
    "DistributedSection",
    "EvalSection",
    "Run",
    "RunSection",
    "SelfPlaySection",
    "State",
    "TrainConfig",
    "TrainSection",
    "WarmupSection",
    "export_checkpoint",
    "final_table",
    "iterate",
    "learning_rate",
    "load_checkpoint",
    "load_config",
    "losses",
    "parse_config",
    "train",
]
