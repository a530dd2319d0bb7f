"""The training loop (zertz.training): its config, a run end to end, resuming after an
interruption, export of a checkpoint and the plots.

Two tiny runs of two iterations are shared by the tests: ``run_a`` runs uninterrupted and
``run_b`` is stopped after its first iteration, given a half-written self-play chunk and resumed;
both must end in the same state.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import json
import math
import os
import pickle
import random
import re
import shutil
import time
import warnings
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import matplotlib
import numpy as np
import numpy.typing as npt
import pytest
import torch

import zertz
import zertz.__main__
from zertz._zertz import Range, partial_owner
from zertz.exported import average_networks, export, load_network, read_metadata
from zertz.nn import AUX_PREFIX, MAX_PARAMETERS, NetConfig, ZertzNet, parameter_count
from zertz.training import (
    Run,
    TrainConfig,
    export_checkpoint,
    final_table,
    iterate,
    load_config,
    parse_config,
    train,
)
from zertz.training.config import SECTIONS, declared_range
from zertz.training.distributed import Learner
from zertz.training.layout import RunLayout, chunk_name, local_chunk_name
from zertz.training.loop import threads_note
from zertz.training.records import (
    ChunkRecord,
    ChunkSummary,
    LearnerStatus,
    PlayedChunk,
    write_chunk,
)

from conftest import ANSWERS_NAME, ENDS_AT_ONCE

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "configs" / "train" / "tiny.toml"
#: configs/train/tiny.toml made cheaper still: one game per self-play chunk, few simulations.
FAST = {
    "selfplay.games": "2",
    "selfplay.full_simulations": "8",
    "selfplay.fast_simulations": "4",
    "evaluate.simulations": "4",
    "evaluate.final_opponents": '["random"]',
}


def tiny_text(**overrides: str) -> str:
    """The text of configs/train/tiny.toml with values replaced: ``section__key="TOML value"``
    (and the FAST settings)."""
    wanted = {**FAST, **{k.replace("__", "."): v for k, v in overrides.items()}}
    section = ""
    lines = []
    for line in TINY.read_text().splitlines():
        if m := re.match(r"\[(\w+)\]", line):
            section = m[1]
        elif (m := re.match(r"(\w+) = ", line)) and f"{section}.{m[1]}" in wanted:
            line = f"{m[1]} = {wanted.pop(f'{section}.{m[1]}')}"
        lines.append(line)
    assert not wanted, f"not in {TINY}: {wanted}"
    return "\n".join(lines) + "\n"


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def stamps(folder: Path) -> dict[str, tuple[int, int, bytes]]:
    """Inode, modification time and content of every file under ``folder``."""
    return {
        str(p.relative_to(folder)): (p.stat().st_ino, p.stat().st_mtime_ns, p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def metrics(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]


def weights(path: Path) -> dict[str, torch.Tensor]:
    """The weights a network file holds (not the training-only head, which
    :func:`load_network` makes afresh)."""
    return {
        k: v for k, v in load_network(path).state_dict().items() if not k.startswith(AUX_PREFIX)
    }


def checkpoint(run: Path) -> dict[str, Any]:
    ck: dict[str, Any] = torch.load(run / "checkpoint.pt", map_location="cpu", weights_only=True)
    return ck


def shard_arrays(chunk: Path) -> dict[str, npt.NDArray[Any]]:
    (path,) = sorted(chunk.glob("shard-*.npz"))
    with np.load(path) as shard:
        return {k: shard[k] for k in shard.files}


@pytest.fixture(scope="module")
def cfg() -> TrainConfig:
    return parse_config(tiny_text())


@pytest.fixture(scope="module")
def run_a(program: Path, cfg: TrainConfig, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two iterations, uninterrupted."""
    folder = tmp_path_factory.mktemp("run-a")
    stats = train(cfg, folder, log=lambda _: None)
    assert [s["iteration"] for s in stats] == [1, 2]
    return folder


@dataclass
class Resumed:
    folder: Path
    #: Files, metrics and stamps of the iteration-0 shards when the first iteration had finished.
    files_after_first: set[str]
    metrics_after_first: list[dict[str, Any]]
    shards0_before: dict[str, tuple[int, int, bytes]]
    #: Iteration 1's chunk c0 (finished) and c1 (as the engine wrote it, then made unfinished).
    chunk0_before: dict[str, tuple[int, int, bytes]]
    chunk1_arrays: dict[str, npt.NDArray[Any]]
    #: What the resumed train() returned and logged.
    stats: list[dict[str, Any]]
    log: list[str]


@pytest.fixture(scope="module")
def run_b(program: Path, cfg: TrainConfig, tmp_path_factory: pytest.TempPathFactory) -> Resumed:
    """The same run as ``run_a`` stopped twice: once after its first iteration (the generator is
    closed), once during the self-play of the second (chunk c0 finished, c1 left half written
    as ``.c1.partial-PID`` by a process that no longer runs); then resumed to the end."""
    folder = tmp_path_factory.mktemp("run-b")
    loop = iterate(cfg, folder, log=lambda _: None)
    assert isinstance(loop, Generator)
    first = next(loop)
    loop.close()
    assert first["iteration"] == 1
    files_after_first = files(folder)
    metrics_after_first = metrics(folder)
    shards0_before = stamps(folder / "shards" / "iter-0000")

    # A kill during the second iteration's self-play: c0 is done, c1 half written.
    run = Run(cfg, folder)
    run.start()
    run.selfplay(1, log=lambda _: None)
    chunks = folder / "shards" / "iter-0001"
    chunk1_arrays = shard_arrays(chunks / "c1")
    killed = chunks / ".c1.partial-4294967295"  # above any process id: a process that is gone
    os.replace(chunks / "c1", killed)
    (killed / "summary.json").unlink()
    (killed / "shard-00-99999.npz").write_bytes(b"cut short")
    chunk0_before = stamps(chunks / "c0")
    del run  # its process-wide lock on the folder goes with it

    log: list[str] = []
    stats = train(cfg, folder, log=log.append)
    return Resumed(
        folder=folder,
        files_after_first=files_after_first,
        metrics_after_first=metrics_after_first,
        shards0_before=shards0_before,
        chunk0_before=chunk0_before,
        chunk1_arrays=chunk1_arrays,
        stats=stats,
        log=log,
    )


# -------------------------------------------------------------------------------------- config


def test_every_config_file_loads() -> None:
    paths = sorted((REPO / "configs" / "train").glob("*.toml"))
    assert TINY in paths
    for path in paths:
        cfg = load_config(path)
        assert cfg.source == path.read_text()
        assert cfg.run.board in zertz.BOARDS
        assert cfg.network.channels >= 1


def test_distributed_settings_are_checked_and_may_change_between_resumes() -> None:
    base = TINY.read_text()
    cfg = parse_config(base + "\n[distributed]\nactors = 3\ntrain_ratio = 4.5\n")
    assert (cfg.distributed.actors, cfg.distributed.train_ratio) == (3, 4.5)
    assert cfg.distributed.address == "" and cfg.distributed.chunk_games == 8
    for bad, message in [
        ("actors = 0", "distributed.actors"),
        ("train_ratio = 0.0", "distributed.train_ratio"),
        ("actor_cpus = -1", "actor_cpus"),
        ("learner_gpus = -0.5", "learner_gpus"),
        ("chunk_games = 0", "distributed.chunk_games"),
        ("actors = 1.5", "distributed.actors must be of type int"),
        ("workers = 4", "unknown key(s) distributed.workers"),
    ]:
        with pytest.raises(ValueError, match=re.escape(message)):
            parse_config(base + f"\n[distributed]\n{bad}\n")
    # A run folder resumes on Ray or on one machine, with any [distributed] settings.
    from zertz.training.config import same_run

    assert same_run(load_config(TINY), cfg)
    with pytest.raises(ValueError, match="no Ray address"):
        from zertz.training.distributed import train_distributed

        train_distributed(load_config(TINY), "unused")


