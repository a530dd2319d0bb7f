"""The settings of a training run: ``configs/train/*.toml`` read into typed, checked sections
(unknown keys are refused; the ``[selfplay]`` keys are checked by Rust's own types when a
run folder takes the config, see :mod:`zertz.training.selfplay`)."""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zertz._zertz import (
    BOARDS,
    MAX_MATCH_GAMES,
    Bot,
    Range,
    parse_player,
    selfplay_config,
)
from zertz.nn import NetConfig
from zertz.training.layout import opponent_tag
from zertz_engine import BUILTIN_MODEL, check_device

#: The largest seed ([run] seed): torch takes it, and Rust's u64 seeds take it plus the
#: iteration.
MAX_SEED = 2**63 - 1


#: The largest count Rust takes (games, simulations, opening actions: u32).
U32 = 2**32 - 1


def ranged(default: Any, values: Range) -> Any:
    """A section's number whose values ``values`` holds: Rust's :class:`Range`, so that
    the check and its words are Rust's (``parse_config`` checks every such field, and
    ``test_training.py`` probes each at its ends)."""
    return field(default=default, metadata={"range": values})


def declared_range(f: dataclasses.Field[Any]) -> Range | None:
    """The range a section's field declares with :func:`ranged`, if any."""
    values: Range | None = f.metadata.get("range")
    return values


@dataclass(frozen=True)
class RunSection:
    """``[run]``: what is trained, for how long."""

    #: Board size in rings.
    board: int = 37
    #: Blitz marble set.
    blitz: bool = False
    #: Iterations (self-play, then training, then evaluation).
    iterations: int = ranged(10, Range.at_least(1))
    #: Seed of the network's initial weights, the training and the self-play seeds.
    seed: int = ranged(0, Range.at_least(0))
    #: Device of the training and of the engine's networks: auto, cpu, cuda (every GPU), cuda:N
    #: or cuda:N,cuda:M (the engine's grammar). The training runs on the first of them, the
    #: engine's networks on each.
    device: str = "auto"
    #: Threads of torch in the training process (0: torch's default).
    torch_threads: int = ranged(0, Range.between(0, 4096))
    #: On a GPU, the engine's networks (self-play, evaluation matches) run through CUDA graphs:
    #: "auto" where they can be (a run's network files always can), true always (an error
    #: where they cannot be), false never (``zertz selfplay --cuda-graphs
    #: auto|on|off``). One-machine runs; Ray actors use the engine's default, "auto".
    cuda_graphs: bool | str = "auto"

    @property
    def cuda_graphs_flag(self) -> bool | None:
        """``cuda_graphs`` as the engine's ``cuda_graphs`` keyword takes it: None for "auto"."""
        return None if self.cuda_graphs == "auto" else self.cuda_graphs is True


@dataclass(frozen=True)
class SelfPlaySection:
    """``[selfplay]``: games per iteration; every other key goes to Rust's self-play
    settings (``configs/selfplay.toml`` documents them; unknown ones are refused there)."""

    #: Games per iteration.
    games: int = ranged(64, Range.between(1, U32))
    #: The games of an iteration are played in this many chunks; a finished chunk survives an
    #: interruption.
    chunks: int = ranged(2, Range.at_least(1))
    #: Rust's self-play settings (full_simulations, temperature, [search] ...).
    engine: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class WarmupSection:
    """``[warmup]``: the first self-play iterations played by rollout MCTS instead of the
    network (expert iteration, Anthony et al. 2017). An untrained network plays about as well as
    random moves, so AlphaZero's first iterations learn from poor games; rollout MCTS plays well
    from the start and is cheap on the CPU, so the first network learns from good ones. Its games
    stay in the replay window like any others; the later iterations are AlphaZero's."""

    #: Self-play iterations played by rollout MCTS (0: none, the network from the first).
    iterations: int = ranged(0, Range.at_least(0))
    #: Games of each of those iterations (at least [selfplay] chunks).
    games: int = ranged(1000, Range.at_most(U32))
    #: Rollouts of a full search (the positions that become policy targets).
    full_simulations: int = 800
    #: Rollouts of a fast search ([selfplay]'s playout-cap randomization applies).
    fast_simulations: int = 200


