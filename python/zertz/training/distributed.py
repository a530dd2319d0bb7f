"""Training across machines on Ray: self-play actors, one learner, and the driver between them
(``python -m zertz train --config C --run R --ray auto|local|HOST:PORT``; settings in
``[distributed]``, :class:`~zertz.training.config.DistributedSection`).

- **Actors** (``distributed.actors`` of them, each with ``actor_cpus`` CPUs and ``actor_gpus``
  of a GPU) play chunks of ``chunk_games`` games in the engine in their process
  (``zertz.selfplay``, which releases the GIL) with the newest network they have been sent, and
  return the chunk's shards and records as bytes. A network reaches them as the bytes of its
  network file (``models/best.safetensors``, :func:`zertz.exported.encode`'s bytes) through Ray's
  object store; games reach the learner the same way: no file system is shared.
- **The learner** (``learner_cpus``, ``learner_gpus``) keeps the run folder on its machine, the
  same folder as the one-machine loop's (``RUN/shards/iter-N/c-aAAA-SSSSSS/`` holds each chunk):
  checkpoints, network files, metrics, TensorBoard, the evaluations, so ``zertz.plot`` and
  ``final_table`` read it unchanged. It trains iteration ``i`` (``train.steps`` steps on the
  window, then what the one-machine loop does: export, evaluation, metrics, checkpoint) once the
  positions received since iteration ``i - 1`` allow ``train_ratio`` positions trained per
  position played (the warm-up iterations wait for ``warmup.games`` games of rollout MCTS
  instead), and sends the new network to the actors. It logs how stale the chunks' networks
  were, in learner steps (``staleness_mean``, ``staleness_max`` in the metrics).
- **The driver** (this process) hands each actor its next chunk as soon as it returns one, so
  the actors never wait for the learner; chunks that finished while the learner trained are
  delivered in one batch with its next call.

Faults. An actor killed (``kill -9``, a crash) is restarted by Ray and the chunk it was playing
is played again with the same seed; the learner files each chunk once (by its name: actor and
sequence number), so no finished game is lost or counted twice. A learner killed is restarted by
Ray and resumes from its last checkpoint, as the one-machine loop does; the chunks it had not
taken are sent again. A node that dies is reported, and the run goes on with the actors left.
Ctrl-C (or SIGTERM) stops the actors and the learner; the same command resumes the run, with or
without Ray.

The modules: :mod:`~zertz.training.actor` (the self-play actor), :mod:`~zertz.training.learner`
(the learner), :mod:`~zertz.training.driver` (the driver, :func:`train_distributed`),
:mod:`~zertz.training.bench` (:func:`bench_actors`); the records they exchange are in
:mod:`~zertz.training.records`, the chunks' names in :mod:`~zertz.training.layout`. This module
gathers their public names.
"""

from zertz.training.actor import SelfPlayActor, ray_module
from zertz.training.bench import bench_actors
from zertz.training.driver import (
    ACTOR_START_WAIT,
    MAX_ACTOR_FAILURES,
    NODE_POLL_SECONDS,
    Driver,
    train_distributed,
)
from zertz.training.layout import CHUNK_PREFIX, chunk_name, parse_chunk_name
from zertz.training.learner import Learner
from zertz.training.records import ChunkRecord, LearnerStatus, PlayedChunk

__all__ = [
    "ACTOR_START_WAIT",
    "CHUNK_PREFIX",
    "MAX_ACTOR_FAILURES",
    "NODE_POLL_SECONDS",
    "ChunkRecord",
    "Driver",
    "Learner",
    "LearnerStatus",
    "PlayedChunk",
    "SelfPlayActor",
    "bench_actors",
    "chunk_name",
    "parse_chunk_name",
    "ray_module",
    "train_distributed",
]
