"""The AlphaZero training loop: self-play in Rust with the current network, SGD on a window of
recent games with random symmetries, checkpoints, export, evaluation against the previous network
and the baselines.

A run lives in one folder::

    RUN/config.toml            the run's settings (a copy; a resumed run must use the same ones)
    RUN/shards/iter-0003/c1/   shards and records of one self-play chunk (complete folders only)
    RUN/checkpoint.pt          model, optimizer, step, iteration, RNG states, ladder (atomic)
    RUN/models/iter-0003.pt    exported networks (iter-N has been trained for N iterations)
    RUN/models/best.pt         the network self-play uses when gating is on; the latest otherwise
    RUN/matches/iter-0003-*.jsonl  every evaluation game
    RUN/metrics.jsonl          one JSON object per iteration (and TensorBoard files in RUN/tb)

Stopping at any moment (Ctrl-C, a kill) and starting the same command again resumes from the last
checkpoint: the self-play chunks already finished are kept, and the training continues from the
same step with the same random state.

Self-play and evaluation run in the engine, in this process (``zertz.selfplay(model=...)``,
``zertz.match``: the code of ``zertz selfplay`` and ``zertz match``), which loads the exported
network with the libtorch of the installed torch; the ``[selfplay]`` settings are checked by the
engine's own types (``zertz.selfplay_config``) before a run folder takes a config.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import math
import os
import random
import re
import shutil
import time
import tomllib
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from zertz._zertz import (
    BOARDS,
    action_space_size,
    parse_player,
    selfplay,
    selfplay_config,
    symmetry_tables,
)
from zertz._zertz import match as engine_match
from zertz.data import load_shards
from zertz.nn import (
    NetConfig,
    NonFiniteError,
    ZertzNet,
    atomic_path,
    check_finite,
    export,
    masked_log_softmax,
)

#: The largest seed ([run] seed): torch takes it, and the engine's u64 seeds take it plus the
#: iteration.
MAX_SEED = 2**63 - 1
#: The largest count the engine takes (games, simulations, opening actions: u32).
_U32 = 2**32 - 1

# --------------------------------------------------------------------------------------- config


@dataclass(frozen=True)
class RunSection:
    """``[run]``: what is trained, for how long."""

    #: Board size in rings.
    board: int = 37
    #: Blitz marble set.
    blitz: bool = False
    #: Iterations (self-play, then training, then evaluation).
    iterations: int = 10
    #: Seed of the network's initial weights, the training and the self-play seeds.
    seed: int = 0
    #: Device of the training and of the engine's networks: auto, cpu, cuda, cuda:N.
    device: str = "auto"
    #: Threads of torch in the training process (0: torch's default).
    torch_threads: int = 0


@dataclass(frozen=True)
class SelfPlaySection:
    """``[selfplay]``: games per iteration; every other key goes to the engine's self-play
    settings (``configs/selfplay.toml`` documents them; unknown ones are refused there)."""

    #: Games per iteration.
    games: int = 64
    #: The games of an iteration are played in this many chunks; a finished chunk survives an
    #: interruption.
    chunks: int = 2
    #: The engine's self-play settings (full_simulations, temperature, [search] ...).
    engine: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WarmupSection:
    """``[warmup]``: the first self-play iterations played by rollout MCTS instead of the
    network (expert iteration, Anthony et al. 2017). An untrained network plays about as well as
    random moves, so AlphaZero's first iterations learn from poor games; rollout MCTS plays well
    from the start and is cheap on the CPU, so the first network learns from good ones. Its games
    stay in the replay window like any others; the later iterations are AlphaZero's."""

    #: Self-play iterations played by rollout MCTS (0: none, the network from the first).
    iterations: int = 0
    #: Games of each of those iterations.
    games: int = 1000
    #: Rollouts of a full search (the positions that become policy targets).
    full_simulations: int = 800
    #: Rollouts of a fast search ([selfplay]'s playout-cap randomization applies).
    fast_simulations: int = 200


@dataclass(frozen=True)
class TrainSection:
    """``[train]``: the optimisation."""

    #: Positions per SGD step.
    batch_size: int = 256
    #: SGD steps per iteration.
    steps: int = 100
    #: AdamW learning rate (at the start, with a schedule).
    learning_rate: float = 2e-3
    #: Learning-rate schedule over the run's steps: "constant", or "cosine" (from learning_rate
    #: down to final_learning_rate at the last step of the last iteration).
    schedule: str = "constant"
    #: The learning rate at the end of a cosine schedule.
    final_learning_rate: float = 1e-4
    #: AdamW weight decay.
    weight_decay: float = 1e-4
    #: Self-play iterations in the replay window (the most recent ones).
    window: int = 4
    #: Apply a random symmetry of the board to every position.
    augment: bool = True
    #: Weight of the value loss against the policy loss.
    value_weight: float = 1.0
    #: Value target: (1 - q_weight) * the game's result + q_weight * the search's value of the
    #: position (0: the result alone, as in AlphaZero; mixing in the search value lowers the
    #: noise of the target when there are few games).
    q_weight: float = 0.0