@dataclass(frozen=True)
class PretrainSection:
    """``[pretrain]``: supervised learning from game records before self-play (AlphaGo's first
    policy learned from people): the shards of a dataset that ``zertz dataset`` made, learnt
    before the first iteration; the human-move benchmark on the dataset's validation games is
    logged then and at every evaluation."""

    #: A folder made by ``zertz dataset`` (train/, validation/, games.jsonl); empty: none.
    dataset: str = ""
    #: Record files, folders or archives: when ``dataset`` does not exist yet, it is made from
    #: them (the pretraining boards only; ``zertz.dataset``'s other defaults).
    records: list[str] = field(default_factory=list)
    #: SGD steps on the records (0: no pretraining; the dataset still serves the benchmark).
    steps: int = ranged(0, Range.at_least(0))
    #: Boards whose records are learnt (empty: the run's board). The network is one for all of
    #: them.
    boards: list[int] = field(default_factory=list)
    #: Positions per SGD step.
    batch_size: int = ranged(256, Range.at_least(1))
    #: AdamW learning rate of the pretraining (cosine down to a tenth of it).
    learning_rate: float = ranged(2e-3, Range.above(0))
    #: Shards loaded at a time (each chunk is trained on once, in random batches).
    chunk_shards: int = ranged(4, Range.at_least(1))
    #: Validation games per board of the human-move benchmark (0: no benchmark).
    benchmark_games: int = ranged(200, Range.at_least(0))


@dataclass(frozen=True)
class TrainSection:
    """``[train]``: the optimisation."""

    #: Positions per SGD step.
    batch_size: int = ranged(256, Range.at_least(1))
    #: SGD steps per iteration.
    steps: int = ranged(100, Range.at_least(0))
    #: AdamW learning rate (at the start, with a schedule).
    learning_rate: float = ranged(2e-3, Range.above(0))
    #: Learning-rate schedule over the run's steps: "constant", or "cosine" (from learning_rate
    #: down to final_learning_rate at the last step of the last iteration).
    schedule: str = "constant"
    #: The learning rate at the end of a cosine schedule.
    final_learning_rate: float = ranged(1e-4, Range.at_least(0))
    #: AdamW weight decay.
    weight_decay: float = ranged(1e-4, Range.at_least(0))
    #: Self-play iterations in the replay window (the most recent ones).
    window: int = ranged(4, Range.at_least(1))
    #: Apply a random symmetry of the board to every position.
    augment: bool = True
    #: Weight of the value loss against the policy loss.
    value_weight: float = ranged(1.0, Range.at_least(0))
    #: Weight of the auxiliary loss (each side's captures by colour at the game's end, predicted
    #: by a head that training alone uses; in pretraining too). 0: off.
    captures_weight: float = ranged(1.0, Range.at_least(0))
    #: The run's final network is the mean of the weights of its last ``average`` iterations'
    #: networks (stochastic weight averaging): ``models/iter-N-average.safetensors``, which
    #: the final evaluation plays and ``best.safetensors`` becomes. Self-play and the ladder
    #: before it use each iteration's own network. 1: the last iteration's network, as it is.
    average: int = ranged(1, Range.between(1, 1000))
    #: Value target: (1 - q_weight) * the game's result + q_weight * the search's value of the
    #: position (0: the result alone, as in AlphaZero; mixing in the search value lowers the
    #: noise of the target when there are few games).
    q_weight: float = ranged(0.0, Range.between(0, 1))


@dataclass(frozen=True)
class EvalSection:
    """``[evaluate]``: matches of the new network."""

    #: Evaluate every this many iterations (and after the last one); 0: only after the last.
    every: int = ranged(1, Range.at_least(0))
    #: Games per match during the run.
    games: int = ranged(20, Range.between(1, MAX_MATCH_GAMES))
    #: Simulations per move of the network in the matches.
    simulations: int = 100
    #: Baselines played during the run, by their player specs (``zertz.PLAYER_SPECS``).
    opponents: list[str] = field(default_factory=lambda: ["random", "greedy"])
    #: Games per match in the final evaluation.
    final_games: int = ranged(100, Range.between(1, MAX_MATCH_GAMES))
    #: Baselines of the final evaluation.
    final_opponents: list[str] = field(default_factory=lambda: ["random", "greedy", "mcts:1000"])
    #: Simulations per move of the network in the final evaluation.
    final_simulations: int = 200
    #: Self-play uses the best network so far, replaced only by one that scores at least
    #: gating_score against it (off: always the latest).
    gating: bool = False
    #: Score needed to replace the best network when gating.
    gating_score: float = ranged(0.55, Range.between(0, 1))
    #: Random single actions opening each game between two networks (the same for both games of
    #: a pair): searches without noise would otherwise repeat the same few games.
    opening_actions: int = ranged(4, Range.between(0, U32))


