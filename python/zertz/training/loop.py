"""The training loop: a run folder's state and the iterations (self-play, training, export,
evaluation, metrics, checkpoint)."""

from __future__ import annotations

import dataclasses
import math
import os
import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zertz._zertz import action_space_size
from zertz.exported import average_networks, convert_network, export
from zertz.files import read_text, remove_leftovers
from zertz.nn import NonFiniteError, ZertzNet, check_finite, marbles_of
from zertz.training import evaluation, fitting, pretraining, selfplay
from zertz.training.config import TrainConfig, check_opponents, load_config, parse_config, same_run
from zertz.training.folder import (
    State,
    atomic_copy,
    atomic_save,
    atomic_write_text,
    device,
    first_line,
    load_checkpoint,
    lock,
)
from zertz.training.layout import NETWORK_SUFFIX, RunLayout
from zertz.training.metrics import Metrics
from zertz.training.progress import RunProgress


def seed_globals(seed: int) -> None:
    """Seeds the process's global generators from ``run.seed``: torch's (the network's initial
    weights), and numpy's and Python's, which nothing in a run draws from but the checkpoint
    saves (a resumed run gets them back), so that two runs of one seed write the same
    checkpoint. (The training's own draws use the run's generator, ``Run.gen``; the engine's
    games and matches take seeds made from ``run.seed``.)"""
    torch.manual_seed(seed)
    np.random.seed([seed & 0xFFFF_FFFF, seed >> 32])
    random.seed(seed)


