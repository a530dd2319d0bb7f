"""The driver of a distributed run (:mod:`zertz.training.distributed`): starts the learner
and the self-play actors on Ray, hands each actor its next chunk as soon as it returns one, and
delivers the finished chunks to the learner."""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from zertz.training.actor import SelfPlayActor, ray_module
from zertz.training.config import TrainConfig, load_config
from zertz.training.folder import first_line
from zertz.training.learner import Learner
from zertz.training.progress import RunProgress
from zertz.training.records import LearnerStatus, PlayedChunk
from zertz.training.selfplay import chunk_seed, selfplay_settings

#: How often the driver looks for dead nodes (seconds).
NODE_POLL_SECONDS = 2.0

#: An actor whose chunks Ray gives up on this many times in a row is given up.
MAX_ACTOR_FAILURES = 8

#: Seconds the driver waits for each actor's process to start before handing out chunks.
ACTOR_START_WAIT = 60.0


@dataclasses.dataclass
class _Chunk:
    """A chunk in flight: its actor, number and the references of its results."""

    actor: int
    seq: int
    played: Any
    files: Any


class Driver:
    """Runs a distributed training run (see the module's docs); :func:`train_distributed` is the
    entry point."""

    def __init__(
        self,
        cfg: TrainConfig,
        folder: Path,
        log: Callable[[str], None],
        ray: ModuleType,
        progress: bool = True,
    ) -> None:
        self.cfg = cfg
        self.folder = folder
        self.log = log
        self.ray = ray
        self.progress = progress
        #: The run's bar with its ETA, once the learner has said where the run stands.
        self.bar: RunProgress | None = None
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

    def _call(self, method: str, *args: Any) -> LearnerStatus:
        """Calls the learner and waits, calling again after a restart (a killed learner is
        restarted by Ray and resumes from its checkpoint)."""
        for attempt in range(MAX_ACTOR_FAILURES):
            try:
                return self._take(self.ray.get(getattr(self.learner, method).remote(*args)))
            except self.ray.exceptions.RayActorError as e:
                self.log(f"the learner died ({first_line(e)}); Ray restarts it (try {attempt + 1})")
                time.sleep(1.0)
        raise RuntimeError("the learner keeps dying: see the Ray logs")

    def _take(self, reply: LearnerStatus | dict[str, Any]) -> LearnerStatus:
        """Prints the learner's log lines and takes its network (rollout MCTS in the warm-up)."""
        if not isinstance(reply, LearnerStatus):
            reply = LearnerStatus.from_dict(reply, "the learner's reply")
        for line in reply.logs:
            self.log(line)
        if reply.rollout:
            self.model, self.version = None, reply.step
        elif reply.model is not None:
            self.model, self.version = self.ray.put(reply.model), reply.step
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
        played, files = (
            self.actors[actor]
            .play.options(num_returns=2)
            .remote(
                seq, self.cfg.distributed.chunk_games, seed, self.version, self.model, self.threads
            )
        )
        self.inflight[played] = _Chunk(actor, seq, played, files)

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
        self.learner = self.learner_class.remote(self.cfg.source, str(self.folder.resolve()))
        reply = self._call("status")
        if reply.done:
            self.log(f"{self.folder}: all {reply.iterations} iterations are done")
            return []
        # The whole run's bar and ETA, as in the one-machine loop: a bar in a terminal or a
        # notebook, the ETA in each iteration's line elsewhere.
        self.bar = RunProgress(
            reply.iterations, reply.iteration, log=self.log, mode=None if self.progress else "plain"
        )
        self.log = self.bar.log
        try:
            return self._run(reply)
        finally:
            self.bar.close()

    def _run(self, reply: LearnerStatus) -> list[dict[str, Any]]:
        ray, d = self.ray, self.cfg.distributed
        done: list[dict[str, Any]] = []
        if reply.iteration:
            self.log(
                f"{self.folder}: resuming after iteration {reply.iteration} (step {reply.step})"
            )
        if reply.pretrain:
            self.log("pretraining in the learner")
            reply = self._call("pretrain")
        # The ETA counts the iterations' time alone, not the pretraining's.
        if self.bar is not None:
            self.bar.begin_iterations()
        self.next_seq = {int(a): s for a, s in reply.next_seq.items()}
        self._check_nodes()
        final = reply.last
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
        learner_ready = reply.ready
        while True:
            self._check_nodes()
            if call is None and (learner_ready or waiting):
                call = self.learner.receive.remote(
                    [(c.played, c.files) for c in waiting], self._have(), final
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
                    if reply.trained is not None:
                        done.append(reply.trained)
                        if self.bar is not None:
                            self.bar.advance()
                            if note := self.bar.eta_note():
                                self.log(f"{self.bar.done}/{self.bar.total} iterations{note}")
                    if reply.done:
                        return done
                    for actor, seq in reply.lost:
                        if actor in self.actors:
                            self._submit(actor, seq)
                    if reply.last and not final:
                        # The last iteration and the final evaluation run without self-play.
                        self.log("the last iteration has its games: the actors stop")
                        final = True
                        self._stop_actors()
                    learner_ready = reply.ready
                    continue
                chunk = self.inflight.pop(ref)
                try:
                    played: PlayedChunk = ray.get(chunk.played)
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
                if old is not None and old != played.pid:
                    self.log(
                        f"actor {chunk.actor} restarted: process {old} died, process "
                        f"{played.pid} played chunk {chunk.seq} (again, if {old} died playing it)"
                    )
                self.pids[chunk.actor] = played.pid
                waiting.append(chunk)
                if not final:
                    self._submit(chunk.actor)

    def stop(self) -> None:
        """Stops the actors and the learner (Ctrl-C)."""
        self._stop_actors()
        if self.learner is not None:
            self.ray.kill(self.learner, no_restart=True)
            self.learner = None


def local_cpus(address: str, wanted: float, log: Callable[[str], None]) -> dict[str, int]:
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
    progress: bool = True,
) -> list[dict[str, Any]]:
    """Runs (or resumes) a training run on Ray at ``address`` (``[distributed] address`` when
    None): "auto", "local" or HOST:PORT. Returns the metrics lines of the iterations it trained.
    Ctrl-C stops the actors and the learner; the same call resumes the run. With ``progress``, a
    bar shows the whole run with its ETA (in a terminal or a notebook; elsewhere the ETA is in a
    line after each iteration), as :func:`zertz.training.iterate` does."""
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
            **local_cpus(where, d.learner_cpus + d.actors * d.actor_cpus, log),
        )
    driver = Driver(cfg, folder, log, ray, progress)
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