@dataclass(frozen=True)
class DistributedSection:
    """``[distributed]``: training across machines on Ray (``python -m zertz train --ray
    ADDRESS``, :mod:`zertz.training.distributed`): self-play actors send chunks of games to one
    learner, which trains an iteration (``train.steps`` steps on the window) whenever the positions
    received since its last one allow ``train_ratio`` positions trained per position generated,
    and sends each new network back. None of this changes the run itself: a run folder may be
    resumed with other settings here, or on one machine."""

    #: Ray's address: "" (one machine, no Ray, unless ``--ray`` says otherwise), "auto" (the
    #: cluster this machine belongs to), "local" (a Ray instance started for this run), or
    #: HOST:PORT of the cluster's head.
    address: str = ""
    #: Self-play actors.
    actors: int = ranged(2, Range.between(1, 10_000))
    #: CPUs of each actor (its engine runs this many threads, at least one).
    actor_cpus: float = ranged(1.0, Range.above(0))
    #: GPUs of each actor (a fraction shares one GPU among actors).
    actor_gpus: float = ranged(0.0, Range.at_least(0))
    #: CPUs of the learner (its torch threads, unless run.torch_threads says otherwise).
    learner_cpus: float = ranged(1.0, Range.above(0))
    #: GPUs of the learner.
    learner_gpus: float = ranged(0.0, Range.at_least(0))
    #: Games per chunk: what an actor plays between two looks at the newest network, and what
    #: reaches the learner whole or not at all.
    chunk_games: int = ranged(8, Range.between(1, U32))
    #: Positions trained (train.steps * train.batch_size per iteration) per position generated:
    #: the learner waits for positions when it is ahead (the actors never wait). 9 is the
    #: default run's (76,800 positions trained per iteration of about 8,500 played).
    train_ratio: float = ranged(9.0, Range.above(0))


@dataclass(frozen=True)
class TrainConfig:
    """A training run's settings (``configs/train/*.toml``); see :func:`load_config`."""

    run: RunSection = field(default_factory=RunSection)
    network: NetConfig = field(default_factory=NetConfig)
    selfplay: SelfPlaySection = field(default_factory=SelfPlaySection)
    warmup: WarmupSection = field(default_factory=WarmupSection)
    pretrain: PretrainSection = field(default_factory=PretrainSection)
    train: TrainSection = field(default_factory=TrainSection)
    evaluate: EvalSection = field(default_factory=EvalSection)
    distributed: DistributedSection = field(default_factory=DistributedSection)
    #: The TOML text it came from (copied into the run folder); not part of the settings, so
    #: configs that differ only in comments or layout are equal.
    source: str = field(default="", compare=False)


#: The tables of a training config that :func:`section` reads, by name (``[network]`` is
#: :class:`NetConfig`'s; the keys of ``[selfplay]`` but ``games`` and ``chunks`` are Rust's).
SECTIONS: dict[str, type[Any]] = {
    "run": RunSection,
    "selfplay": SelfPlaySection,
    "warmup": WarmupSection,
    "pretrain": PretrainSection,
    "train": TrainSection,
    "evaluate": EvalSection,
    "distributed": DistributedSection,
}