def test_tiny_config() -> None:
    cfg = load_config(TINY)
    assert (cfg.run.board, cfg.run.iterations, cfg.run.device) == (37, 2, "cpu")
    assert (cfg.network.channels, cfg.network.blocks) == (16, 1)
    assert (cfg.selfplay.games, cfg.selfplay.chunks) == (4, 2)
    # Every other [selfplay] key goes to the engine.
    assert cfg.selfplay.engine["threads"] == 1
    assert cfg.selfplay.engine["full_simulations"] == 16
    assert "games" not in cfg.selfplay.engine and "chunks" not in cfg.selfplay.engine
    assert cfg.train.learning_rate == 0.002 and cfg.evaluate.opponents == ["random"]


def test_defaults() -> None:
    cfg = parse_config("")
    assert cfg == TrainConfig()
    assert parse_config("[run]\n[train]\n") == TrainConfig()


def test_unknown_table() -> None:
    with pytest.raises(ValueError, match=r"unknown table.*trian"):
        parse_config("[trian]\nsteps = 3\n")
    with pytest.raises(ValueError, match="run must be a table"):
        parse_config("run = 3\n")


@pytest.mark.parametrize("section", ["run", "warmup", "train", "evaluate"])
def test_unknown_key(section: str) -> None:
    with pytest.raises(ValueError, match=rf"{section}\.foo\b"):
        parse_config(f"[{section}]\nfoo = 1\n")


def test_unknown_network_key() -> None:
    with pytest.raises(ValueError, match=r"network.*'foo'"):
        parse_config("[network]\nchannels = 8\nfoo = 1\n")


def test_unknown_selfplay_key_goes_to_the_engine(tmp_path: Path) -> None:
    """Rust's own types check [selfplay] before the run folder takes the config."""
    cfg = parse_config(tiny_text().replace("[selfplay]\n", "[selfplay]\nfulll_simulations = 4\n"))
    assert cfg.selfplay.engine["fulll_simulations"] == 4
    with pytest.raises(
        ValueError, match=r'\[selfplay\]: unknown key "fulll_simulations" \(the keys: board'
    ):
        train(cfg, tmp_path, log=lambda _: None)
    assert not (tmp_path / "config.toml").exists()
    bad = parse_config(tiny_text().replace("[selfplay]\n", "[selfplay]\ntemperature = -1.0\n"))
    with pytest.raises(ValueError, match=r"\[selfplay\]: temperature: must be"):
        train(bad, tmp_path, log=lambda _: None)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[run]\nboard = "37"\n', "run.board"),
        ("[run]\nblitz = 1\n", "run.blitz"),
        ("[run]\ndevice = 0\n", "run.device"),
        ("[run]\niterations = 2.0\n", "run.iterations"),
        ('[train]\naugment = "yes"\n', "train.augment"),
        ("[train]\nsteps = 1.5\n", "train.steps"),
        ("[train]\nlearning_rate = true\n", "train.learning_rate"),
        ('[evaluate]\nopponents = "random"\n', "evaluate.opponents"),
        ("[evaluate]\nfinal_opponents = [1]\n", "evaluate.final_opponents"),
        ('[selfplay]\ngames = "2"\n', "selfplay.games"),
        ('[network]\nchannels = "16"\n', "network.channels"),
        ("[network]\nblocks = 0\n", "network.blocks"),
    ],
)
def test_wrong_types(text: str, key: str) -> None:
    with pytest.raises(ValueError, match=re.escape(key)):
        parse_config(text)


def test_int_is_a_float() -> None:
    cfg = parse_config("[train]\nlearning_rate = 1\nvalue_weight = 2\n")
    assert cfg.train.learning_rate == 1.0 and isinstance(cfg.train.learning_rate, float)
    assert isinstance(cfg.train.value_weight, float)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[run]\niterations = 0\n", "run.iterations"),
        ("[run]\nboard = 36\n", "run.board"),
        ("[selfplay]\ngames = 0\n", "selfplay.games"),
        ("[selfplay]\ngames = 2\nchunks = 3\n", "selfplay.chunks"),
        ("[selfplay]\nchunks = 0\n", "selfplay.chunks"),
        ("[train]\nwindow = 0\n", "train.window"),
        ("[train]\nlearning_rate = 0.0\n", "train.learning_rate"),
        ("[train]\nbatch_size = 0\n", "train.batch_size"),
        ("[evaluate]\nevery = -1\n", "evaluate.every"),
        ("[evaluate]\nsimulations = 0\n", "evaluate.simulations"),
        ("[evaluate]\nfinal_simulations = 0\n", "evaluate.final_simulations"),
        ("[evaluate]\ngating_score = 1.5\n", "evaluate.gating_score"),
        ("[evaluate]\nopponents = []\ngames = 0\n", "evaluate.games"),
        ("[evaluate]\nfinal_games = 0\n", "evaluate.final_games"),
        ("[train]\nq_weight = 2.0\n", "train.q_weight"),
        ('[train]\nschedule = "linear"\n', "train.schedule"),
        ("[train]\nfinal_learning_rate = -1.0\n", "train.final_learning_rate"),
        ("[run]\ntorch_threads = -1\n", "run.torch_threads"),
        ('[run]\ndevice = "cpu"\ncuda_graphs = true\n', "run.cuda_graphs needs a GPU"),
        ('[run]\ncuda_graphs = "yes"\n', 'run.cuda_graphs must be true, false or "auto"'),
        ("[run]\ncuda_graphs = 1\n", "run.cuda_graphs must be of type bool | str"),
        ("[warmup]\niterations = -1\n", "warmup.iterations"),
        ("[warmup]\ngames = 1\n", "warmup.games"),
        # Rust's range, its words (zertz_settings): one simulation evaluates the root only.
        ("[warmup]\nfast_simulations = 0\n", "warmup.fast_simulations: must be at least 2"),
        ("[warmup]\nfull_simulations = 1\n", "warmup.full_simulations: must be at least 2"),
    ],
)
def test_values_out_of_range(text: str, key: str) -> None:
    with pytest.raises(ValueError, match=re.escape(key)):
        parse_config(text)


#: Every section's declared range, by key: ``(section, field, range, kind)``.
DECLARED: list[tuple[str, str, Range, Literal["int", "number"]]] = [
    (section, f.name, values, "int" if str(f.type) == "int" else "number")
    for section, cls in SECTIONS.items()
    for f in dataclasses.fields(cls)
    if (values := declared_range(f)) is not None
]
#: What a probe of a key needs besides it (a field checked against another).
PROBE_CONTEXT = {("selfplay", "games"): "chunks = 1\n"}


def test_every_number_of_the_config_declares_its_range_or_is_the_engines() -> None:
    """A number added to a section without a range fails here: it declares one with
    ``ranged``, or Rust checks it (a board, Rust's simulations)."""
    numbers = {
        f"{section}.{f.name}"
        for section, cls in SECTIONS.items()
        for f in dataclasses.fields(cls)
        if str(f.type) in ("int", "float")
    }
    declared = {f"{section}.{name}" for section, name, _, _ in DECLARED}
    assert numbers - declared == {
        "run.board",
        "warmup.full_simulations",
        "warmup.fast_simulations",
        "evaluate.simulations",
        "evaluate.final_simulations",
    }


def probes(values: Range, integer: bool) -> list[tuple[float, bool]]:
    """Values at and just past each end of ``values``: ``(value, taken)``."""
    out: list[tuple[float, bool]] = []
    for end, outward in ((values.low, -math.inf), (values.high, math.inf)):
        if end is None:
            continue
        at, included = end
        step = 1 if outward > 0 else -1
        if integer:
            first = int(at) if included else int(at) - step
            out += [(first, True), (first + step, False)]
        else:
            inside = at if included else math.nextafter(at, -outward)
            out += [(inside, True), (math.nextafter(inside, outward), False)]
    return out