@dataclass(frozen=True)
class EvalSection:
    """``[evaluate]``: matches of the new network."""

    #: Evaluate every this many iterations (and after the last one); 0: only after the last.
    every: int = 1
    #: Games per match during the run.
    games: int = 20
    #: Simulations per move of the network in the matches.
    simulations: int = 100
    #: Baselines played during the run (random, greedy, mcts:SIMS, uniform:SIMS).
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    #: Games per match in the final evaluation.
    final_games: int = 100
    #: Baselines of the final evaluation.
    final_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "mcts:1000"])
    #: Simulations per move of the network in the final evaluation.
    final_simulations: int = 200
    #: Self-play uses the best network so far, replaced only by one that scores at least
    #: gating_score against it (off: always the latest).
    gating: bool = False
    #: Score needed to replace the best network when gating.
    gating_score: float = 0.55
    #: Random single actions opening each game between two networks (the same for both games of
    #: a pair): searches without noise would otherwise repeat the same few games.
    opening_actions: int = 4


@dataclass(frozen=True)
class TrainConfig:
    """A training run's settings (``configs/train/*.toml``); see :func:`load_config`."""

    run: RunSection = field(default_factory=RunSection)
    network: NetConfig = field(default_factory=NetConfig)
    selfplay: SelfPlaySection = field(default_factory=SelfPlaySection)
    warmup: WarmupSection = field(default_factory=WarmupSection)
    train: TrainSection = field(default_factory=TrainSection)
    evaluate: EvalSection = field(default_factory=EvalSection)
    #: The TOML text it came from (copied into the run folder); not part of the settings, so
    #: configs that differ only in comments or layout are equal.
    source: str = field(default="", compare=False)


def _section(cls: type[Any], table: Mapping[str, Any], name: str) -> Any:
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(f'{name}.{k}' for k in unknown)}: the [{name}] "
            f"keys are {', '.join(sorted(known))}"
        )
    values: dict[str, Any] = {}
    for k, v in table.items():
        want = known[k].type
        ok = {
            "int": isinstance(v, int) and not isinstance(v, bool),
            "float": isinstance(v, int | float) and not isinstance(v, bool),
            "bool": isinstance(v, bool),
            "str": isinstance(v, str),
            "list[str]": isinstance(v, list) and all(isinstance(x, str) for x in v),
        }.get(str(want), True)
        if not ok:
            raise ValueError(f"{name}.{k} must be of type {want}, not {v!r}")
        # TOML has nan and inf, and integers of any size (tomllib): none is a usable setting.
        if want == "float" and not math.isfinite(v):
            raise ValueError(f"{name}.{k} must be a finite number, not {v!r}")
        if want == "int" and not -MAX_SEED <= v <= MAX_SEED:
            raise ValueError(f"{name}.{k} is out of range: {v!r} (the limit is ±(2**63 - 1))")
        values[k] = float(v) if want == "float" else v
    return cls(**values)