def section(cls: type[Any], table: Mapping[str, Any], name: str) -> Any:
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
            "bool | str": isinstance(v, bool | str),
            "list[str]": isinstance(v, list) and all(isinstance(x, str) for x in v),
            "list[int]": isinstance(v, list)
            and all(isinstance(x, int) and not isinstance(x, bool) for x in v),
        }.get(str(want), True)
        if not ok:
            raise ValueError(f"{name}.{k} must be of type {want}, not {v!r}")
        # TOML has nan and inf, and integers of any size (tomllib): none is a usable setting.
        if want == "float" and not math.isfinite(v):
            raise ValueError(f"{name}.{k} must be a finite number, not {v!r}")
        if want == "int" and not -MAX_SEED <= v <= MAX_SEED:
            raise ValueError(f"{name}.{k} is out of range: {v!r} (the limit is ±(2**63 - 1))")
        declared = declared_range(known[k])
        if declared is not None and not declared.contains(v):
            words = declared.reason("int" if want == "int" else "number")
            raise ValueError(f"{name}.{k} {words}, not {v!r}")
        values[k] = float(v) if want == "float" else v
    return cls(**values)


def parse_config(text: str) -> TrainConfig:
    """Reads a training config from TOML text; ValueError names a bad or unknown key."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"bad TOML: {e}") from e
    tables = {*SECTIONS, "network"}
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
    tables_of = {**doc, "selfplay": ours}
    sections = {name: section(cls, tables_of.get(name, {}), name) for name, cls in SECTIONS.items()}
    sections["selfplay"] = dataclasses.replace(sections["selfplay"], engine=sp)
    cfg = TrainConfig(network=NetConfig.from_dict(doc.get("network", {})), source=text, **sections)
    r, sp_, w, tr, ev = cfg.run, cfg.selfplay, cfg.warmup, cfg.train, cfg.evaluate
    pt = cfg.pretrain
    # What one field's range cannot say: a field against another, a word of a grammar.
    checks = [
        (r.board in BOARDS, f"run.board must be one of {BOARDS}, not {r.board}"),
        (
            r.cuda_graphs is True or r.cuda_graphs is False or r.cuda_graphs == "auto",
            f'run.cuda_graphs must be true, false or "auto", not {r.cuda_graphs!r}',
        ),
        (
            not (r.cuda_graphs is True and r.device == "cpu"),
            "run.cuda_graphs needs a GPU, and run.device is cpu",
        ),
        (sp_.chunks <= sp_.games, "selfplay.chunks must be at most selfplay.games"),
        (sp_.chunks <= w.games, "warmup.games must be at least selfplay.chunks"),
        (pt.steps == 0 or pt.dataset != "", "pretrain.steps needs pretrain.dataset"),
        (not pt.records or pt.dataset != "", "pretrain.records needs pretrain.dataset"),
        (
            all(b in BOARDS for b in pt.boards),
            f"pretrain.boards must be among {BOARDS}, not {pt.boards}",
        ),
        (tr.schedule in ("constant", "cosine"), "train.schedule: constant or cosine"),
    ]
    for ok, message in checks:
        if not ok:
            raise ValueError(message)
    # What Rust and the engine own, they check: the warm-up's simulations (the ranges of Rust's
    # self-play settings), the device grammar (the engine's), and the simulations of the
    # evaluation's players (the limit of Rust's player grammar).
    try:
        selfplay_config(
            {"full_simulations": w.full_simulations, "fast_simulations": w.fast_simulations}
        )
    except ValueError as e:
        raise ValueError(f"warmup.{e}") from None
    try:
        check_device(r.device)
    except ValueError as e:
        raise ValueError(f"run.device: {e}") from None
    for key in ("simulations", "final_simulations"):
        try:
            parse_player(f"nn:{BUILTIN_MODEL}:{getattr(ev, key)}")
        except ValueError as e:
            raise ValueError(f"evaluate.{key}: {e}") from None
    return cfg


def load_config(path: str | os.PathLike[str]) -> TrainConfig:
    """Reads ``configs/train/NAME.toml``: tables ``[run]``, ``[network]`` (``preset`` or sizes),
    ``[selfplay]``, ``[warmup]``, ``[pretrain]``, ``[train]``, ``[evaluate]``,
    ``[distributed]``; every key is optional and unknown keys are refused.

    >>> from zertz.training import load_config
    >>> cfg = load_config("../configs/train/tiny.toml")
    >>> cfg.run.board, cfg.network.channels
    (37, 16)

    The file is read as :func:`zertz.files.read_text` reads a config: OSError naming it for one
    that is not a regular file (a FIFO, a device: refused before it is opened) or is past
    ``zertz.files.LIMITS["config"]``.
    """
    from zertz.files import read_text

    text = read_text(path, "config")
    try:
        return parse_config(text)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def same_run(saved: TrainConfig, cfg: TrainConfig) -> bool:
    """Whether ``cfg`` continues the run of ``saved``: only the length, the device, the torch
    threads, CUDA graphs, the evaluation and the ``[distributed]`` settings may differ."""

    def core(c: TrainConfig) -> TrainConfig:
        run = dataclasses.replace(
            c.run, iterations=0, device="", torch_threads=0, cuda_graphs=False
        )
        gating = EvalSection(gating=c.evaluate.gating, gating_score=c.evaluate.gating_score)
        return dataclasses.replace(
            c, run=run, evaluate=gating, distributed=DistributedSection(), source=""
        )

    return core(saved) == core(cfg)


def check_plays(opp: str, model: str, run: RunSection | None) -> None:
    """The network ``model`` of the opponent ``opp`` is a network file (read and checked as the
    engine reads it: a TorchScript file or an AOTInductor package, which are programs, is
    refused with the command that converts it; the trainer runs no code of a file) and plays
    the ``run``'s board and marble set when one is given (its metadata's ``boards`` and
    ``marbles``), as the engine will check when the match starts."""
    from zertz.exported import read_metadata
    from zertz.nn import marbles_of

    try:
        meta = read_metadata(model)
    except ValueError as e:
        raise ValueError(f"evaluate: opponent {opp!r}: {e}") from None
    if run is None:
        return
    (marbles,) = marbles_of(run.blitz)
    if run.board not in meta["boards"] or marbles not in meta["marbles"]:
        boards = ", ".join(str(b) for b in meta["boards"])
        raise ValueError(
            f"evaluate: opponent {opp!r}: its network plays {boards} rings with the "
            f"{' or '.join(meta['marbles'])} marbles, not this run's {run.board} rings with the "
            f"{marbles} marbles"
        )


def check_opponents(e: EvalSection, run: RunSection | None = None) -> None:
    """Every opponent is a player spec of Rust's grammar, a network's file exists (or it
    is the built-in network, ``nn:builtin``), is a network file (:func:`check_plays`: not a
    program) and plays the ``run``'s board and marble set (when one is given), a ``cmd:``
    player's program can be started (on the PATH, or an executable file) and answers its name
    (it is started, asked, and ended), and no evaluation names one player twice (two spellings
    of one, ``mcts:10`` and ``mcts: 10``, or two that would write one match file): checked when
    a run folder takes the config, not when the first evaluation plays. The programs are
    started last, once each, when everything else holds."""
    programs: list[str] = []
    for key in ("opponents", "final_opponents"):
        players: dict[str, str] = {}  # canonical spec: as written
        tags: dict[str, str] = {}  # match file's tag: as written
        for opp in getattr(e, key):
            try:
                player = parse_player(opp)
            except ValueError as err:
                raise ValueError(f"evaluate: unknown opponent {opp!r}: {err}") from None
            name, model = player["name"], player["model"]
            if model is not None and model != BUILTIN_MODEL and not Path(model).exists():
                raise ValueError(f"evaluate: opponent {opp!r}: no model file {model}")
            if model is not None:
                check_plays(opp, model, run)
            program = player["program"]
            if program is not None:
                if shutil.which(program) is None:
                    raise ValueError(
                        f"evaluate: opponent {opp!r}: no program {program!r} (neither on the "
                        "PATH nor an executable file)"
                    )
                if opp not in programs:
                    programs.append(opp)
            if name in players:
                raise ValueError(
                    f"evaluate.{key} names one player twice: {players[name]!r} and {opp!r} "
                    f"(both {name}); their matches would write one file"
                )
            tag = opponent_tag(opp)
            if tag in tags:
                raise ValueError(
                    f"evaluate.{key}: {tags[tag]!r} and {opp!r} would write their games to one "
                    f"file (matches/iter-N-{tag}.jsonl): spell one otherwise"
                )
            players[name], tags[tag] = opp, opp
    for opp in programs:
        # Rust's player starts the program and asks its name (within Rust's answer time), as a
        # match will; dropping it ends the program.
        try:
            Bot(opp)
        except (ValueError, RuntimeError, OSError) as err:
            raise ValueError(f"evaluate: opponent {opp!r}: {err}") from None