@pytest.mark.parametrize(
    ("section", "key", "values", "kind"), DECLARED, ids=[f"{s}.{k}" for s, k, _, _ in DECLARED]
)
def test_every_declared_range_holds_at_its_ends(
    section: str, key: str, values: Range, kind: Literal["int", "number"]
) -> None:
    """A value at an end of a key's declared range is taken, one just past it is refused with
    Rust's words for the range; the default is in the range."""
    cls = SECTIONS[section]
    assert values.contains(getattr(cls(), key))
    context = PROBE_CONTEXT.get((section, key), "")
    cases = probes(values, kind == "int")
    assert cases
    for value, taken in cases:
        text = f"[{section}]\n{context}{key} = {value!r}\n"
        if taken:
            assert getattr(getattr(parse_config(text), section), key) == value
        else:
            message = f"{section}.{key} {values.reason(kind)}, not {value!r}"
            with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
                parse_config(text)


@pytest.mark.parametrize("key", ["board = 37", "blitz = true", "seed = 3"])
def test_selfplay_keys_of_the_loop_are_refused(key: str) -> None:
    name = key.split()[0]
    with pytest.raises(ValueError, match=rf"selfplay\.{name}\b"):
        parse_config(f"[selfplay]\n{key}\n")


def test_bad_toml_and_load_config_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bad TOML"):
        parse_config("[run\n")
    path = tmp_path / "bad.toml"
    path.write_text("[train]\nfoo = 1\n")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}: .*train\.foo"):
        load_config(path)


# --------------------------------------------------------------------------------- a whole run


def test_warmup_plays_rollout_mcts_first(program: Path, tmp_path: Path) -> None:
    """With [warmup], the first iteration's games are rollout MCTS's (with Rust's search
    preset "rollout", which the rollout evaluator chooses, and [warmup]'s simulations), the
    second's the network's (the default preset); both train the network."""
    warm = "[warmup]\niterations = 1\ngames = 6\nfull_simulations = 24\nfast_simulations = 6\n"
    cfg = parse_config(tiny_text() + warm)
    assert (cfg.warmup.iterations, cfg.warmup.games) == (1, 6)
    stats = train(cfg, tmp_path, log=lambda _: None)
    assert [s["warmup"] for s in stats] == [True, False]
    assert stats[0]["selfplay_games"] == 6 and stats[1]["selfplay_games"] == cfg.selfplay.games
    assert stats[0]["selfplay_network_share"] is None
    assert stats[1]["selfplay_network_share"] > 0
    assert stats[0]["step"] == cfg.train.steps and stats[1]["step"] == 2 * cfg.train.steps
    # Rust's settings of both: [warmup]'s simulations, the run's board.
    run = Run(cfg, tmp_path)
    assert run.warmup_settings["full_simulations"] == 24
    assert run.warmup_settings["board"] == run.selfplay_settings["board"] == 37
    assert run.selfplay_settings["full_simulations"] == cfg.selfplay.engine["full_simulations"]
    presets = zertz.search_presets()
    # Rollout self-play ran no network; the network's did.
    for i, rollout in [(0, True), (1, False)]:
        for c in range(cfg.selfplay.chunks):
            summary = json.loads(
                (tmp_path / "shards" / f"iter-{i:04d}" / f"c{c}" / "summary.json").read_text()
            )
            assert (summary["network_seconds"] is None) == rollout
            assert summary["search"] == presets["rollout" if rollout else "default"]
            if rollout:
                assert summary["games"] == 3


def test_run_folder(run_a: Path, cfg: TrainConfig) -> None:
    found = files(run_a)
    for name in [
        "config.toml",
        "checkpoint.pt",
        "metrics.jsonl",
        "models/iter-0000.safetensors",
        "models/iter-0001.safetensors",
        "models/iter-0002.safetensors",
        "models/best.safetensors",
    ]:
        assert name in found
    assert (run_a / "config.toml").read_text() == cfg.source
    for i in range(2):
        for c in range(cfg.selfplay.chunks):
            chunk = run_a / "shards" / f"iter-{i:04d}" / f"c{c}"
            assert list(chunk.glob("shard-*.npz")), chunk
            assert json.loads((chunk / "summary.json").read_text())["games"] == 1
    # No partial output (.NAME.partial-PID: a chunk folder, a checkpoint, a network) is left.
    assert not [name for name in found if any(map(partial_owner, Path(name).parts))]
    # The network after each iteration played the best before it and the baselines.
    matches = {p.name for p in (run_a / "matches").iterdir()}
    assert matches == {
        "iter-0001-previous.jsonl",
        "iter-0001-random.jsonl",
        "iter-0002-previous.jsonl",
        "iter-0002-random.jsonl",
    }
    games = (run_a / "matches" / "iter-0002-random.jsonl").read_text().splitlines()
    assert len(games) == cfg.evaluate.final_games


def test_metrics_and_checkpoint(run_a: Path, cfg: TrainConfig) -> None:
    rows = metrics(run_a)
    assert [r["iteration"] for r in rows] == [1, 2]
    assert [r["step"] for r in rows] == [cfg.train.steps, 2 * cfg.train.steps]
    assert [r["final"] for r in rows] == [False, True]
    for r in rows:
        assert r["selfplay_games"] == cfg.selfplay.games
        assert r["samples"] > 0 and np.isfinite(r["policy_loss"]) and np.isfinite(r["value_loss"])
        assert set(r["evaluation"]) == {"best", "random"}
    ck = checkpoint(run_a)
    assert ck["state"]["iteration"] == 2 and ck["state"]["step"] == 2 * cfg.train.steps
    assert ck["state"]["best"] == 2  # no gating: always the latest
    assert set(ck["state"]["ladder"]) == {0, 1, 2}
    assert ck["board"] == 37 and ck["marbles"] == ["standard"]
    # The network files carry their training step; best.safetensors is the last one.
    models = run_a / "models"
    steps = [read_metadata(models / f"iter-{i:04d}.safetensors")["step"] for i in range(3)]
    assert steps == [0, cfg.train.steps, 2 * cfg.train.steps]
    assert (models / "best.safetensors").read_bytes() == (
        models / "iter-0002.safetensors"
    ).read_bytes()


def test_one_iteration(run_b: Resumed, cfg: TrainConfig) -> None:
    """The state of a run stopped after its first iteration."""
    found = run_b.files_after_first
    for name in ["config.toml", "checkpoint.pt", "metrics.jsonl"]:
        assert name in found
    models = {name for name in found if name.startswith("models/")}
    assert models == {
        "models/iter-0000.safetensors",
        "models/iter-0001.safetensors",
        "models/best.safetensors",
    }
    for c in ("c0", "c1"):
        assert any(re.fullmatch(rf"shards/iter-0000/{c}/shard-.*\.npz", n) for n in found)
    assert not any(n.startswith("shards/iter-0001") for n in found)
    assert {n for n in found if n.startswith("matches/")} == {
        "matches/iter-0001-previous.jsonl",
        "matches/iter-0001-random.jsonl",
    }
    (row,) = run_b.metrics_after_first
    assert row["iteration"] == 1 and row["step"] == cfg.train.steps and not row["final"]


def test_a_finished_run_does_nothing(run_a: Path, cfg: TrainConfig) -> None:
    before = stamps(run_a)
    log: list[str] = []
    assert train(cfg, run_a, log=log.append) == []
    assert "all 2 iterations are done" in log[-1]
    # Not a file written again.
    assert stamps(run_a) == before


# ------------------------------------------------------------------------------------- resume


def test_resume_continues(run_b: Resumed, cfg: TrainConfig) -> None:
    resumed = f"resuming after iteration 1 (step {cfg.train.steps})"
    assert any(resumed in line for line in run_b.log)
    assert [s["iteration"] for s in run_b.stats] == [2]
    assert [r["iteration"] for r in metrics(run_b.folder)] == [1, 2]
    assert checkpoint(run_b.folder)["state"]["step"] == 2 * cfg.train.steps


def test_resume_keeps_finished_selfplay(run_b: Resumed) -> None:
    assert stamps(run_b.folder / "shards" / "iter-0000") == run_b.shards0_before


