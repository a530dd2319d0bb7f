"""Training across machines on Ray: self-play actors, one learner, and the driver between them
(``python -m zertz train --config C --run R --ray auto|local|HOST:PORT``; settings in
``[distributed]``, :class:`~zertz.training.config.DistributedSection`).

- **Actors** (``distributed.actors`` of them, each with ``actor_cpus`` CPUs and ``actor_gpus``
  of a GPU) play chunks of ``chunk_games`` games in the engine in their process
  (``zertz.selfplay``, which releases the GIL) with the newest network they have been sent, and
  return the chunk's shards and records as bytes. A network reaches them as the bytes of the
  exported model through Ray's object store; games reach the learner the same way: no file
  system is shared.
- **The learner** (``learner_cpus``, ``learner_gpus``) keeps the run folder on its machine, the
  same folder as the one-machine loop's (``RUN/shards/iter-N/c-aAAA-SSSSSS/`` holds each chunk):
  checkpoints, exported models, metrics, TensorBoard, the evaluations, so ``zertz.plot`` and
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
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from zertz.training.config import TrainConfig, load_config, parse_config
from zertz.training.folder import first_line
from zertz.training.selfplay import chunk_seed, chunk_totals

#: The chunk folders of a distributed run: ``c-a{actor:03d}-{seq:06d}`` (the one-machine loop's
#: are ``c0``, ``c1``...; the window reads both).
CHUNK_PREFIX = "c-a"

#: How often the driver looks for dead nodes (seconds).
NODE_POLL_SECONDS = 2.0

#: An actor whose chunks Ray gives up on this many times in a row is given up.
MAX_ACTOR_FAILURES = 8

#: Seconds the driver waits for each actor's process to start before handing out chunks.
ACTOR_START_WAIT = 60.0


def ray_module() -> ModuleType:
    """Ray, or ImportError saying how to install it (``zertz[ray]``)."""
    try:
        import ray
    except ImportError:
        raise ImportError(
            "distributed training needs Ray: pip install 'zertz[ray]' (or ray)"
        ) from None
    return ray


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
    ) -> tuple[dict[str, Any], dict[str, bytes]]:
        """Plays chunk ``seq``: ``games`` games from ``seed`` with the network ``model`` (the
        bytes of an exported model, trained for ``version`` learner steps), or rollout MCTS with
        the warm-up settings when ``model`` is None. Returns the chunk's description and its
        files (shards and records) by name."""
        from zertz._zertz import selfplay

        out = self.dir / chunk_name(self.index, seq)
        shutil.rmtree(out, ignore_errors=True)
        guide: dict[str, Any]
        if model is None:
            guide = {"evaluator": "rollout", "config": self.warmup}
        else:
            if self.model is None or self.model[0] != version:
                path = self.dir / f"model-{version}.pt"
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
        meta = {
            "actor": self.index,
            "seq": seq,
            "version": version,
            "warmup": model is None,
            "summary": summary,
            "started": started,
            "pid": os.getpid(),
        }
        return meta, files


class Learner:
    """The learner (Ray actor): the run folder, the training, the evaluation."""

    def __init__(self, source: str, folder: str) -> None:
        import torch

        from zertz.training.loop import Run

        cfg = parse_config(source)
        threads = cfg.run.torch_threads or max(1, int(cfg.distributed.learner_cpus))
        torch.set_num_threads(threads)
        self.run = Run(cfg, folder)
        self.run.start()
        self.logs: list[str] = []
        #: Chunks filed, by name: their iteration and description.
        self.chunks: dict[str, dict[str, Any]] = {}
        for summary in sorted(self.run.dir.glob(f"shards/iter-*/{CHUNK_PREFIX}*/chunk.json")):
            meta = json.loads(summary.read_text())
            self.chunks[summary.parent.name] = meta
        self.started = time.perf_counter()

    def log(self, line: str) -> None:
        self.logs.append(line)

    def pid(self) -> int:
        """The learner's process (for tests that kill it)."""
        return os.getpid()

    def status(self, version: int = -1) -> dict[str, Any]:
        """Where the run stands: the iteration, the step, whether the run is done, whether the
        current iteration has the games it needs (``ready``) and is the run's last (``last``:
        the driver stops the actors before it), each actor's next chunk number, the log lines
        since the last call, and the network self-play uses now (``rollout`` during the
        warm-up, else ``model``: its bytes, left out when the driver's is already version
        ``version``, the step it was exported at)."""
        run = self.run
        next_seq: dict[int, int] = {}
        for meta in self.chunks.values():
            a = int(meta["actor"])
            next_seq[a] = max(next_seq.get(a, 0), int(meta["seq"]) + 1)
        logs, self.logs = self.logs, []
        rollout = run.state.iteration < run.cfg.warmup.iterations
        ready = self.ready()
        return {
            "iteration": run.state.iteration,
            "iterations": run.cfg.run.iterations,
            "step": run.state.step,
            "rollout": rollout,
            "model": None
            if rollout or version == run.state.step
            else (run.dir / "models" / "best.pt").read_bytes(),
            "done": run.state.iteration >= run.cfg.run.iterations,
            "ready": ready,
            "last": ready and run.state.iteration + 1 == run.cfg.run.iterations,
            "pretrain": bool(run.cfg.pretrain.steps and not run.state.pretrained),
            "next_seq": next_seq,
            "logs": logs,
        }

    def pretrain(self) -> dict[str, Any]:
        """The pretraining on records (``[pretrain]``) before the first iteration."""
        from zertz.training.loop import pretrain

        if self.run.cfg.pretrain.steps and not self.run.state.pretrained:
            pretrain(self.run, self.log)
        return self.status()

    def _file(self, meta: dict[str, Any], files: dict[str, bytes]) -> bool:
        """Files a chunk into the current iteration's folder; False for one filed before."""
        name = chunk_name(int(meta["actor"]), int(meta["seq"]))
        if name in self.chunks:
            return False
        run = self.run
        iteration = run.state.iteration
        folder = run.dir / "shards" / f"iter-{iteration:04d}"
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        for file, data in files.items():
            if Path(file).name != file or file.startswith("."):
                raise ValueError(f"chunk {name}: a file name that is not a plain name: {file!r}")
            (tmp / file).write_bytes(data)
        summary = dict(meta["summary"])
        (tmp / "summary.json").write_text(json.dumps(summary))
        filed = {
            **{k: meta[k] for k in ("actor", "seq", "version", "warmup", "pid")},
            "iteration": iteration,
            "staleness": run.state.step - int(meta["version"]),
            "games": int(summary.get("games", 0)),
            "samples": int(summary.get("samples", 0)),
        }
        (tmp / "chunk.json").write_text(json.dumps(filed))
        os.replace(tmp, folder / name)
        self.chunks[name] = filed
        return True

    def _current(self) -> list[dict[str, Any]]:
        """The chunks filed in the iteration now being played."""
        i = self.run.state.iteration
        return [m for m in self.chunks.values() if int(m["iteration"]) == i]

    def ready(self) -> bool:
        """Whether the chunks of the current iteration are enough to train it: ``warmup.games``
        games in the warm-up, else ``train.steps * train.batch_size / train_ratio`` positions."""
        run = self.run
        cfg = run.cfg
        if run.state.iteration >= cfg.run.iterations:
            return False
        chunks = self._current()
        if run.state.iteration < cfg.warmup.iterations:
            return sum(int(m["games"]) for m in chunks) >= cfg.warmup.games
        needed = cfg.train.steps * cfg.train.batch_size / cfg.distributed.train_ratio
        return sum(int(m["samples"]) for m in chunks) >= needed

    def receive(
        self, chunks: list[tuple[Any, Any]], version: int, final: bool = False
    ) -> dict[str, Any]:
        """Files the chunks (references to each one's description and files), then trains one
        iteration if the current one is ready, the run's last one only when ``final`` says that
        the actors have stopped. Returns :meth:`status` with ``trained`` (the
        iteration's metrics line, or None), ``duplicates`` (chunks filed before: not counted
        again) and ``lost`` (``(actor, seq)`` of chunks whose files are gone with their node:
        the driver has them played again)."""
        ray = ray_module()
        duplicates = 0
        lost: list[tuple[int, int]] = []
        for meta_ref, files_ref in chunks:
            meta = ray.get(meta_ref)
            try:
                files = ray.get(files_ref)
            except ray.exceptions.RayError as e:
                self.log(f"  chunk {meta['seq']} of actor {meta['actor']} is lost ({e}): again")
                lost.append((int(meta["actor"]), int(meta["seq"])))
                continue
            if not self._file(meta, files):
                duplicates += 1
        if duplicates:
            self.log(f"  {duplicates} chunk(s) received again and not counted twice")
        last = self.run.state.iteration + 1 == self.run.cfg.run.iterations
        trained = self._train() if self.ready() and (final or not last) else None
        return {**self.status(version), "trained": trained, "duplicates": duplicates, "lost": lost}

    def _train(self) -> dict[str, Any]:
        from zertz.training.loop import complete_iteration

        run = self.run
        i = run.state.iteration
        chunks = self._current()
        started = time.perf_counter()
        self.log(f"iteration {i + 1}/{run.cfg.run.iterations}")
        folder = run.dir / "shards" / f"iter-{i:04d}"
        # Every trained iteration has its self-play folder, chunks or none (State.check_run).
        folder.mkdir(parents=True, exist_ok=True)
        totals = chunk_totals(
            [
                json.loads((folder / chunk_name(m["actor"], m["seq"]) / "summary.json").read_text())
                for m in chunks
            ]
        )
        stale = [int(m["staleness"]) for m in chunks]
        actors = sorted({int(m["actor"]) for m in chunks})
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
        return complete_iteration(run, i, totals, started, self.log, extra)