def parse_config(text: str) -> TrainConfig:
    """Reads a training config from TOML text; ValueError names a bad or unknown key."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"bad TOML: {e}") from e
    tables = {"run", "network", "selfplay", "warmup", "train", "evaluate"}
    unknown = sorted(set(doc) - tables)
    if unknown:
        raise ValueError(f"unknown table(s) {unknown}: expected {sorted(tables)}")
    for t in tables & set(doc):
        if not isinstance(doc[t], dict):
            raise ValueError(f"{t} must be a table")
    sp = dict(doc.get("selfplay", {}))
    ours = {k: sp.pop(k) for k in ("games", "chunks") if k in sp}
    for bad in ("board", "blitz", "games", "seed"):
        if bad in sp:
            raise ValueError(f"selfplay.{bad} is set by the training loop ([run] or [selfplay])")
    cfg = TrainConfig(
        run=_section(RunSection, doc.get("run", {}), "run"),
        network=NetConfig.from_dict(doc.get("network", {})),
        selfplay=dataclasses.replace(_section(SelfPlaySection, ours, "selfplay"), engine=sp),
        warmup=_section(WarmupSection, doc.get("warmup", {}), "warmup"),
        train=_section(TrainSection, doc.get("train", {}), "train"),
        evaluate=_section(EvalSection, doc.get("evaluate", {}), "evaluate"),
        source=text,
    )
    # Each condition states what is right (``x > 0``, never ``not x <= 0``): NaN fails every
    # comparison, so it fails them too (_section already refuses NaN and infinities).
    r, sp_, w, tr, ev = cfg.run, cfg.selfplay, cfg.warmup, cfg.train, cfg.evaluate
    checks = [
        (r.iterations >= 1, "run.iterations must be at least 1"),
        (r.board in BOARDS, f"run.board must be one of {BOARDS}, not {r.board}"),
        (0 <= r.seed <= MAX_SEED, f"run.seed must be in 0..{MAX_SEED} (2**63 - 1), not {r.seed}"),
        (
            _DEVICE.match(r.device) is not None,
            f"run.device must be auto, cpu, cuda or cuda:N, not {r.device!r}",
        ),
        (0 <= r.torch_threads <= 4096, "run.torch_threads must be in 0..4096"),
        (1 <= sp_.games <= _U32, f"selfplay.games must be in 1..{_U32}"),
        (1 <= sp_.chunks <= sp_.games, "selfplay.chunks must be 1..games"),
        (w.iterations >= 0, "warmup.iterations must be at least 0"),
        (sp_.chunks <= w.games <= _U32, f"warmup.games must be in selfplay.chunks..{_U32}"),
        (
            2 <= w.full_simulations <= _U32 and 2 <= w.fast_simulations <= _U32,
            f"warmup simulations must be in 2..{_U32} (one simulation evaluates the root only)",
        ),
        (tr.batch_size >= 1 and tr.steps >= 0, "train.batch_size/steps too small"),
        (tr.window >= 1, "train.window must be at least 1"),
        (tr.learning_rate > 0, "train.learning_rate must be positive"),
        (tr.final_learning_rate >= 0, "train.final_learning_rate must be at least 0"),
        (tr.schedule in ("constant", "cosine"), "train.schedule: constant or cosine"),
        (0.0 <= tr.q_weight <= 1.0, "train.q_weight must be in 0..1"),
        (tr.weight_decay >= 0, "train.weight_decay must be at least 0"),
        (tr.value_weight >= 0, "train.value_weight must be at least 0"),
        (ev.every >= 0, "evaluate.every must be at least 0"),
        (1 <= ev.simulations <= _U32, f"evaluate.simulations must be in 1..{_U32}"),
        (1 <= ev.final_simulations <= _U32, f"evaluate.final_simulations must be in 1..{_U32}"),
        (ev.games >= 1 and ev.final_games >= 1, "evaluate games: at least 1"),
        (0.0 <= ev.gating_score <= 1.0, "evaluate.gating_score must be in 0..1"),
        (0 <= ev.opening_actions <= _U32, f"evaluate.opening_actions must be in 0..{_U32}"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(message)
    return cfg


_DEVICE = re.compile(r"^(auto|cpu|cuda(:[0-9]+)?)$")


def load_config(path: str | os.PathLike[str]) -> TrainConfig:
    """Reads ``configs/train/NAME.toml``: tables ``[run]``, ``[network]`` (``preset`` or sizes),
    ``[selfplay]``, ``[warmup]``, ``[train]``, ``[evaluate]``; every key is optional and unknown
    keys are refused.

    >>> from zertz.training import load_config
    >>> cfg = load_config("../configs/train/tiny.toml")
    >>> cfg.run.board, cfg.network.channels
    (37, 16)
    """
    try:
        return parse_config(Path(path).read_text())
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


# ----------------------------------------------------------------------------------- training


def _atomic_save(obj: Any, path: Path) -> None:
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def _atomic_write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def learning_rate(train: TrainSection, iterations: int, step: int) -> float:
    """The learning rate of SGD step ``step`` of a run of ``iterations`` iterations: a function of
    the step alone, so that a resumed run follows the same schedule.

    >>> t = TrainSection(steps=10, learning_rate=1e-3, schedule="cosine", final_learning_rate=0.0)
    >>> [round(learning_rate(t, 2, s), 6) for s in (0, 10, 20)]
    [0.001, 0.0005, 0.0]
    """
    if train.schedule == "constant":
        return train.learning_rate
    progress = min(1.0, step / max(1, iterations * train.steps))
    cos = 0.5 * (1.0 + math.cos(math.pi * progress))
    return train.final_learning_rate + (train.learning_rate - train.final_learning_rate) * cos


def _seed(*parts: int) -> int:
    """A 63-bit seed from a tuple of integers (distinct tuples, distinct seeds)."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def _lock(folder: Path) -> Any:
    """An exclusive lock on a run folder for this process's lifetime (released when it ends,
    however it ends)."""
    f = open(folder / ".lock", "a")  # held open on purpose
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise ValueError(f"{folder} is in use by another training process") from None
    return f


def _trim_partial_line(path: Path) -> None:
    """Cuts a last line left unfinished by a kill, so the next append starts a line of its own."""
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            path.write_bytes(data[: data.rfind(b"\n") + 1])