def test_resume_replays_an_unfinished_chunk(run_b: Resumed) -> None:
    chunks = run_b.folder / "shards" / "iter-0001"
    assert sorted(p.name for p in chunks.iterdir()) == ["c0", "c1"]
    assert stamps(chunks / "c0") == run_b.chunk0_before
    assert not (chunks / "c1" / "shard-00-99999.npz").exists()
    assert (chunks / "c1" / "summary.json").exists()
    assert any("self-play chunk 2/2" in line for line in run_b.log)
    assert not any("self-play chunk 1/2" in line for line in run_b.log)
    # Self-play with one thread is deterministic: the replayed chunk is the one that was lost.
    replayed = shard_arrays(chunks / "c1")
    assert replayed.keys() == run_b.chunk1_arrays.keys()
    for key, value in run_b.chunk1_arrays.items():
        np.testing.assert_array_equal(replayed[key], value, err_msg=key)


def test_resume_ends_where_an_uninterrupted_run_does(run_a: Path, run_b: Resumed) -> None:
    a, b = checkpoint(run_a), checkpoint(run_b.folder)
    assert a["state"] == b["state"]
    assert a["model"].keys() == b["model"].keys()
    for key, value in a["model"].items():
        torch.testing.assert_close(b["model"][key], value, rtol=0, atol=0, msg=key)
    for i in range(2):
        for c in ("c0", "c1"):
            chunk = f"iter-{i:04d}/{c}"
            want = shard_arrays(run_a / "shards" / chunk)
            got = shard_arrays(run_b.folder / "shards" / chunk)
            for key, value in want.items():
                np.testing.assert_array_equal(got[key], value, err_msg=f"{chunk} {key}")
    timing = {
        "seconds",
        "train_seconds",
        "selfplay_seconds",
        "selfplay_network_seconds",
        "selfplay_network_share",
    }

    def comparable(run: Path) -> list[dict[str, Any]]:
        rows = json.loads(json.dumps(metrics(run)).replace(str(run), "RUN"))
        return [{k: v for k, v in r.items() if k not in timing} for r in rows]

    rows_a, rows_b = comparable(run_a), comparable(run_b.folder)
    for ra, rb in zip(rows_a, rows_b, strict=True):
        for e in (*ra["evaluation"].values(), *rb["evaluation"].values()):
            e.pop("seconds", None)
            # The time each side took is not reproducible; its moves and work are.
            for side in ("a_effort", "b_effort"):
                e.get(side, {}).pop("seconds", None)
                e.get(side, {}).pop("cpu_seconds", None)
        assert ra == rb


# ------------------------------------------------------------------------------ reproducibility