def _saved_config(path: Path) -> TrainConfig:
    """The config a run folder keeps (``RUN/config.toml``); ValueError or OSError naming it."""
    text = read_text(path, "config")
    try:
        return parse_config(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


class Run:
    """One run folder (see :mod:`zertz.training`)."""

    def __init__(self, cfg: TrainConfig, folder: str | os.PathLike[str]) -> None:
        if not cfg.source or parse_config(cfg.source) != cfg:
            raise ValueError(
                "the run folder keeps its config as TOML: pass a config file or "
                "parse_config(text), not a TrainConfig built or changed in code"
            )
        self.cfg = cfg
        self.dir = Path(folder)
        #: Every path of the run folder.
        self.layout = RunLayout(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = lock(self.dir)
        # What writes that a kill or a failure (a full disk) cut short left (``.NAME.partial-PID``
        # of processes that no longer run): the checkpoint's, the networks', the matches'.
        for folder in (self.dir, self.layout.models, self.layout.matches):
            remove_leftovers(folder)
        saved = self.layout.config
        if saved.exists() and not same_run(_saved_config(saved), cfg):
            raise ValueError(
                f"{self.dir} holds a run with other settings ({saved}); resume it with those "
                "settings (only run.iterations, run.device, run.torch_threads, run.cuda_graphs "
                "and the evaluation may change) or start a new run folder"
            )
        # Everything is checked before the run folder takes the config, so that a typo does not
        # tie the folder to a config that cannot run: the device, the opponents, and (by
        # Rust) the self-play settings.
        self.device = device(cfg.run.device)
        check_opponents(cfg.evaluate, cfg.run)
        self.board = cfg.run.board
        self.selfplay_settings, self.warmup_settings = selfplay.selfplay_settings(cfg)
        self.actions = action_space_size(self.board)
        seed_globals(cfg.run.seed)
        # One network for the run's board and every board it pretrains on, and for the run's
        # marble set (what its exported networks say they play).
        boards = sorted({self.board, *cfg.pretrain.boards})
        marbles = marbles_of(cfg.run.blitz)
        self.net = ZertzNet(cfg.network, boards=boards, marbles=marbles).to(self.device)
        self.opt = torch.optim.AdamW(
            self.net.parameters(), lr=cfg.train.learning_rate, weight_decay=cfg.train.weight_decay
        )
        self.gen = torch.Generator().manual_seed(cfg.run.seed)
        self.state = State()
        #: The networks of an older zertz (TorchScript) that :meth:`start` converted.
        self.converted: list[Path] = []
        self.augment = fitting.Augmenter(self.board, self.device)
        self.metrics = Metrics(self.dir)
        # Last: whatever failed above leaves a folder that takes any config.
        if not saved.exists() or read_text(saved, "config") != cfg.source:
            atomic_write_text(saved, cfg.source)
        for sub in self.layout.folders:
            sub.mkdir(exist_ok=True)

    @property
    def checkpoint(self) -> Path:
        return self.layout.checkpoint

    def model_path(self, iteration: int) -> Path:
        return self.layout.model(iteration)

    def carry_on_from(
        self, checkpoint: str | os.PathLike[str], loaded: dict[str, Any] | None = None
    ) -> None:
        """Makes this new run folder carry on from another run's ``checkpoint`` (its network,
        optimizer, counters and random states; not its self-play, which stays where it was
        played): the iterations it holds are ``carried``, its network the best so far, and the
        next iteration trains on its own self-play first. ValueError for a folder that already
        holds a checkpoint, or a file that is not a checkpoint; :meth:`start` checks the rest
        as it checks a checkpoint of the folder's own. ``loaded``: the checkpoint, read already
        (:func:`load_checkpoint`) by a caller that checks it before it makes the folder."""
        if self.checkpoint.exists():
            raise ValueError(
                f"{self.dir} already holds a checkpoint: resume it as it is (without --from), "
                "or carry on in a new run folder"
            )
        ck = load_checkpoint(checkpoint) if loaded is None else loaded
        state = State.read(ck.get("state"), checkpoint)
        state.carried = state.iteration
        state.best = state.iteration
        ck["state"] = dataclasses.asdict(state)
        atomic_save(ck, self.checkpoint)

    def start(self) -> None:
        """Loads the last checkpoint (refusing one whose state no run of this folder can have
        written: :meth:`State.read`, :meth:`State.check_run`), or seeds a fresh network; then
        makes ``metrics.jsonl`` hold one line per iteration the checkpoint holds and no other
        (:meth:`Metrics.keep`: a kill between an iteration's line and its checkpoint leaves a
        line of an iteration that is run again)."""
        if self.checkpoint.exists():
            ck = load_checkpoint(self.checkpoint)
            state = State.read(ck["state"], self.checkpoint)
            state.check_run(self.checkpoint, self.cfg, self.dir)
            try:
                # A checkpoint written before the marble sets were saved is of the run's own.
                marbles = ck.get("marbles", self.net.marbles)
                if marbles != self.net.marbles:
                    raise ValueError(
                        f"a network of the marble sets {marbles}, not {self.net.marbles}"
                    )
                optimizer = ck["optimizer"]
                if self.net.load_weights(ck["model"]):
                    # A run begun before the auxiliary head: the head's parameters, registered
                    # last, join the optimizer with no moments yet.
                    group = optimizer["param_groups"][0]
                    group["params"] = list(range(len(list(self.net.parameters()))))
                self.opt.load_state_dict(optimizer)
                self.state = state
                rng = ck["rng"]
                self.gen.set_state(rng["generator"])
                torch.set_rng_state(rng["torch"])
                np_rng = rng["numpy"]
                np.random.set_state(
                    (
                        str(np_rng["name"]),
                        np_rng["keys"].numpy().astype(np.uint32),
                        int(np_rng["pos"]),
                        int(np_rng["has_gauss"]),
                        float(np_rng["cached_gaussian"]),
                    )
                )
                py_rng = rng["python"]
                internal = tuple(int(x) for x in py_rng["internal"].tolist())
                random.setstate((int(py_rng["version"]), internal, py_rng["gauss_next"]))
            except (KeyError, TypeError, ValueError, RuntimeError, AttributeError) as e:
                raise ValueError(
                    f"{self.checkpoint} is not a usable checkpoint of this run ({first_line(e)})"
                ) from None
            check_finite(self.net, str(self.checkpoint))
        self.metrics.keep(self.state.iteration, self.state.pretrained)
        self.converted = self.convert_legacy_networks()
        if not self.model_path(self.state.iteration).exists():
            self.export(self.state.iteration)
        if not self.layout.best.exists():
            atomic_copy(self.model_path(self.state.best), self.layout.best)

    def convert_legacy_networks(self) -> list[Path]:
        """Converts the networks that an older zertz exported into this run folder as TorchScript
        (``models/iter-N.pt``, ``best.pt``: :meth:`RunLayout.legacy_networks`) into network files
        beside them (:func:`zertz.exported.convert_network`: their weights read as data, nothing
        of them run), so that the run resumes with the networks it trained; the old files stay.
        The network files written. ValueError naming a file that is not such a network."""
        done = []
        for old in self.layout.legacy_networks():
            new = old.with_suffix(NETWORK_SUFFIX)
            try:
                done.append(convert_network(old, new))
            except ValueError as e:
                raise ValueError(
                    f"{first_line(e).removeprefix('ValueError: ')}: the run resumes once the "
                    "networks an older zertz wrote into it convert; put back the run's own file, "
                    "or start a new run folder"
                ) from None
        return done

    def save(self) -> None:
        """Writes the checkpoint atomically: tensors and plain data only (it is read with
        ``weights_only=True``). A network or optimizer state with NaN or infinite values is
        refused (NonFiniteError), so the last checkpoint stays the last good one."""
        check_finite(self.net, f"cannot checkpoint {self.checkpoint}")
        for state in self.opt.state.values():
            for name, value in state.items():
                if isinstance(value, torch.Tensor) and not bool(torch.isfinite(value).all()):
                    raise NonFiniteError(
                        f"cannot checkpoint {self.checkpoint}: the optimizer's {name} holds NaN "
                        "or infinite values; training diverged (lower train.learning_rate)"
                    )
        name, keys, pos, has_gauss, cached_gaussian = np.random.get_state(legacy=True)
        version, internal, gauss_next = random.getstate()
        atomic_save(
            {
                "model": self.net.state_dict(),
                "optimizer": self.opt.state_dict(),
                "state": dataclasses.asdict(self.state),
                "rng": {
                    "generator": self.gen.get_state(),
                    "torch": torch.get_rng_state(),
                    "numpy": {
                        "name": str(name),
                        "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
                        "pos": int(pos),
                        "has_gauss": int(has_gauss),
                        "cached_gaussian": float(cached_gaussian),
                    },
                    "python": {
                        "version": int(version),
                        "internal": torch.tensor(internal, dtype=torch.int64),
                        "gauss_next": gauss_next,
                    },
                },
                "network": dataclasses.asdict(self.cfg.network),
                "board": self.board,
                "marbles": self.net.marbles,
            },
            self.checkpoint,
        )

    def export(self, iteration: int) -> Path:
        return export(self.net, self.model_path(iteration), step=self.state.step)

    def export_average(self, iteration: int) -> Path:
        """``models/iter-N-average.safetensors``: the mean of the weights of the networks of
        iterations ``N - train.average + 1`` to ``N`` (from 1; from 0 when pretrained), as
        exported."""
        first = max(0 if self.state.pretrained else 1, iteration - self.cfg.train.average + 1)
        paths = [self.model_path(j) for j in range(first, iteration + 1)]
        net, _ = average_networks(paths)
        return export(
            net,
            self.layout.average(iteration),
            step=self.state.step,
            name=f"average of {len(paths)}",
        )

    # The steps of an iteration, in their modules.

    def selfplay(self, iteration: int, log: Callable[[str], None]) -> dict[str, Any]:
        """See :func:`zertz.training.selfplay.play_iteration`."""
        return selfplay.play_iteration(self, iteration, log)

    def window(self, iteration: int) -> list[Path]:
        """See :func:`zertz.training.selfplay.window`."""
        return selfplay.window(self, iteration)

    def fit(self, shards: list[Path]) -> dict[str, float]:
        """See :func:`zertz.training.fitting.fit`."""
        return fitting.fit(self, shards)

    def evaluate(
        self, iteration: int, final: bool, log: Callable[[str], None], model: Path | None = None
    ) -> dict[str, Any]:
        """See :func:`zertz.training.evaluation.evaluate`."""
        return evaluation.evaluate(self, iteration, final, log, model)

    def record(self, stats: dict[str, Any]) -> None:
        """See :class:`zertz.training.metrics.Metrics`."""
        self.metrics.record(stats)


def threads_note(run: Run) -> str | None:
    """A note for a run that goes on with other torch threads than it trained with (its last
    metrics line says how many): the sums of its training steps then add up in another order,
    and it no longer trains the network that the same seed trains with the old count."""
    before, now = run.metrics.last("torch_threads"), torch.get_num_threads()
    if before is None or before == now:
        return None
    return (
        f"  note: this run trained with {before} torch threads and goes on with {now} "
        "(run.torch_threads): it goes on, but no longer trains the network that its seed "
        f"trains with {before}"
    )


def iterate(
    config: TrainConfig | str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    *,
    log: Callable[[str], None] = print,
    progress: bool = True,
    minutes: float | None = None,
    carry_on_from: str | os.PathLike[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """The training loop as a generator: yields the statistics of every iteration it runs (the
    same object is appended to ``RUN/metrics.jsonl``). Resumes a run folder that holds a
    checkpoint. Stopping the generator (or Ctrl-C) between or during iterations loses nothing but
    the unfinished iteration's training. The line that starts an iteration has the run's ETA,
    and with ``progress`` a bar shows it too, in a terminal (standard error) or a notebook
    (:class:`~zertz.training.progress.RunProgress`).

    ``minutes``: a budget of time; no iteration starts that would end past it, judged by the
    longest iteration so far (the first always runs). ``carry_on_from``: a checkpoint of another
    run folder that this new one carries on from (:meth:`Run.carry_on_from`)."""
    if minutes is not None and not (math.isfinite(minutes) and minutes > 0):
        raise ValueError(f"minutes = {minutes}: give a number of minutes above 0")
    begun = time.perf_counter()
    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    if cfg.run.torch_threads:
        torch.set_num_threads(cfg.run.torch_threads)
    # A checkpoint to carry on from is read before the run folder is made: one that cannot be
    # read (a FIFO, a file past its bound) leaves no new folder behind.
    carried = None if carry_on_from is None else load_checkpoint(carry_on_from)
    run = Run(cfg, run_dir)
    if carry_on_from is None:
        run.start()
    else:
        run.carry_on_from(carry_on_from, carried)
        try:
            run.start()
        except BaseException:
            # A checkpoint this run cannot go on from leaves the new folder without it.
            run.checkpoint.unlink(missing_ok=True)
            raise
    if run.state.iteration >= cfg.run.iterations:
        log(f"{run.dir}: all {cfg.run.iterations} iterations are done")
        return
    bar = RunProgress(
        cfg.run.iterations, run.state.iteration, log=log, mode=None if progress else "plain"
    )
    log = bar.log
    try:
        if run.state.iteration:
            log(
                f"{run.dir}: resuming after iteration {run.state.iteration} (step {run.state.step})"
            )
        if run.converted:
            log(
                f"  converted {len(run.converted)} network(s) of an older zertz (TorchScript) into "
                f"network files: {', '.join(p.name for p in run.converted)}"
            )
        if note := threads_note(run):
            log(note)
        if cfg.pretrain.steps and not run.state.pretrained:
            yield pretrain(run, log)
        # The ETA counts the iterations' time alone, not the pretraining's.
        bar.begin_iterations()
        longest = 0.0
        while run.state.iteration < cfg.run.iterations:
            i = run.state.iteration
            started = time.perf_counter()
            if minutes is not None and longest and started - begun + longest > 60 * minutes:
                log(
                    f"stopping after iteration {i}: another (up to {longest:.0f} s) would end "
                    f"past the budget of {minutes:g} minutes"
                )
                return
            log(f"iteration {i + 1}/{cfg.run.iterations}{bar.eta_note()}")
            sp = run.selfplay(i, log)
            stats = complete_iteration(run, i, sp, started, log)
            longest = max(longest, time.perf_counter() - started)
            bar.advance()
            yield stats
    finally:
        bar.close()


def complete_iteration(
    run: Run,
    i: int,
    sp: dict[str, Any],
    started: float,
    log: Callable[[str], None],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The rest of iteration ``i`` once its self-play is in the run folder (``sp``: the totals of
    its chunks): training on the window, export, evaluation, the best network, the metrics line
    (with ``extra`` in it) and the checkpoint; returns the metrics line. The one-machine loop and
    the distributed learner (:mod:`zertz.training.distributed`) both end their iterations here."""
    cfg = run.cfg
    warm = i < cfg.warmup.iterations
    shards = run.window(i)
    fit = run.fit(shards)
    run.state.iteration = i + 1
    run.export(i + 1)
    log(
        f"  trained to step {run.state.step} on {int(fit['samples'])} positions: "
        f"policy loss {fit.get('policy_loss', math.nan):.3f}, "
        f"value loss {fit.get('value_loss', math.nan):.3f}, "
        f"captures loss {fit.get('captures_loss', math.nan):.3f}"
    )
    last = i + 1 == cfg.run.iterations
    every = cfg.evaluate.every
    # The final network: this iteration's, or the mean of the last train.average.
    model = run.export_average(i + 1) if last and cfg.train.average > 1 else None
    if model is not None:
        log(f"  final network: {model.name}, the mean of the last {cfg.train.average} networks")
    due = last or (every and (i + 1) % every == 0)
    evaluation = run.evaluate(i + 1, last, log, model) if due else {}
    human = pretraining.human_moves(run, log) if evaluation else None
    if human:
        log("  human moves: " + pretraining.describe(human))
    if not evaluation and not cfg.evaluate.gating:
        # Without gating, self-play always uses the latest network.
        atomic_copy(run.model_path(i + 1), run.layout.best)
        run.state.best = i + 1
    stats: dict[str, Any] = {
        "iteration": i + 1,
        "step": run.state.step,
        **{k: v for k, v in fit.items()},
        "selfplay_games": sp.get("games", 0.0),
        "selfplay_positions": sp.get("samples", 0.0),
        "selfplay_seconds": sp.get("seconds", 0.0),
        "selfplay_network_seconds": sp.get("network_seconds", 0.0),
        # What the same seed needs to train the same network, besides the device: the same
        # thread counts (torch's in this process, and the self-play workers).
        "torch_threads": torch.get_num_threads(),
        "selfplay_workers": int(sp.get("workers") or 0),
        "elo": run.state.ladder.get(i + 1),
        "best": run.state.best,
        "evaluation": evaluation,
        "human": human,
        "final": last,
        "seconds": time.perf_counter() - started,
        # Rollout self-play (the warm-up) has no network.
        "selfplay_network_share": None if warm else sp.get("network_share"),
        "warmup": warm,
        **(extra or {}),
    }
    # Metrics first: a kill between the two repeats the iteration (its line goes when the run
    # resumes: Metrics.keep), where the other order would lose its line.
    run.record(stats)
    run.save()
    return stats


def pretrain(run: Run, log: Callable[[str], None]) -> dict[str, Any]:
    """Pretraining on records before the first iteration (``[pretrain]``): the network that
    comes out is iteration 0's (exported, and the best so far), and its human-move benchmark is
    logged; the metrics line of iteration 0 holds both."""
    pt = run.cfg.pretrain
    started = time.perf_counter()
    log(f"pretraining on {pt.dataset} ({pt.steps} steps, boards {pretraining.boards(run)})")
    stats: dict[str, Any] = pretraining.pretrain(run, log)
    run.state.pretrained = True
    run.export(0)
    atomic_copy(run.model_path(0), run.layout.best)
    human = pretraining.human_moves(run, log)
    if human:
        log("  human moves: " + pretraining.describe(human))
    stats.update(
        {
            "iteration": 0,
            "step": run.state.step,
            "pretrain": True,
            "torch_threads": torch.get_num_threads(),
            "human": human,
            "evaluation": {},
            "final": False,
            "seconds": time.perf_counter() - started,
        }
    )
    run.record(stats)
    run.save()
    return stats


def train(
    config: TrainConfig | str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    *,
    log: Callable[[str], None] = print,
    progress: bool = True,
    minutes: float | None = None,
    carry_on_from: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """Runs (or resumes) a training run to the end, or to the end of ``minutes``, and returns
    the statistics of the iterations it ran. Ctrl-C stops it cleanly: the run folder keeps every
    finished self-play chunk and the last checkpoint, and the same call resumes it.
    ``progress``, ``minutes``, ``carry_on_from``: see :func:`iterate`."""
    done: list[dict[str, Any]] = []
    try:
        for stats in iterate(
            config,
            run_dir,
            log=log,
            progress=progress,
            minutes=minutes,
            carry_on_from=carry_on_from,
        ):
            done.append(stats)
    except KeyboardInterrupt:
        log(f"stopped; run the same command again to resume from {run_dir}")
    return done