def _same_run(saved: TrainConfig, cfg: TrainConfig) -> bool:
    """Whether ``cfg`` continues the run of ``saved``: only the length, the device, the torch
    threads and the evaluation may differ."""

    def core(c: TrainConfig) -> TrainConfig:
        run = dataclasses.replace(c.run, iterations=0, device="", torch_threads=0)
        gating = EvalSection(gating=c.evaluate.gating, gating_score=c.evaluate.gating_score)
        return dataclasses.replace(c, run=run, evaluate=gating, source="")

    return core(saved) == core(cfg)


def _check_opponents(e: EvalSection) -> None:
    """Every opponent is a player spec of the engine's grammar, and a network's file exists."""
    for opp in [*e.opponents, *e.final_opponents]:
        try:
            model = parse_player(opp)["model"]
        except ValueError as err:
            raise ValueError(f"evaluate: unknown opponent {opp!r}: {err}") from None
        if model is not None and not Path(model).exists():
            raise ValueError(f"evaluate: opponent {opp!r}: no model file {model}")


def _atomic_copy(src: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)


def _device(name: str) -> torch.device:
    """run.device as a torch device; ValueError for one this machine does not have."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not _DEVICE.match(name):
        raise ValueError(f"run.device must be auto, cpu, cuda or cuda:N, not {name!r}")
    device = torch.device(name)
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= count:
            raise ValueError(f"run.device = {name!r}: this machine has {count} CUDA device(s)")
    return device


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0].strip()}" if lines else type(e).__name__


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a training checkpoint on the CPU, with ``torch.load(weights_only=True)``: tensors
    and plain data only, never objects, whose unpickling could run code. ValueError (naming the
    file) for anything else: other files, corrupt ones, pickles of objects (checkpoints of older
    versions of zertz, which held numpy random states, among them)."""
    try:
        with warnings.catch_warnings():
            # A pickle protocol torch did not write warns; the file is refused or read anyway.
            warnings.simplefilter("ignore")
            ck = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:
        if found := re.search(r"GLOBAL ([\w.]+)", str(e)):
            raise ValueError(
                f"{path} is refused: it holds a {found[1]} object, and a checkpoint holds only "
                "tensors and plain data (loading objects could run code; checkpoints of older "
                "zertz versions, with numpy random states, are refused too: start a new run "
                "folder or export with that version)"
            ) from None
        raise ValueError(f"{path} is not a zertz training checkpoint ({_first_line(e)})") from None
    keys = ("model", "optimizer", "state", "rng", "network", "board")
    if not isinstance(ck, dict) or not all(k in ck for k in keys):
        raise ValueError(f"{path} is not a zertz training checkpoint")
    return ck


def _net_of_checkpoint(ck: Mapping[str, Any], path: str | os.PathLike[str]) -> ZertzNet:
    """The network of a checkpoint read by :func:`load_checkpoint`, with its weights; its sizes
    are checked against the tensors of the file before any memory is taken for it."""
    try:
        if not isinstance(ck["network"], dict) or not isinstance(ck["model"], dict):
            raise ValueError("no network sizes and weights")
        config = NetConfig.from_dict(ck["network"])
        board = ck["board"]
        if not isinstance(board, int) or board not in BOARDS:
            raise ValueError(f"board {board!r}")
        state: dict[str, Any] = ck["model"]
        blocks = {k.split(".")[1] for k in state if k.startswith("blocks.")}
        if len(blocks) != config.blocks or blocks != {str(b) for b in range(config.blocks)}:
            raise ValueError(f"{config.blocks} blocks in the sizes, not in the weights")
        stem = state.get("stem.weight")
        if not isinstance(stem, torch.Tensor) or stem.shape[:1] != (config.channels,):
            raise ValueError("weights that do not fit the sizes (stem.weight)")
        # Built without memory (the meta device) to compare every shape with the file's.
        with torch.device("meta"):
            shapes = {k: v.shape for k, v in ZertzNet(config, boards=[board]).state_dict().items()}
        got = {k: v.shape if isinstance(v, torch.Tensor) else None for k, v in state.items()}
        if got != shapes:
            bad = sorted(k for k in set(got) | set(shapes) if got.get(k) != shapes.get(k))
            raise ValueError(f"weights that do not fit the sizes ({', '.join(bad[:3])})")
        net = ZertzNet(config, boards=[board])
        net.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ValueError(
            f"{path} is not a usable zertz training checkpoint ({_first_line(e)})"
        ) from None
    return net