def test_a_run_stops_within_its_minutes_and_another_folder_carries_it_on(
    program: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What every GPU slot does (scripts/gpu-check.sh train-gpu): a run that stops at its budget
    of minutes (the first iteration always runs), and a new folder that carries it on from its
    checkpoint alone, without the self-play it trained on."""
    cfg = parse_config(tiny_text(run__iterations="3"))
    first, second = tmp_path / "first", tmp_path / "second"
    log: list[str] = []
    # A budget no iteration fits in: the first runs, then the run stops.
    assert [s["iteration"] for s in train(cfg, first, log=log.append, minutes=1e-4)] == [1]
    assert any("stopping after iteration 1" in line for line in log), log
    config = tmp_path / "tiny.toml"
    config.write_text(cfg.source)
    argv = ["train", "--config", str(config), "--run", str(second)]
    carry = ["--from", str(first / "checkpoint.pt")]
    # The command line says it stopped at its budget, and that is not a failure.
    assert zertz.__main__.main([*argv, *carry, "--minutes", "1e-4"]) == 0
    out = capsys.readouterr().out
    assert "stopped after iteration 2 within 0.0001 minutes" in out, out
    state = checkpoint(second)["state"]
    assert (state["iteration"], state["carried"], state["best"]) == (2, 1, 2)
    assert state["step"] == 2 * cfg.train.steps
    # Iteration 1 was played in the first folder and stays there; the second has its own.
    assert not (second / "shards" / "iter-0000").exists()
    assert (second / "shards" / "iter-0001").is_dir()
    # It began with the first run's network.
    carried = weights(second / "models" / "iter-0001.safetensors")
    for key, value in weights(first / "models" / "iter-0001.safetensors").items():
        torch.testing.assert_close(carried[key], value, rtol=0, atol=0, msg=key)
    # Carrying on into it again is refused; the same command without --from resumes it (its
    # state, carried past the shards it lacks, is its own) to the end.
    with pytest.raises(ValueError, match="already holds a checkpoint"):
        train(cfg, second, carry_on_from=first / "checkpoint.pt")
    assert [s["iteration"] for s in train(cfg, second, log=lambda _: None)] == [3]
    assert checkpoint(second)["state"]["carried"] == 1
    # A checkpoint of another network: refused, and the new folder is left without it.
    other = parse_config(tiny_text(run__iterations="3", network__channels="8"))
    with pytest.raises(ValueError, match="not a usable checkpoint"):
        train(other, tmp_path / "other", carry_on_from=first / "checkpoint.pt")
    assert not (tmp_path / "other" / "checkpoint.pt").exists()
    with pytest.raises(ValueError, match="not a zertz training checkpoint"):
        train(cfg, tmp_path / "third", carry_on_from=config)
    with pytest.raises(ValueError, match="minutes above 0"):
        train(cfg, tmp_path / "fourth", minutes=0)


def test_a_fixed_seed_trains_the_same_network(
    run_a: Path, cfg: TrainConfig, tmp_path: Path
) -> None:
    """The same seed again, with the process's global generators left elsewhere (as in another
    process): the same shards, the same weights in every network file (the same checksum), and
    the same checkpoint byte for byte (the optimizer's state and the random states it saves with
    them)."""
    random.seed(27)
    np.random.seed(27)
    torch.manual_seed(27)
    again = tmp_path / "again"
    assert [s["iteration"] for s in train(cfg, again, log=lambda _: None)] == [1, 2]
    assert (again / "checkpoint.pt").read_bytes() == (run_a / "checkpoint.pt").read_bytes()
    models = sorted((run_a / "models").glob("*.safetensors"))
    assert len(models) == 4
    for model in models:
        want, got = weights(model), weights(again / "models" / model.name)
        assert got.keys() == want.keys()
        for key, value in want.items():
            torch.testing.assert_close(got[key], value, rtol=0, atol=0, msg=f"{model} {key}")
        checksum = read_metadata(model)["sha256"]
        assert read_metadata(again / "models" / model.name)["sha256"] == checksum
    shards = sorted(p for p in (run_a / "shards").rglob("*") if p.is_file())
    assert {str(p.relative_to(run_a)) for p in shards} == {
        name for name in files(again) if name.startswith("shards/")
    }
    for path in shards:
        if path.name != "summary.json":  # the engine's summary holds wall times
            assert (again / path.relative_to(run_a)).read_bytes() == path.read_bytes(), path
    # What the same network also takes: the same thread counts, in every metrics line.
    threads = [(r["torch_threads"], r["selfplay_workers"]) for r in metrics(again)]
    assert threads == [(r["torch_threads"], r["selfplay_workers"]) for r in metrics(run_a)]
    assert threads == [(torch.get_num_threads(), 1)] * 2


def test_the_final_network_may_be_the_mean_of_the_last_ones(run_a: Path, tmp_path: Path) -> None:
    """train.average = 2: the last iteration exports the mean of its network and the one
    before, the final evaluation plays it, and it becomes best.safetensors; the networks
    self-play used are the same as without averaging (run_a's, weight for weight)."""
    cfg = parse_config(tiny_text(train__average="2"))
    log: list[str] = []
    train(cfg, tmp_path, log=log.append)
    models = tmp_path / "models"
    average = models / "iter-0002-average.safetensors"
    assert any("iter-0002-average.safetensors, the mean of the last 2" in line for line in log)
    assert (models / "best.safetensors").read_bytes() == average.read_bytes()
    final = metrics(tmp_path)[-1]["evaluation"]
    assert {r["out"] for r in final.values()} <= {
        str(p) for p in (tmp_path / "matches").glob("iter-0002-*.jsonl")
    }
    first, last, mean = (
        weights(models / name)
        for name in ("iter-0001.safetensors", "iter-0002.safetensors", average.name)
    )
    for key, value in mean.items():
        if value.is_floating_point():
            torch.testing.assert_close(value, (first[key] + last[key]) / 2, msg=key)
    for name in ("iter-0001.safetensors", "iter-0002.safetensors"):
        want = weights(run_a / "models" / name)
        got = weights(models / name)
        for key, value in want.items():
            torch.testing.assert_close(got[key], value, rtol=0, atol=0, msg=f"{name} {key}")
    with pytest.raises(ValueError, match="only networks of one size"):
        small = ZertzNet(NetConfig.preset("small"), boards=[37])
        other = export(small, tmp_path / "small.safetensors")
        average_networks([models / "iter-0001.safetensors", other])


def test_a_run_begun_before_the_auxiliary_head_goes_on(
    run_a: Path, cfg: TrainConfig, tmp_path: Path
) -> None:
    """A checkpoint without the captures head (and its optimizer's moments) and shards of format
    1 (without final_captures, the mask under its old name), as an older zertz wrote them: the
    run resumes and trains on them, the head learning from the samples that have its target
    only."""
    folder = tmp_path / "old"
    shutil.copytree(run_a, folder)
    ck = checkpoint(folder)
    head = [k for k in ck["model"] if k.startswith(AUX_PREFIX)]
    assert head == ["captures.weight", "captures.bias"]
    for k in head:
        del ck["model"][k]
    group = ck["optimizer"]["param_groups"][0]
    for index in group["params"][-len(head) :]:
        ck["optimizer"]["state"].pop(index, None)
    group["params"] = group["params"][: -len(head)]
    torch.save(ck, folder / "checkpoint.pt")
    shards = sorted((folder / "shards").rglob("shard-*.npz"))
    for path in shards[:1]:
        with np.load(path) as shard:
            arrays = {k: shard[k] for k in shard.files if k != "final_captures"}
        arrays["legal_mask"] = arrays.pop("legal_action_mask")
        arrays["format_version"] = np.array([1], dtype=np.int32)
        with path.open("wb") as f:
            np.savez(f, **arrays)
    old = zertz.load_shards(shards[:1], zertz.action_space_size(37))
    assert np.isnan(old["final_captures"]).all()
    assert old["legal_action_mask"].any() and "legal_mask" not in old
    with pytest.warns(DeprecationWarning, match="'legal_mask' is now 'legal_action_mask'"):
        assert old["legal_mask"] is old["legal_action_mask"]

    run = Run(cfg, folder)
    run.start()
    fresh = ZertzNet(cfg.network, boards=[37]).state_dict()
    assert run.net.state_dict()["captures.weight"].shape == fresh["captures.weight"].shape
    assert len(run.opt.param_groups[0]["params"]) == len(fresh_params := list(run.net.parameters()))
    head_before = run.net.captures.weight.detach().clone()
    stats = run.fit(shards)
    assert math.isfinite(stats["captures_loss"]) and stats["captures_loss"] > 0
    assert not torch.equal(run.net.captures.weight, head_before)
    assert all(torch.isfinite(p).all() for p in fresh_params)
    # Only the samples of format 1 have no target: with those alone the head has no loss.
    only_old = run.fit(shards[:1])
    assert only_old["captures_loss"] == 0.0
    assert export_checkpoint(folder / "checkpoint.pt", tmp_path / "old.safetensors").exists()
    with pytest.raises(RuntimeError, match="missing"):
        ZertzNet(cfg.network, boards=[37]).load_weights(
            {k: v for k, v in fresh.items() if k != "stem.weight"}
        )


def as_torchscript(network: Path) -> Path:
    """The network file ``network`` rewritten as an older zertz exported it: TorchScript, under
    the ``.pt`` name beside it (the network file removed); the TorchScript file."""
    net = load_network(network)
    meta = read_metadata(network)
    for key in ("sha256", "architecture"):
        del meta[key]
    meta["format_version"] = 1
    net.metadata_json = json.dumps(meta)
    old = network.with_suffix(".pt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(net), str(old))
    network.unlink()
    return old


def test_a_run_of_an_older_zertz_converts_its_torchscript_networks(
    run_a: Path, tmp_path: Path
) -> None:
    """A run folder whose networks an older zertz exported as TorchScript (``models/*.pt``)
    resumes: its networks are converted into network files of the same weights (the old files
    stay), and the next iteration plays and is evaluated with them. A file there that does not
    convert stops the run in one line naming it."""
    folder = Path(shutil.copytree(run_a, tmp_path / "old"))
    names = sorted(p.name for p in (folder / "models").iterdir())
    assert names == [f"{n}.safetensors" for n in ("best", "iter-0000", "iter-0001", "iter-0002")]
    olds = [as_torchscript(folder / "models" / name) for name in names]
    layout = RunLayout(folder)
    assert layout.legacy_networks() == olds
    log: list[str] = []
    stats = train(parse_config(tiny_text(run__iterations="3")), folder, log=log.append)
    assert [s["iteration"] for s in stats] == [3]
    assert any("converted 4 network(s) of an older zertz" in line for line in log), log
    assert layout.legacy_networks() == []
    assert all(old.exists() for old in olds)
    # The iterations' networks are those the run trained; the best is now iteration 3's.
    for name in names[1:]:
        want, got = weights(run_a / "models" / name), weights(folder / "models" / name)
        for key, value in want.items():
            torch.testing.assert_close(got[key], value, rtol=0, atol=0, msg=f"{name} {key}")
    assert layout.best.read_bytes() == layout.model(3).read_bytes()
    assert metrics(folder)[-1]["evaluation"]["best"]["a"].startswith(f"nn:{layout.model(3)}")
    # A garbage network among them: refused in one line that names it; nothing is trained.
    broken = Path(shutil.copytree(run_a, tmp_path / "broken"))
    (broken / "models" / "best.safetensors").unlink()
    (broken / "models" / "best.pt").write_bytes(b"garbage")
    with pytest.raises(ValueError, match=r"best\.pt .*put back the run's own file") as e:
        Run(parse_config(tiny_text(run__iterations="3")), broken).start()
    assert "\n" not in str(e.value)


def test_a_run_that_goes_on_with_other_torch_threads_says_so(
    cfg: TrainConfig, tmp_path: Path
) -> None:
    run = Run(cfg, tmp_path)
    assert threads_note(run) is None  # nothing trained yet
    now = torch.get_num_threads()
    lines = [{"iteration": 0, "torch_threads": now + 2}, {"iteration": 1, "torch_threads": now}]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert threads_note(run) is None
    lines.append({"iteration": 2, "torch_threads": now + 1})
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    note = threads_note(run)
    assert note is not None
    assert f"trained with {now + 1} torch threads and goes on with {now}" in note


def test_another_config_is_refused(run_a: Path, cfg: TrainConfig) -> None:
    before = (run_a / "config.toml").read_text()
    other = parse_config(tiny_text(run__seed="1"))
    with pytest.raises(ValueError, match="other settings"):
        train(other, run_a, log=lambda _: None)
    with pytest.raises(ValueError, match="other settings"):
        Run(parse_config(tiny_text(train__steps="5")), run_a)
    assert (run_a / "config.toml").read_text() == before
    # The same settings written differently are the same run.
    same = parse_config("# the same run\n" + cfg.source.replace(" = ", "="))
    assert same == cfg
    assert train(same, run_a, log=lambda _: None) == []


# --------------------------------------------------------------------------- export and plots


def test_export_checkpoint(run_a: Path, tmp_path: Path, cfg: TrainConfig) -> None:
    out = export_checkpoint(run_a / "checkpoint.pt", tmp_path / "exported.safetensors")
    meta = read_metadata(out)
    assert meta["step"] == checkpoint(run_a)["state"]["step"] == 2 * cfg.train.steps
    assert meta["boards"] == [37] and meta["marbles"] == ["standard"]
    assert meta["network"]["channels"] == cfg.network.channels
    # The same weights as the network the run exported after its last iteration.
    game = zertz.Game()
    game.play(int(game.legal_action_indices()[5]))
    planes, globals_ = (torch.from_numpy(x)[None] for x in game.encode())
    assert meta["sha256"] == read_metadata(run_a / "models" / "iter-0002.safetensors")["sha256"]
    with torch.no_grad():
        want = load_network(run_a / "models" / "iter-0002.safetensors")(planes, globals_)
        got = load_network(out)(planes, globals_)
    for w, g in zip(want, got, strict=True):
        torch.testing.assert_close(g, w, rtol=0, atol=1e-6)


def test_the_networks_of_a_blitz_run_play_blitz(tmp_path: Path) -> None:
    """A run.blitz run's network, checkpoint and exported networks say they play the blitz
    marbles; a checkpoint written before the marble sets were saved is of the run's own (its
    config beside it says which; without it, the standard ones, as the engine reads an older
    export), and one of another set is refused."""
    cfg = parse_config(tiny_text(run__blitz="true"))
    run = Run(cfg, tmp_path)
    assert run.net.marbles == ["blitz"]
    run.start()
    run.save()
    for name in ("iter-0000.safetensors", "best.safetensors"):
        assert read_metadata(tmp_path / "models" / name)["marbles"] == ["blitz"]
    ck = checkpoint(tmp_path)
    assert ck["marbles"] == ["blitz"]
    out = export_checkpoint(tmp_path / "checkpoint.pt", tmp_path / "exported.safetensors")
    assert read_metadata(out)["marbles"] == ["blitz"]
    del ck["marbles"]
    torch.save(ck, tmp_path / "checkpoint.pt")
    del run
    gc.collect()  # its run folder's lock goes with it
    again = Run(cfg, tmp_path)
    again.start()
    assert again.net.marbles == ["blitz"]
    del again
    gc.collect()
    out = export_checkpoint(tmp_path / "checkpoint.pt", tmp_path / "exported.safetensors")
    assert read_metadata(out)["marbles"] == ["blitz"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(tmp_path / "checkpoint.pt", elsewhere / "checkpoint.pt")
    out = export_checkpoint(elsewhere / "checkpoint.pt", tmp_path / "exported.safetensors")
    assert read_metadata(out)["marbles"] == ["standard"]
    ck["marbles"] = ["standard"]
    torch.save(ck, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=r"not a usable checkpoint.*marble sets \['standard'\]"):
        Run(cfg, tmp_path).start()


def test_export_checkpoint_refuses_other_files(tmp_path: Path) -> None:
    torch.save({"weights": torch.zeros(3)}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a zertz training checkpoint"):
        export_checkpoint(tmp_path / "other.pt", tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


def test_export_writes_network_files_and_refuses_pt_names(
    run_a: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``python -m zertz export`` and ``random-model`` write network files under any name but
    ``.pt`` (a pickle's or TorchScript's name), which is refused in one line, nothing written;
    ``--provenance`` goes into a network file's metadata, and is refused for a package."""
    main = zertz.__main__.main
    checkpoint_file = str(run_a / "checkpoint.pt")
    out = tmp_path / "m.safetensors"
    provenance = tmp_path / "provenance.json"
    provenance.write_text('{"commit": "abc", "figures": {"elo": 12.5}}')
    assert main(["export", checkpoint_file, str(out), "--provenance", str(provenance)]) == 0
    assert capsys.readouterr().out.splitlines() == [str(out)]
    assert read_metadata(out)["provenance"] == {"commit": "abc", "figures": {"elo": 12.5}}
    package = tmp_path / "m.pt2"
    assert main(["export", checkpoint_file, str(package), "--provenance", str(provenance)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: provenance is written into network files only, not .pt2 packages"
    ]
    assert not package.exists()
    assert (
        read_metadata(out)["sha256"]
        == read_metadata(run_a / "models" / "iter-0002.safetensors")["sha256"]
    )
    for command in (["export", checkpoint_file], ["random-model"]):
        assert main([*command, str(tmp_path / "m.pt")]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line == (
            f"error: {tmp_path}/m.pt: a network file is named .safetensors, not .pt (the name of "
            f"pickles and TorchScript programs): write {tmp_path}/m.safetensors, or "
            f"{tmp_path}/m.pt2 for an AOTInductor package"
        )
    assert not (tmp_path / "m.pt").exists()
    assert not list(tmp_path.glob(".m.pt.partial-*"))


def test_convert_network_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m zertz convert-network`` turns the built-in network as an older zertz shipped it
    (TorchScript) into a network file of the same weights as the built-in one, which the engine
    plays; it names the new file and its checksum in one line. What is not such a network, and a
    ``.pt`` name to write, are refused in one line."""
    main = zertz.__main__.main
    old = REPO / "model" / "tests" / "data" / "builtin-v1.pt"
    new = tmp_path / "builtin.safetensors"
    assert main(["convert-network", str(old), str(new)]) == 0
    meta = read_metadata(new)
    assert capsys.readouterr().out.splitlines() == [f"{new} (sha256 {meta['sha256']})"]
    assert meta["architecture"] == "ZertzNet" and meta["boards"] == [37]
    want, got = weights(Path("builtin")), weights(new)
    assert got.keys() == want.keys()
    for key, value in want.items():
        torch.testing.assert_close(got[key], value, rtol=0, atol=0, msg=key)
    r = zertz.match(f"nn:{new}:8", "random", games=2, seed=1)
    assert r["wins"] + r["draws"] + r["losses"] == 2
    for src, dst, words in [
        (new, tmp_path / "again.safetensors", "is not a network exported as TorchScript"),
        (old, tmp_path / "again.pt", "a network file is named .safetensors, not .pt"),
        (tmp_path / "missing.pt", tmp_path / "again.safetensors", "missing.pt"),
    ]:
        assert main(["convert-network", str(src), str(dst)]) == 2
        (line,) = capsys.readouterr().err.splitlines()
        assert line.startswith("error: ") and words in line, line
        assert not dst.exists()


def test_plot_and_final_table(
    run_a: Path, cfg: TrainConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MPLBACKEND", "Agg")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = zertz.plot(run_a)
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3
    (loss,) = [ax for ax in fig.axes if ax.get_title() == "training loss"]
    assert [np.asarray(line.get_xdata()).tolist() for line in loss.get_lines()] == [[1, 2], [1, 2]]
    import matplotlib.pyplot as plt

    plt.close(fig)

    table = final_table(run_a)
    assert f"network after iteration 2 (step {2 * cfg.train.steps})" in table
    rows = {line.split()[0] for line in table.splitlines()[2:]}
    assert rows == {"previous", "random"}


def test_final_table_before_any_evaluation(tmp_path: Path) -> None:
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"iteration": 1, "evaluation": {}}) + "\n")
    assert final_table(tmp_path) == "no evaluation yet"


def test_the_layout_keeps_the_names_of_every_run_folder(tmp_path: Path) -> None:
    """Existing runs resume only if the paths of a run folder keep their names (but the
    networks', which runs of an older zertz hold as TorchScript, ``.pt``, and convert when they
    resume)."""
    layout = RunLayout(tmp_path)
    paths = {
        layout.config: "config.toml",
        layout.lock: ".lock",
        layout.checkpoint: "checkpoint.pt",
        layout.metrics: "metrics.jsonl",
        layout.tensorboard: "tb",
        layout.curves: "curves.png",
        layout.model(3): "models/iter-0003.safetensors",
        layout.average(3): "models/iter-0003-average.safetensors",
        layout.best: "models/best.safetensors",
        layout.chunks(3): "shards/iter-0003",
        layout.chunk(3, local_chunk_name(1)): "shards/iter-0003/c1",
        layout.chunk(3, chunk_name(2, 17)): "shards/iter-0003/c-a002-000017",
        layout.match_games(3, "previous"): "matches/iter-0003-previous.jsonl",
        layout.partial_match_games(3, "previous"): (
            f"matches/.iter-0003-previous.jsonl.partial-{os.getpid()}"
        ),
    }
    assert {str(p.relative_to(tmp_path)): name for p, name in paths.items()} == {
        name: name for name in paths.values()
    }
    assert [str(p.relative_to(tmp_path)) for p in layout.folders] == ["shards", "models", "matches"]


def test_the_layout_finds_a_run_from_its_files(tmp_path: Path) -> None:
    """What the tools read back from a path, by the layout: the run of a checkpoint, of a match
    file its metrics name (the folder it was trained in, perhaps moved since), its networks, and
    the records of the chunks the distributed learner filed, by name."""
    layout = RunLayout(tmp_path)
    assert RunLayout.of_checkpoint(layout.checkpoint) == layout
    assert RunLayout.of_match_games(layout.match_games(2, "random")) == layout
    assert RunLayout.of_match_games(Path("/moved/run/matches/iter-0002-random.jsonl")) == RunLayout(
        Path("/moved/run")
    )
    assert RunLayout.of_match_games(layout.metrics) is None
    networks = [layout.model(1), layout.average(2), layout.best]
    others = [layout.checkpoint, layout.config, layout.chunk(0, "c0") / "shard-00-00000.npz"]
    assert [layout.is_network(p) for p in networks + others] == [True] * 3 + [False] * 3
    # The TorchScript networks of an older zertz are not the run's networks (they convert).
    assert not layout.is_network(layout.models / "best.pt")
    assert layout.chunk_records() == {}
    names = [chunk_name(2, 1), chunk_name(1, 3), chunk_name(1, 4)]
    for iteration, name in enumerate(names):
        layout.chunk(iteration, name).mkdir(parents=True)
        (layout.chunk(iteration, name) / "chunk.json").write_text("{}")
    layout.chunk(2, local_chunk_name(0)).mkdir()
    (layout.chunk(2, local_chunk_name(0)) / "chunk.json").write_text("{}")
    records = layout.chunk_records()
    assert list(records) == names
    assert records == {name: layout.chunk(i, name) / "chunk.json" for i, name in enumerate(names)}


def fake_summary(tmp: Path, games: int = 1) -> ChunkSummary:
    """A chunk's files in ``tmp`` (made), and its summary as the engine gives it."""
    tmp.mkdir()
    (tmp / "shard-00-00000.npz").write_bytes(b"positions")
    (tmp / "games-00.jsonl").write_text("{}\n" * games)
    engine = {
        "games": games,
        "samples": 7,
        "shards": [str(tmp / "shard-00-00000.npz")],
        "workers": 1,
        "seconds": 0.5,
        "network_seconds": None,
        "network_share": None,
    }
    return ChunkSummary.from_json(engine, "the test's engine").by_name()


def test_a_chunk_is_written_once_and_the_leftovers_go(tmp_path: Path) -> None:
    """The chunk writer of the loop and the learner: the leftovers of interrupted attempts of
    the chunk go (a killed process's, this process's, those of the versions before
    ``.NAME.partial-PID``), not those of other chunks nor of a process that still runs, the
    folder appears whole, and a chunk written twice is written once."""
    folder = RunLayout(tmp_path).chunks(1)
    folder.mkdir(parents=True)
    gone = 4294967295  # above any process id
    leftovers = [
        f".c1.partial-{gone}",  # a killed process's
        f".c1.partial-{os.getpid()}",  # an attempt of this process that failed
        ".c1.tmp",  # the versions before Rust's name
        ".c1.99999.tmp",
        ".c1.partial-1",  # a process that runs (init, seen in /proc: Rust asks Linux)
        f".c10.partial-{gone}",  # another chunk's
    ]
    for leftover in leftovers:
        (folder / leftover).mkdir()
        (folder / leftover / "shard-00-99999.npz").write_bytes(b"cut short")
    played: list[Path] = []

    def fill(tmp: Path) -> ChunkSummary:
        played.append(tmp)
        return fake_summary(tmp)

    record = ChunkRecord(
        actor=0,
        seq=1,
        version=0,
        warmup=True,
        pid=os.getpid(),
        iteration=1,
        staleness=0,
        games=1,
        samples=7,
    )
    summary, written = write_chunk(folder, "c1", fill, record)
    assert written and (summary.games, summary.samples, summary.workers) == (1, 7, 1)
    assert played == [folder / f".c1.partial-{os.getpid()}"]
    assert sorted(p.name for p in folder.iterdir()) == [
        ".c1.partial-1",
        f".c10.partial-{gone}",
        "c1",
    ]
    assert not (folder / "c1" / "shard-00-99999.npz").exists()
    chunk = folder / "c1"
    assert sorted(p.name for p in chunk.iterdir()) == [
        "chunk.json",
        "games-00.jsonl",
        "shard-00-00000.npz",
        "summary.json",
    ]
    # summary.json: the engine's dict, with the shards by name; chunk.json: the record.
    assert json.loads((chunk / "summary.json").read_text()) == {
        "games": 1,
        "samples": 7,
        "shards": ["shard-00-00000.npz"],
        "workers": 1,
        "seconds": 0.5,
        "network_seconds": None,
        "network_share": None,
    }
    assert ChunkRecord.read(chunk / "chunk.json") == record
    before = stamps(folder)

    again, written = write_chunk(folder, "c1", fill, record)
    assert not written and again == summary and len(played) == 1
    assert stamps(folder) == before

    # Without a record (the one-machine loop), no chunk.json.
    write_chunk(folder, "c2", fill)
    assert not (folder / "c2" / "chunk.json").exists()
    assert ChunkSummary.read(folder / "c2" / "summary.json") == summary


def test_records_with_missing_keys_are_refused(tmp_path: Path) -> None:
    record = ChunkRecord(
        actor=2,
        seq=17,
        version=40,
        warmup=False,
        pid=123,
        iteration=3,
        staleness=8,
        games=2,
        samples=150,
    )
    path = tmp_path / "chunk.json"
    path.write_text(json.dumps(record.to_json()))
    # The bytes the learner has always written.
    assert path.read_text() == (
        '{"actor": 2, "seq": 17, "version": 40, "warmup": false, "pid": 123, "iteration": 3, '
        '"staleness": 8, "games": 2, "samples": 150}'
    )
    assert ChunkRecord.read(path) == record
    path.write_text(json.dumps({k: v for k, v in record.to_json().items() if k != "staleness"}))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))} .*it has no staleness$"):
        ChunkRecord.read(path)
    path.write_text(json.dumps({**record.to_json(), "games": "2"}))
    with pytest.raises(ValueError, match=r"chunk\.json .*games = '2' is not an integer"):
        ChunkRecord.read(path)

    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps({"games": 1, "samples": 7}))
    with pytest.raises(ValueError, match=rf"^{re.escape(str(summary))} .*it has no seconds$"):
        ChunkSummary.read(summary)
    summary.write_text("{cut short")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(summary))} is not JSON"):
        ChunkSummary.read(summary)
    # Summaries written before the engine counted its workers read as 0 workers.
    summary.write_text(json.dumps({"games": 1, "samples": 7, "seconds": 0.5}))
    assert ChunkSummary.read(summary).workers == 0

    status = LearnerStatus(
        iteration=1,
        iterations=3,
        step=4,
        rollout=False,
        model=b"network",
        done=False,
        ready=True,
        last=False,
        pretrain=False,
        next_seq={0: 2},
        logs=["a line"],
    )
    assert LearnerStatus.from_dict(status.to_dict(), "the reply") == status
    # Records cross Ray pickled.
    assert pickle.loads(pickle.dumps(status)) == status
    without = {k: v for k, v in status.to_dict().items() if k != "next_seq"}
    with pytest.raises(ValueError, match=r"^the reply is not a status .*: it has no next_seq$"):
        LearnerStatus.from_dict(without, "the reply")


def test_the_learner_files_a_chunk_once(cfg: TrainConfig, tmp_path: Path) -> None:
    """A chunk the learner receives twice (an actor's chunk delivered again after a restart) is
    filed once; a learner that resumes the folder reads its record back."""
    learner = Learner(cfg.source, str(tmp_path))
    summary = fake_summary(tmp_path / "played")
    files = {p.name: p.read_bytes() for p in sorted((tmp_path / "played").iterdir())}
    played = PlayedChunk(
        actor=1, seq=3, version=0, warmup=True, summary=summary, started=0.0, pid=os.getpid()
    )
    assert learner._file(played, files)
    assert not learner._file(played, files)
    folder = RunLayout(tmp_path).chunks(0)
    assert [p.name for p in folder.iterdir()] == ["c-a001-000003"]
    record = learner.chunks["c-a001-000003"]
    assert (record.iteration, record.games, record.samples) == (0, 1, 7)
    assert learner.status().next_seq == {1: 4}
    with pytest.raises(ValueError, match="not a plain name"):
        learner._file(dataclasses.replace(played, seq=4), {"../x": b""})
    del learner
    gc.collect()  # its run folder's lock goes with it
    again = Learner(cfg.source, str(tmp_path))
    assert again.chunks == {"c-a001-000003": record}
    assert not again._file(played, files)


def test_the_eta_of_a_run_counts_its_iterations_not_its_pretraining(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line that starts iteration 2 gives the time of iteration 1, not of the pretraining
    before it plus iteration 1 (a fake pretraining of a day here, on a clock that it moves)."""
    import zertz.training.loop as loop
    from zertz.training.progress import RunProgress

    offset = [0.0]

    def clock() -> float:
        return time.monotonic() + offset[0]

    def pretrain(run: Run, log: Callable[[str], None]) -> dict[str, Any]:
        offset[0] += 86_400.0
        run.state.pretrained = True
        return {"iteration": 0, "pretrain": True}

    monkeypatch.setattr(loop, "RunProgress", functools.partial(RunProgress, clock=clock))
    monkeypatch.setattr(loop, "pretrain", pretrain)
    cfg = parse_config(
        tiny_text() + '\n[pretrain]\ndataset = "unused"\nsteps = 1\nbenchmark_games = 0\n'
    )
    lines: list[str] = []
    stats = train(cfg, tmp_path, log=lines.append, progress=False)
    assert [s["iteration"] for s in stats] == [0, 1, 2]
    (line,) = [x for x in lines if x.startswith("iteration 2/2")]
    m = re.fullmatch(r"iteration 2/2 \(ETA (\S+), (\S+) an iteration\)", line)
    assert m is not None, line
    seconds = sum(int(x) * 60**i for i, x in enumerate(reversed(m[2].split(":"))))
    assert seconds < 3600, line


# ------------------------------------------------------------------- the network's size, bounded

#: Every size of ``[network]`` and its declared range: ``(field, range)``.
NETWORK_SIZES = [(f.name, f.metadata["range"]) for f in dataclasses.fields(NetConfig)]


def test_every_network_size_declares_its_range() -> None:
    """A size added to NetConfig without a range fails here."""
    assert [name for name, _ in NETWORK_SIZES] == [
        "channels",
        "blocks",
        "policy_rank",
        "value_channels",
        "value_hidden",
    ]
    for _, values in NETWORK_SIZES:
        assert isinstance(values, Range) and values.high is not None


@pytest.mark.parametrize(("key", "values"), NETWORK_SIZES, ids=[k for k, _ in NETWORK_SIZES])
def test_every_network_size_holds_at_its_ends(key: str, values: Range) -> None:
    """A size at an end of its range is taken (with the others' defaults, within the parameter
    bound), one just past it is refused with Rust's words for the range, before any
    weight is allocated."""
    assert values.contains(getattr(NetConfig(), key))
    for value, taken in probes(values, integer=True):
        text = f"[network]\n{key} = {value!r}\n"
        if taken:
            assert getattr(parse_config(text).network, key) == value
        else:
            message = f"network.{key} {values.reason('int')}, not {value!r}"
            with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
                parse_config(text)


def test_a_network_of_too_many_parameters_is_refused() -> None:
    """``blocks = 100000`` allocated gigabytes and ``channels = 100000`` failed in libtorch's
    allocator naming no key: both are refused by their ranges, and sizes within their ranges
    that make too many parameters together by the count, which the error states."""
    most = dict(NETWORK_SIZES)
    for key in ("blocks", "channels"):
        words = f"network.{key} {most[key].reason('int')}, not 100000"
        with pytest.raises(ValueError, match=f"^{re.escape(words)}$"):
            parse_config(f"[network]\n{key} = 100000\n")
    big = "[network]\nchannels = 1024\nblocks = 100\n"
    count = parameter_count(**{**dataclasses.asdict(NetConfig()), "channels": 1024, "blocks": 100})
    words = (
        f"network: 100 blocks of 1024 channels (policy_rank 8, value_channels 16, value_hidden "
        f"64) make {count:,} parameters, more than the {MAX_PARAMETERS:,} a "
        "network may have"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(words)}$"):
        parse_config(big)
    # The same bound wherever a network's size is read (a checkpoint's, an export's).
    with pytest.raises(ValueError, match="more than the"):
        NetConfig(channels=1024, blocks=100)
    # The presets are within it, and the largest sizes of KataGo's and AlphaZero's kind too.
    for name in NetConfig.PRESETS:
        assert NetConfig.preset(name).parameters() <= MAX_PARAMETERS
    assert parse_config("[network]\nchannels = 256\nblocks = 40\n").network.blocks == 40


@pytest.mark.parametrize(
    "sizes",
    [
        {},
        {"channels": 8, "blocks": 1, "policy_rank": 2, "value_channels": 4, "value_hidden": 8},
        {"channels": 1, "blocks": 1, "policy_rank": 1, "value_channels": 1, "value_hidden": 1},
        {"channels": 24, "blocks": 2, "policy_rank": 5, "value_channels": 7, "value_hidden": 9},
    ],
)
@pytest.mark.parametrize("board", [37, 61])
def test_the_parameter_count_is_the_networks(sizes: dict[str, int], board: int) -> None:
    """The bound's count (computed without building the network) is what torch counts."""
    config = NetConfig(**sizes)
    net = ZertzNet(config, boards=[board])
    assert config.parameters() == sum(p.numel() for p in net.parameters())


# ------------------------------------------------------------------ cmd: opponents, started early


def test_a_cmd_opponent_is_asked_its_name_when_the_run_takes_the_config(tmp_path: Path) -> None:
    """A program that exists but does not answer ``name`` passed the config's check, trained an
    iteration, and failed at the first evaluation: it is started and asked when the run folder
    takes the config, and the run fails before training, in one line naming the opponent."""
    from zertz.training.config import EvalSection, check_opponents

    check_opponents(EvalSection(opponents=["random", ANSWERS_NAME]))
    for section in (
        EvalSection(opponents=[ENDS_AT_ONCE]),
        EvalSection(final_opponents=["random", ENDS_AT_ONCE]),
    ):
        with pytest.raises(ValueError) as caught:
            check_opponents(section)
        said = str(caught.value)
        assert said.startswith(f"evaluate: opponent {ENDS_AT_ONCE!r}: "), said
        assert "ended before it answered 'name'" in said and "\n" not in said
    opponents = json.dumps(["random", ENDS_AT_ONCE])
    with pytest.raises(ValueError, match="ended before it answered 'name'"):
        train(parse_config(tiny_text(evaluate__opponents=opponents)), tmp_path / "run")
    assert not (tmp_path / "run" / "config.toml").exists(), "nothing was trained"