@dataclasses.dataclass
class _Chunk:
    """A chunk in flight: its actor, number and the references of its results."""

    actor: int
    seq: int
    meta: Any
    files: Any


class Driver:
    """Runs a distributed training run (see the module's docs); :func:`train_distributed` is the
    entry point."""

    def __init__(
        self, cfg: TrainConfig, folder: Path, log: Callable[[str], None], ray: ModuleType
    ) -> None:
        from zertz.training.selfplay import selfplay_settings

        self.cfg = cfg
        self.folder = folder
        self.log = log
        self.ray = ray
        self.settings, self.warmup = selfplay_settings(cfg)
        d = cfg.distributed
        self.threads = max(1, int(d.actor_cpus))
        self.learner_class = ray.remote(Learner).options(
            num_cpus=d.learner_cpus,
            num_gpus=d.learner_gpus,
            max_restarts=-1,
            max_task_retries=0,
        )
        # An actor that dies is restarted, and the chunk it was playing is played again there
        # (the same arguments: the same seed and games) until it is done.
        self.actor_class = ray.remote(SelfPlayActor).options(
            num_cpus=d.actor_cpus,
            num_gpus=d.actor_gpus,
            max_restarts=-1,
            max_task_retries=-1,
        )
        self.learner: Any = None
        self.actors: dict[int, Any] = {}
        self.failures: dict[int, int] = {}
        self.pids: dict[int, int] = {}
        self.next_seq: dict[int, int] = {}
        self.inflight: dict[Any, _Chunk] = {}
        self.version = 0
        self.model: Any = None
        #: The nodes alive at the last look, by id: their names.
        self.nodes: dict[str, str] = {}
        self.node_check = 0.0

    def _call(self, method: str, *args: Any) -> dict[str, Any]:
        """Calls the learner and waits, calling again after a restart (a killed learner is
        restarted by Ray and resumes from its checkpoint)."""
        for attempt in range(MAX_ACTOR_FAILURES):
            try:
                reply: dict[str, Any] = self.ray.get(getattr(self.learner, method).remote(*args))
                return self._take(reply)
            except self.ray.exceptions.RayActorError as e:
                self.log(f"the learner died ({first_line(e)}); Ray restarts it (try {attempt + 1})")
                time.sleep(1.0)
        raise RuntimeError("the learner keeps dying: see the Ray logs")

    def _take(self, reply: dict[str, Any]) -> dict[str, Any]:
        """Prints the learner's log lines and takes its network (rollout MCTS in the warm-up)."""
        for line in reply.get("logs", []):
            self.log(line)
        if reply["rollout"]:
            self.model, self.version = None, int(reply["step"])
        elif reply["model"] is not None:
            self.model, self.version = self.ray.put(reply["model"]), int(reply["step"])
        return reply

    def _have(self) -> int:
        """The version of the network the driver holds (-1: none yet, the learner sends it)."""
        return self.version if self.model is not None else -1

    def _first_pids(self) -> None:
        """The process of every actor before its first chunk, so that an actor killed before it
        returns one is reported as restarted too (its first chunk comes from another process).
        Actors that have not started within a minute (no free CPU for them yet) are left out."""
        refs = {a: actor.pid.remote() for a, actor in self.actors.items()}
        for a, ref in refs.items():
            try:
                self.pids[a] = int(self.ray.get(ref, timeout=ACTOR_START_WAIT))
            except self.ray.exceptions.GetTimeoutError:
                self.log(f"actor {a} has not started after {ACTOR_START_WAIT:.0f} s (no free CPU?)")
            except self.ray.exceptions.RayActorError as e:
                self.log(f"actor {a} failed to start ({first_line(e)}); Ray starts it again")

    def _submit(self, actor: int, seq: int | None = None) -> None:
        """Hands actor ``actor`` its next chunk (or chunk ``seq`` again)."""
        if seq is None:
            seq = self.next_seq.get(actor, 0)
            self.next_seq[actor] = seq + 1
        seed = chunk_seed(self.cfg.run.seed, 1_000_000 + actor, seq)
        meta, files = (
            self.actors[actor]
            .play.options(num_returns=2)
            .remote(
                seq, self.cfg.distributed.chunk_games, seed, self.version, self.model, self.threads
            )
        )
        self.inflight[meta] = _Chunk(actor, seq, meta, files)

    def _check_nodes(self) -> None:
        """Reports the nodes that died since the last look (dead, or gone from the list)."""
        now = time.monotonic()
        if now - self.node_check < NODE_POLL_SECONDS:
            return
        self.node_check = now
        alive = {
            node["NodeID"]: f"{node['NodeManagerAddress']} ({node['NodeID'][:8]})"
            for node in self.ray.nodes()
            if node["Alive"]
        }
        for node, name in self.nodes.items():
            if node not in alive:
                self.log(
                    f"node {name} is dead: its actors restart on other nodes when there is room; "
                    "the run goes on with the others"
                )
        self.nodes = alive

    def _stop_actors(self) -> None:
        for handle in self.actors.values():
            self.ray.kill(handle, no_restart=True)
        self.actors.clear()
        self.inflight.clear()

    def run(self) -> list[dict[str, Any]]:
        ray, d = self.ray, self.cfg.distributed
        done: list[dict[str, Any]] = []
        self.learner = self.learner_class.remote(self.cfg.source, str(self.folder.resolve()))
        reply = self._call("status")
        if reply["done"]:
            self.log(f"{self.folder}: all {reply['iterations']} iterations are done")
            return done
        if reply["iteration"]:
            self.log(
                f"{self.folder}: resuming after iteration {reply['iteration']} "
                f"(step {reply['step']})"
            )
        if reply["pretrain"]:
            self.log("pretraining in the learner")
            reply = self._call("pretrain")
        self.next_seq = {int(a): s for a, s in reply["next_seq"].items()}
        self._check_nodes()
        final = bool(reply["last"])
        if not final:
            for a in range(d.actors):
                self.actors[a] = self.actor_class.remote(a, self.settings, self.warmup, "auto")
            self._first_pids()
            for a in range(d.actors):
                self._submit(a)
            per = self.cfg.train.steps * self.cfg.train.batch_size / d.train_ratio
            self.log(
                f"{d.actors} self-play actors, {d.chunk_games} games a chunk; the learner trains "
                f"{self.cfg.train.steps} steps per {per:.0f} positions played"
            )
        waiting: list[_Chunk] = []  # finished chunks the learner has not taken yet
        sent: list[_Chunk] = []  # those it is taking now
        call: Any = None
        learner_ready = bool(reply["ready"])
        while True:
            self._check_nodes()
            if call is None and (learner_ready or waiting):
                call = self.learner.receive.remote(
                    [(c.meta, c.files) for c in waiting], self._have(), final
                )
                sent, waiting, learner_ready = waiting, [], False
            pending = [*self.inflight, *([call] if call is not None else [])]
            if not pending:
                raise RuntimeError("every actor is gone and the run is not done: see the log")
            ready, _ = ray.wait(pending, num_returns=1, timeout=NODE_POLL_SECONDS)
            for ref in ready:
                if call is not None and ref == call:
                    call = None
                    try:
                        reply = self._take(ray.get(ref))
                    except ray.exceptions.RayActorError as e:
                        self.log(
                            f"the learner died ({first_line(e)}); Ray restarts it from its "
                            f"checkpoint, and it gets {len(sent)} chunk(s) again"
                        )
                        waiting, sent = sent + waiting, []
                        continue
                    sent = []
                    if reply["trained"] is not None:
                        done.append(reply["trained"])
                    if reply["done"]:
                        return done
                    for actor, seq in reply["lost"]:
                        if actor in self.actors:
                            self._submit(actor, seq)
                    if reply["last"] and not final:
                        # The last iteration and the final evaluation run without self-play.
                        self.log("the last iteration has its games: the actors stop")
                        final = True
                        self._stop_actors()
                    learner_ready = bool(reply["ready"])
                    continue
                chunk = self.inflight.pop(ref)
                try:
                    meta = ray.get(chunk.meta)
                except ray.exceptions.RayActorError as e:
                    # Ray gave up on the chunk (the actor could not be started again).
                    n = self.failures[chunk.actor] = self.failures.get(chunk.actor, 0) + 1
                    if n >= MAX_ACTOR_FAILURES:
                        self.log(f"actor {chunk.actor} failed {n} times in a row: given up")
                        self.ray.kill(self.actors.pop(chunk.actor), no_restart=True)
                        continue
                    self.log(
                        f"actor {chunk.actor} failed ({first_line(e)}): chunk {chunk.seq} again"
                    )
                    self._submit(chunk.actor, chunk.seq)
                    continue
                self.failures[chunk.actor] = 0
                old = self.pids.get(chunk.actor)
                if old is not None and old != meta["pid"]:
                    self.log(
                        f"actor {chunk.actor} restarted: process {old} died, process "
                        f"{meta['pid']} played chunk {chunk.seq} (again, if {old} died playing it)"
                    )
                self.pids[chunk.actor] = int(meta["pid"])
                waiting.append(chunk)
                if not final:
                    self._submit(chunk.actor)

    def stop(self) -> None:
        """Stops the actors and the learner (Ctrl-C)."""
        self._stop_actors()
        if self.learner is not None:
            self.ray.kill(self.learner, no_restart=True)
            self.learner = None