class Augmenter:
    """Applies a random symmetry of the board to a batch of planes, masks and policies."""

    def __init__(self, board: int, device: torch.device) -> None:
        cells, actions = symmetry_tables(board)
        self.cells = torch.from_numpy(cells).to(device)
        self.actions = torch.from_numpy(actions).to(device)

    def __call__(
        self, planes: torch.Tensor, legal: torch.Tensor, policy: torch.Tensor, gen: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, c, h, w = planes.shape
        s = torch.randint(len(self.cells), (b,), generator=gen).to(planes.device)
        cells = self.cells[s][:, None, :].expand(b, c, h * w)
        planes = planes.flatten(2).gather(2, cells).view(b, c, h, w)
        acts = self.actions[s]
        return planes, legal.gather(1, acts), policy.gather(1, acts)


def losses(
    net: ZertzNet,
    planes: torch.Tensor,
    globals_: torch.Tensor,
    legal: torch.Tensor,
    policy: torch.Tensor,
    value: torch.Tensor,
    full: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Policy cross-entropy (on fully searched positions only, playout-cap randomization) and
    value mean squared error."""
    logits, v = net(planes, globals_)
    logp = masked_log_softmax(logits, legal)
    ce = -torch.where(policy > 0, policy * logp, torch.zeros_like(logp)).sum(1)
    weight = full.float()
    policy_loss = (ce * weight).sum() / weight.sum().clamp(min=1.0)
    value_loss = torch.mean((v - value) ** 2)
    return policy_loss, value_loss


@dataclass
class State:
    """What a checkpoint holds besides the weights."""

    iteration: int = 0
    step: int = 0
    #: Elo of the network after each evaluated iteration, chained through matches against the
    #: best network so far (iteration 0, the untrained network, is 0).
    ladder: dict[int, float] = field(default_factory=lambda: {0: 0.0})
    best: int = 0


class Run:
    """One run folder (see the module docs)."""

    def __init__(self, cfg: TrainConfig, folder: str | os.PathLike[str]) -> None:
        if not cfg.source or parse_config(cfg.source) != cfg:
            raise ValueError(
                "the run folder keeps its config as TOML: pass a config file or "
                "parse_config(text), not a TrainConfig built or changed in code"
            )
        self.cfg = cfg
        self.dir = Path(folder)
        self.dir.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self.dir)
        saved = self.dir / "config.toml"
        if saved.exists() and not _same_run(parse_config(saved.read_text()), cfg):
            raise ValueError(
                f"{self.dir} holds a run with other settings ({saved}); resume it with those "
                "settings (only run.iterations, run.device, run.torch_threads and the evaluation "
                "may change) or start a new run folder"
            )
        # Everything is checked before the run folder takes the config, so that a typo does not
        # tie the folder to a config that cannot run: the device, the opponents, and (by the
        # engine) the self-play settings.
        self.device = _device(cfg.run.device)
        _check_opponents(cfg.evaluate)
        self.board = cfg.run.board
        self.selfplay_settings, self.warmup_settings = self._selfplay_settings()
        self.actions = action_space_size(self.board)
        torch.manual_seed(cfg.run.seed)
        self.net = ZertzNet(cfg.network, boards=[self.board]).to(self.device)
        self.opt = torch.optim.AdamW(
            self.net.parameters(), lr=cfg.train.learning_rate, weight_decay=cfg.train.weight_decay
        )
        self.gen = torch.Generator().manual_seed(cfg.run.seed)
        self.state = State()
        self.augment = Augmenter(self.board, self.device)
        self._tb: Any = None
        # Last: whatever failed above leaves a folder that takes any config.
        if not saved.exists() or saved.read_text() != cfg.source:
            _atomic_write_text(saved, cfg.source)
        for sub in ("shards", "models", "matches"):
            (self.dir / sub).mkdir(exist_ok=True)

    # -------------------------------------------------------------------- state and checkpoints

    @property
    def checkpoint(self) -> Path:
        return self.dir / "checkpoint.pt"

    def model_path(self, iteration: int) -> Path:
        return self.dir / "models" / f"iter-{iteration:04d}.pt"

    def start(self) -> None:
        """Loads the last checkpoint, or seeds a fresh network."""
        if self.checkpoint.exists():
            ck = load_checkpoint(self.checkpoint)
            try:
                self.net.load_state_dict(ck["model"])
                self.opt.load_state_dict(ck["optimizer"])
                self.state = State(**ck["state"])
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
                    f"{self.checkpoint} is not a usable checkpoint of this run ({_first_line(e)})"
                ) from None
            check_finite(self.net, str(self.checkpoint))
        _trim_partial_line(self.dir / "metrics.jsonl")
        if not self.model_path(self.state.iteration).exists():
            self.export(self.state.iteration)
        if not (self.dir / "models" / "best.pt").exists():
            _atomic_copy(self.model_path(self.state.best), self.dir / "models" / "best.pt")

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
        _atomic_save(
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
            },
            self.checkpoint,
        )

    def export(self, iteration: int) -> Path:
        return export(
            self.net, self.model_path(iteration), step=self.state.step, boards=[self.board]
        )

    # ---------------------------------------------------------------------------- self-play

    def _selfplay_settings(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """The engine's self-play settings from [selfplay], and those of the warm-up: the same
        with [warmup]'s simulations. Checked by the engine (ValueError naming a bad key). The
        warm-up plays with the rollout evaluator, which chooses the engine's search preset
        "rollout" (a high c_puct and an optimistic first-play urgency, one leaf per round: with
        uniform priors the network's settings hardly explore; BENCHMARKS.md, issue 4) unless
        [selfplay.search] names a preset."""
        run = {"board": self.board, "blitz": self.cfg.run.blitz}
        settings = {**self.cfg.selfplay.engine, **run}
        w = self.cfg.warmup
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

    def selfplay(self, iteration: int, log: Callable[[str], None]) -> dict[str, Any]:
        """Plays the missing chunks of an iteration with the current self-play network (or, in
        the warm-up, rollout MCTS); returns the totals of all its chunks (those kept from before
        an interruption too)."""
        folder = self.dir / "shards" / f"iter-{iteration:04d}"
        folder.mkdir(exist_ok=True)
        warmup = iteration < self.cfg.warmup.iterations
        guide: dict[str, Any]
        if warmup:
            guide = {"evaluator": "rollout", "config": self.warmup_settings}
            games = self.cfg.warmup.games
        else:
            # The network the checkpoint names (best.pt is only a convenience copy of it).
            guide = {
                "model": self.model_path(self.state.best),
                "config": self.selfplay_settings,
                "device": self.cfg.run.device,
            }
            games = self.cfg.selfplay.games
        chunks = self.cfg.selfplay.chunks
        totals: dict[str, float] = {}
        for c in range(chunks):
            done = folder / f"c{c}"
            if done.exists():
                # Finished before an interruption: kept, and counted in the iteration's totals.
                summary = json.loads((done / "summary.json").read_text())
            else:
                n = games // chunks + (1 if c < games % chunks else 0)
                # Leftovers of an interrupted attempt go; each attempt writes its own folder.
                for old in folder.glob(f".c{c}.*tmp"):
                    shutil.rmtree(old, ignore_errors=True)
                tmp = folder / f".c{c}.{os.getpid()}.tmp"
                seed = _seed(self.cfg.run.seed, iteration, c)
                summary = selfplay(tmp, games=n, seed=seed, **guide)
                # The shards by name: the folder is renamed below.
                summary["shards"] = [Path(p).name for p in summary["shards"]]
                (tmp / "summary.json").write_text(json.dumps(summary))
                os.replace(tmp, done)
                log(
                    f"  self-play chunk {c + 1}/{chunks}: {summary['games']} games"
                    f"{' of rollout MCTS' if warmup else ''}, "
                    f"{summary['samples']} positions in {summary['seconds']:.1f} s"
                )
            for k in ("games", "samples", "actions", "evaluations", "seconds", "network_seconds"):
                totals[k] = totals.get(k, 0.0) + float(summary.get(k) or 0.0)
            share = float(summary.get("network_share") or 0.0)
            totals["share_time"] = totals.get("share_time", 0.0) + share * summary["seconds"]
        # The share of the self-play time spent in the network, over all chunks.
        totals["network_share"] = totals.pop("share_time", 0.0) / max(totals["seconds"], 1e-9)
        return totals

    def window(self, iteration: int) -> list[Path]:
        """Shards of the last ``train.window`` iterations up to ``iteration``."""
        first = max(0, iteration - self.cfg.train.window + 1)
        paths: list[Path] = []
        for i in range(first, iteration + 1):
            paths += sorted((self.dir / "shards" / f"iter-{i:04d}").glob("c*/shard-*.npz"))
        return paths

    # ----------------------------------------------------------------------------- training

    def learning_rate(self, step: int) -> float:
        return learning_rate(self.cfg.train, self.cfg.run.iterations, step)

    def fit(self, shards: list[Path]) -> dict[str, float]:
        """``train.steps`` SGD steps on batches drawn from ``shards``."""
        t = self.cfg.train
        data = load_shards(shards, self.actions)
        n = len(data["value"])
        if n == 0 or t.steps == 0:
            nan = math.nan
            return {
                "samples": float(n),
                "policy_loss": nan,
                "value_loss": nan,
                "train_seconds": 0.0,
            }
        dev = self.device
        planes = torch.from_numpy(data["planes"]).to(dev)
        globals_ = torch.from_numpy(data["globals"]).to(dev)
        legal = torch.from_numpy(data["legal_mask"]).to(dev)
        policy = torch.from_numpy(data["policy"]).to(dev)
        q = t.q_weight
        target = (1 - q) * data["value"].astype(np.float32) + q * data["root_value"].astype(
            np.float32
        )
        value = torch.from_numpy(target).to(dev)
        full = torch.from_numpy(data["full_search"]).to(dev)
        self.net.train()
        sums = {"policy_loss": 0.0, "value_loss": 0.0}
        started = time.perf_counter()
        for _ in range(t.steps):
            lr = self.learning_rate(self.state.step)
            for group in self.opt.param_groups:
                group["lr"] = lr
            idx = torch.randint(n, (min(t.batch_size, n),), generator=self.gen).to(dev)
            p, lg, pol = planes[idx], legal[idx], policy[idx]
            if t.augment:
                p, lg, pol = self.augment(p, lg, pol, self.gen)
            pl, vl = losses(self.net, p, globals_[idx], lg, pol, value[idx], full[idx])
            loss = pl + t.value_weight * vl
            pl_f, vl_f, loss_f = torch.stack([pl.detach(), vl.detach(), loss.detach()]).tolist()
            if not math.isfinite(loss_f):
                raise NonFiniteError(
                    f"training diverged at step {self.state.step}: the loss is {loss_f} (policy "
                    f"{pl_f}, value {vl_f}) at learning rate {lr:g}; iteration "
                    f"{self.state.iteration + 1} was not saved: lower train.learning_rate (in a "
                    "new run folder)"
                )
            self.opt.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            self.opt.step()
            self.state.step += 1
            sums["policy_loss"] += pl_f
            sums["value_loss"] += vl_f
        self.net.eval()
        check_finite(self.net, f"after training step {self.state.step}")
        stats = {k: v / t.steps for k, v in sums.items()}
        stats["learning_rate"] = self.learning_rate(self.state.step)
        stats["samples"] = float(n)
        stats["train_seconds"] = time.perf_counter() - started
        return stats

    # --------------------------------------------------------------------------- evaluation

    def match(
        self,
        iteration: int,
        model: Path,
        opponent: str,
        games: int,
        sims: int,
        tag: str,
        opening: int = 0,
    ) -> dict[str, Any]:
        out = self.dir / "matches" / f"iter-{iteration:04d}-{tag}.jsonl"
        r: dict[str, Any] = engine_match(
            f"nn:{model}:{sims}",
            opponent,
            games=games,
            board=self.board,
            blitz=self.cfg.run.blitz,
            seed=self.cfg.run.seed + iteration,
            device=self.cfg.run.device,
            out=out,
            opening_actions=opening,
        )
        r["out"] = str(out)
        return r

    def evaluate(self, iteration: int, final: bool, log: Callable[[str], None]) -> dict[str, Any]:
        """The network after ``iteration`` iterations against the best one and the baselines."""
        e = self.cfg.evaluate
        model = self.model_path(iteration)
        games = e.final_games if final else e.games
        opponents = e.final_opponents if final else e.opponents
        sims = e.final_simulations if final else e.simulations
        results: dict[str, Any] = {}
        # The ladder chains through rated networks: the newest rated one at or before the best.
        anchor = max(k for k in self.state.ladder if k <= self.state.best)
        r = self.match(
            iteration,
            model,
            f"nn:{self.model_path(anchor)}:{e.simulations}",
            e.games,
            e.simulations,
            "previous",
            opening=e.opening_actions,
        )
        results["best"] = r
        self.state.ladder[iteration] = self.state.ladder[anchor] + r["elo"]
        log(
            f"  vs iteration {anchor}: {r['wins']}-{r['draws']}-{r['losses']} "
            f"(Elo {r['elo']:+.0f} ± {(r['elo_high'] - r['elo_low']) / 2:.0f})"
        )
        if not e.gating or r["score"] >= e.gating_score:
            self.state.best = iteration
            _atomic_copy(model, self.dir / "models" / "best.pt")
        for opp in opponents:
            tag = re.sub(r"[^A-Za-z0-9.-]+", "_", opp)
            r = self.match(iteration, model, opp, games, sims, tag)
            results[opp] = r
            log(
                f"  vs {opp}: {r['wins']}-{r['draws']}-{r['losses']} (score {r['score']:.2f}, "
                f"Elo {r['elo']:+.0f} ± {(r['elo_high'] - r['elo_low']) / 2:.0f})"
            )
        return results

    # ------------------------------------------------------------------------------ metrics

    def record(self, stats: dict[str, Any]) -> None:
        with open(self.dir / "metrics.jsonl", "a") as f:
            f.write(json.dumps(stats) + "\n")
        try:
            if self._tb is None:
                from torch.utils.tensorboard import SummaryWriter

                self._tb = SummaryWriter(str(self.dir / "tb"))
        except ImportError:
            return
        it = stats["iteration"]
        for k, v in stats.items():
            if isinstance(v, int | float) and k != "iteration":
                self._tb.add_scalar(k, v, it)
        for opp, r in stats.get("evaluation", {}).items():
            self._tb.add_scalar(f"score/{opp}", r["score"], it)
        self._tb.flush()


def iterate(
    config: TrainConfig | str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    *,
    log: Callable[[str], None] = print,
) -> Iterator[dict[str, Any]]:
    """The training loop as a generator: yields the statistics of every iteration it runs (the
    same object is appended to ``RUN/metrics.jsonl``). Resumes a run folder that holds a
    checkpoint. Stopping the generator (or Ctrl-C) between or during iterations loses nothing but
    the unfinished iteration's training."""
    cfg = config if isinstance(config, TrainConfig) else load_config(config)
    if cfg.run.torch_threads:
        torch.set_num_threads(cfg.run.torch_threads)
    run = Run(cfg, run_dir)
    run.start()
    if run.state.iteration >= cfg.run.iterations:
        log(f"{run.dir}: all {cfg.run.iterations} iterations are done")
        return
    if run.state.iteration:
        log(f"{run.dir}: resuming after iteration {run.state.iteration} (step {run.state.step})")
    while run.state.iteration < cfg.run.iterations:
        i = run.state.iteration
        started = time.perf_counter()
        log(f"iteration {i + 1}/{cfg.run.iterations}")
        sp = run.selfplay(i, log)
        warm = i < cfg.warmup.iterations
        shards = run.window(i)
        fit = run.fit(shards)
        run.state.iteration = i + 1
        run.export(i + 1)
        log(
            f"  trained to step {run.state.step} on {int(fit['samples'])} positions: "
            f"policy loss {fit.get('policy_loss', math.nan):.3f}, "
            f"value loss {fit.get('value_loss', math.nan):.3f}"
        )
        last = i + 1 == cfg.run.iterations
        every = cfg.evaluate.every
        evaluation = (
            run.evaluate(i + 1, last, log) if last or (every and (i + 1) % every == 0) else {}
        )
        if not evaluation and not cfg.evaluate.gating:
            # Without gating, self-play always uses the latest network.
            _atomic_copy(run.model_path(i + 1), run.dir / "models" / "best.pt")
            run.state.best = i + 1
        stats: dict[str, Any] = {
            "iteration": i + 1,
            "step": run.state.step,
            **{k: v for k, v in fit.items()},
            "selfplay_games": sp.get("games", 0.0),
            "selfplay_positions": sp.get("samples", 0.0),
            "selfplay_seconds": sp.get("seconds", 0.0),
            "selfplay_network_seconds": sp.get("network_seconds", 0.0),
            "elo": run.state.ladder.get(i + 1),
            "best": run.state.best,
            "evaluation": evaluation,
            "final": last,
            "seconds": time.perf_counter() - started,
            # Rollout self-play (the warm-up) has no network.
            "selfplay_network_share": None if warm else sp.get("network_share"),
            "warmup": warm,
        }
        # Metrics first: a kill between the two repeats the iteration (read_metrics keeps the
        # last line of each), where the other order would lose its line.
        run.record(stats)
        run.save()
        yield stats


def train(
    config: TrainConfig | str | os.PathLike[str],
    run_dir: str | os.PathLike[str],
    *,
    log: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Runs (or resumes) a training run to the end and returns the statistics of the iterations
    it ran. Ctrl-C stops it cleanly: the run folder keeps every finished self-play chunk and the
    last checkpoint, and the same call resumes it."""
    done: list[dict[str, Any]] = []
    try:
        for stats in iterate(config, run_dir, log=log):
            done.append(stats)
    except KeyboardInterrupt:
        log(f"stopped; run the same command again to resume from {run_dir}")
    return done


def final_table(run_dir: str | os.PathLike[str]) -> str:
    """The last evaluation of a run as a text table."""
    from zertz.plots import read_metrics

    evaluated = [x for x in read_metrics(run_dir) if x.get("evaluation")]
    if not evaluated:
        return "no evaluation yet"
    last = evaluated[-1]
    rows = [
        f"network after iteration {last['iteration']} (step {last['step']}):",
        f"{'opponent':<28} {'W':>4} {'D':>4} {'L':>4} {'score':>6} {'Elo':>14}",
    ]
    for opp, r in last["evaluation"].items():
        name = "previous best" if opp == "best" else opp
        half = (r["elo_high"] - r["elo_low"]) / 2
        rows.append(
            f"{name:<28} {r['wins']:>4} {r['draws']:>4} {r['losses']:>4} "
            f"{r['score']:>6.2f} {r['elo']:>+7.0f} ± {half:<4.0f}"
        )
    return "\n".join(rows)


def export_checkpoint(checkpoint: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Exports the network of a training checkpoint (``RUN/checkpoint.pt``) as a model file.
    ValueError for a file that is not one (it is read with ``weights_only=True``: objects, whose
    unpickling could run code, are refused) and for NaN or infinite weights."""
    ck = load_checkpoint(checkpoint)
    net = _net_of_checkpoint(ck, checkpoint)
    state = ck["state"]
    step = state.get("step") if isinstance(state, dict) else None
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ValueError(f"{checkpoint} is not a zertz training checkpoint (no training step)")
    return export(net, out, step=step, boards=net.boards)