def _local_cpus(address: str, wanted: float, log: Callable[[str], None]) -> dict[str, int]:
    """``num_cpus`` of a "local" Ray instance: the cores, or as many as the run asks for (the
    learner and every actor), with a word that they share fewer cores."""
    if address != "local":
        return {}
    cores = os.cpu_count() or 1
    if wanted > cores:
        log(f"Ray on this machine: {wanted:g} CPUs asked for share its {cores} cores")
    return {"num_cpus": max(cores, math.ceil(wanted))}


def train_distributed(
    config: TrainConfig | str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    address: str | None = None,
    *,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Runs (or resumes) a training run on Ray at ``address`` (``[distributed] address`` when
    None): "auto", "local" or HOST:PORT. Returns the metrics lines of the iterations it trained.
    Ctrl-C stops the actors and the learner; the same call resumes the run."""
    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    where = address or cfg.distributed.address
    if not where:
        raise ValueError("no Ray address: give --ray auto|local|HOST:PORT or [distributed] address")
    ray = ray_module()
    folder = Path(run_dir)
    folder.mkdir(parents=True, exist_ok=True)
    started_here = not ray.is_initialized()
    if started_here:
        d = cfg.distributed
        ray.init(
            address=where,  # Ray reads "local" and "auto" too
            include_dashboard=False,
            logging_level="WARNING",
            log_to_driver=True,
            **_local_cpus(where, d.learner_cpus + d.actors * d.actor_cpus, log),
        )
    driver = Driver(cfg, folder, log, ray)
    try:
        return driver.run()
    except KeyboardInterrupt:
        driver.stop()
        log(f"stopped; run the same command again to resume from {folder}")
        return []
    finally:
        driver.stop()
        if started_here:
            ray.shutdown()


def _bench_chunk(
    actors: list[Any],
    seq: list[int],
    cfg: TrainConfig,
    model: Any,
    threads: int,
    actor: int,
) -> Any:
    """Hands ``actor`` its next chunk of the benchmark."""
    seq[actor] += 1
    seed = chunk_seed(cfg.run.seed, actor, seq[actor])
    chunk = cfg.distributed.chunk_games
    return actors[actor].play.remote(seq[actor], chunk, seed, 0, model, threads)


def bench_actors(
    config: TrainConfig | str | os.PathLike[str],
    model: str | os.PathLike[str],
    counts: list[int],
    seconds: float,
    address: str = "local",
    *,
    log: Callable[[str], None] = print,
) -> list[dict[str, float]]:
    """Self-play positions per second of 1, 2, ... actors (``counts``) playing ``config``'s
    self-play with the exported network ``model``, each count for ``seconds`` after every actor
    has finished a first chunk (loading the network and the engine); the scaling efficiency is
    the rate over ``n`` times the rate of one actor (of the first count). On Ray at
    ``address`` ("local": an instance of this machine's cores)."""
    from zertz.training.selfplay import selfplay_settings

    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    ray = ray_module()
    d = cfg.distributed
    settings, warmup = selfplay_settings(cfg)
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            address=address,
            include_dashboard=False,
            logging_level="WARNING",
            **_local_cpus(address, max(counts) * d.actor_cpus, log),
        )
    data = ray.put(Path(model).read_bytes())
    cls = ray.remote(SelfPlayActor).options(num_cpus=d.actor_cpus, num_gpus=d.actor_gpus)
    threads = max(1, int(d.actor_cpus))
    results: list[dict[str, float]] = []
    try:
        for n in counts:
            actors = [cls.remote(a, settings, warmup, "auto") for a in range(n)]
            play = partial(_bench_chunk, actors, [0] * n, cfg, data, threads)
            ray.get([play(a) for a in range(n)])  # loaded and warm
            pending = {play(a): a for a in range(n)}
            t0 = time.perf_counter()
            positions = games = 0
            while True:
                ready, _ = ray.wait(list(pending), num_returns=1)
                a = pending.pop(ready[0])
                now = time.perf_counter()
                meta, _files = ray.get(ready[0])
                positions += int(meta["summary"]["samples"])
                games += int(meta["summary"]["games"])
                if now - t0 >= seconds:
                    break
                pending[play(a)] = a
            elapsed = time.perf_counter() - t0
            for handle in actors:
                ray.kill(handle)
            rate = positions / elapsed
            one = results[0]["positions_per_second"] / results[0]["actors"] if results else rate / n
            row = {
                "actors": float(n),
                "seconds": elapsed,
                "games": float(games),
                "positions": float(positions),
                "positions_per_second": rate,
                "efficiency": rate / (n * one),
            }
            results.append(row)
            log(
                f"{n} actor(s): {positions} positions of {games} games in {elapsed:.1f} s: "
                f"{rate:.1f} positions/s, efficiency {row['efficiency']:.0%}"
            )
    finally:
        if started_here:
            ray.shutdown()
    return results
