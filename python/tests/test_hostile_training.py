"""Hostile input to the training loop (issue 11): configs with NaN, infinite or out-of-range
values, a training run that diverges, checkpoints that are not checkpoints or that would run code
when unpickled. None may crash with a traceback, hang, run code, or leave a run folder that
refuses a corrected config. And (issue 25) run folders as a kill or damage leaves them: a metrics
line without its checkpoint, a torn last line, checkpoints that claim impossible states.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch
from test_training import tiny_text

import zertz
import zertz.training
from zertz.exported import load_network, read_metadata
from zertz.nn import NetConfig, NonFiniteError, ZertzNet, non_finite
from zertz.training import (
    EvalSection,
    Run,
    RunSection,
    SelfPlaySection,
    TrainSection,
    WarmupSection,
    export_checkpoint,
    load_config,
    parse_config,
    train,
)
from zertz.training.config import check_opponents
from zertz.training.distributed import Learner
from zertz.training.metrics import Metrics

from conftest import ANSWERS_NAME

REPO = Path(__file__).resolve().parents[2]
TINY = NetConfig(channels=8, blocks=1, policy_rank=2, value_channels=4, value_hidden=8)


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``python -m zertz ARGS`` in a fresh process."""
    return subprocess.run(
        [sys.executable, "-m", "zertz", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO / "python",
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *words: str) -> str:
    """A failure with a one-line ``error: ...`` message (no traceback) containing ``words``."""
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def fake_checkpoint(**changes: Any) -> dict[str, Any]:
    """A checkpoint as a run writes it (untrained weights), with entries replaced."""
    torch.manual_seed(0)
    net = ZertzNet(TINY, boards=[37])
    ck: dict[str, Any] = {
        "model": net.state_dict(),
        "optimizer": {},
        "state": {"iteration": 1, "step": 4, "ladder": {0: 0.0}, "best": 0},
        "rng": {},
        "network": dataclasses.asdict(TINY),
        "board": 37,
    }
    return {**ck, **changes}


class Payload:
    """Unpickling it runs a shell command (creates a marker file)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch '{self.marker}'",))


# -------------------------------------------------------------------------------------- config

SECTIONS = {
    "run": RunSection,
    "selfplay": SelfPlaySection,
    "warmup": WarmupSection,
    "train": TrainSection,
    "evaluate": EvalSection,
}
FLOAT_KEYS = [
    f"{name}.{f.name}"
    for name, cls in SECTIONS.items()
    for f in dataclasses.fields(cls)
    if str(f.type) == "float"
]


def test_the_float_keys() -> None:
    assert FLOAT_KEYS == [
        "train.learning_rate",
        "train.final_learning_rate",
        "train.weight_decay",
        "train.value_weight",
        "train.captures_weight",
        "train.q_weight",
        "evaluate.gating_score",
    ]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "+inf", "-nan"])
@pytest.mark.parametrize("key", FLOAT_KEYS)
def test_float_keys_refuse_nan_and_infinity(key: str, value: str) -> None:
    section, name = key.split(".")
    with pytest.raises(ValueError, match=rf"^{key} must be a finite number"):
        parse_config(f"[{section}]\n{name} = {value}\n")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[run]\nseed = 1180591620717411303424\n", "run.seed"),  # 2**70
        ("[run]\nseed = 9223372036854775808\n", "run.seed"),  # 2**63
        ("[run]\nseed = -1\n", "run.seed"),
        ("[run]\niterations = 1180591620717411303424\n", "run.iterations"),
        ("[run]\ntorch_threads = 100000\n", "run.torch_threads"),
        ('[run]\ndevice = "tpu"\n', "run.device"),
        ('[run]\ndevice = "cuda:x"\n', "run.device"),
        ("[train]\nsteps = 1180591620717411303424\n", "train.steps"),
        ("[train]\nlearning_rate = 1e400\n", "train.learning_rate"),  # inf in TOML's eyes
        ("[selfplay]\ngames = 4294967296\nchunks = 1\n", "selfplay.games"),
        ("[evaluate]\nopening_actions = 4294967296\n", "evaluate.opening_actions"),
        ("[evaluate]\nsimulations = 4294967296\n", "evaluate.simulations"),
        # Over the player grammar's cap (2**20), which Rust checks when the config is read,
        # not at the first evaluation, after a whole iteration.
        ("[evaluate]\nsimulations = 2000000\n", "evaluate.simulations"),
        ("[evaluate]\nfinal_simulations = 1048577\n", "evaluate.final_simulations"),
    ],
)
def test_out_of_range_values(text: str, key: str) -> None:
    with pytest.raises(ValueError, match=re.escape(key)):
        parse_config(text)


def test_the_largest_seed_is_taken() -> None:
    assert parse_config(f"[run]\nseed = {2**63 - 1}\n").run.seed == 2**63 - 1


def test_a_refused_seed_leaves_the_folder_free(program: Path, tmp_path: Path) -> None:
    """``seed = 2**70`` used to be written into RUN/config.toml before torch refused it, and the
    folder then refused every corrected config."""
    bad = tmp_path / "bad.toml"
    bad.write_text(tiny_text(run__seed=str(2**70)))
    folder = tmp_path / "run"
    with pytest.raises(
        ValueError, match=r"bad\.toml: run\.seed is out of range: 1180591620717411303424"
    ):
        train(bad, folder, log=lambda _: None)
    assert not (folder / "config.toml").exists()
    proc = cli("train", "--config", bad, "--run", folder)
    assert_one_line_error(proc, "run.seed")
    assert not (folder / "config.toml").exists()
    # The corrected config takes the folder.
    good = parse_config(tiny_text(run__seed="7"))
    run = zertz.training.Run(good, folder)
    assert (folder / "config.toml").read_text() == good.source
    del run


def test_a_failure_after_the_checks_leaves_no_config(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """RUN/config.toml is written after everything else that can fail (here building the
    network, as a huge [network] would fail)."""

    def broken(config: NetConfig, boards: list[int], marbles: list[str]) -> ZertzNet:
        raise RuntimeError("cannot allocate memory")

    cfg = parse_config(tiny_text())
    with monkeypatch.context() as m:
        m.setattr(zertz.training.loop, "ZertzNet", broken)
        with pytest.raises(RuntimeError, match="cannot allocate"):
            zertz.training.Run(cfg, tmp_path)
    assert not (tmp_path / "config.toml").exists()
    other = parse_config(tiny_text(train__steps="3"))
    run = zertz.training.Run(other, tmp_path)
    assert (tmp_path / "config.toml").read_text() == other.source
    del run


@pytest.mark.parametrize("name", ["cuda:63", "cuda:0,cuda:63"])
def test_a_missing_cuda_device_is_refused_before_the_config(tmp_path: Path, name: str) -> None:
    # The engine's grammar, lists of GPUs included, is the config's: it parses here, and the
    # machine is asked only when the run starts.
    cfg = parse_config(tiny_text(run__device=f'"{name}"'))
    with pytest.raises(ValueError, match=r"cuda:\d+ is not available \(\d+ CUDA devices found\)"):
        zertz.training.Run(cfg, tmp_path)
    assert not (tmp_path / "config.toml").exists()


def test_games_of_a_match_over_the_engines_bound_are_refused_when_the_config_is_read() -> None:
    """``[evaluate] games = 16777217`` was taken, and the run failed after its first iteration
    (``final_games``: after the whole run). The bound is Rust's, from its description of
    its match settings (``zertz.MAX_MATCH_GAMES``)."""
    most = zertz.MAX_MATCH_GAMES
    with pytest.raises(ValueError, match=r"^games: "):
        zertz.match("random", "random", games=most + 1)
    for key in ("games", "final_games"):
        assert getattr(parse_config(f"[evaluate]\n{key} = {most}\n").evaluate, key) == most
        with pytest.raises(
            ValueError, match=rf"^evaluate\.{key} must be between 1 and {most}, not {most + 1}$"
        ):
            parse_config(f"[evaluate]\n{key} = {most + 1}\n")


def test_opponents_are_checked_when_the_run_takes_the_config(tmp_path: Path) -> None:
    """A ``cmd:`` program that does not exist, a network that is a program (TorchScript, as an
    older zertz exported it: refused with the engine's words, which say how to convert it), and
    two opponents that are one player (the second match's games replaced the first's file), are
    refused before the first iteration, in one line naming them; the built-in network is an
    opponent like any network."""
    python = sys.executable
    old = REPO / "model" / "tests" / "data" / "builtin-v1.pt"
    check_opponents(EvalSection(opponents=["nn:builtin", ANSWERS_NAME]))
    check_opponents(EvalSection(final_opponents=["nn:builtin:50", "mcts:10", "mcts:20"]))
    check_opponents(EvalSection(opponents=["random"], final_opponents=["random"]))
    refused: list[tuple[dict[str, Any], str]] = [
        ({"opponents": ["cmd:/nonexistent"]}, "opponent 'cmd:/nonexistent': no program"),
        (
            {"final_opponents": ["cmd:zertz-no-such-program --x"]},
            "opponent 'cmd:zertz-no-such-program --x': no program 'zertz-no-such-program'",
        ),
        (
            {"opponents": [f'cmd:"{tmp_path}/no such" engine']},
            f"no program '{tmp_path}/no such'",
        ),
        ({"opponents": ["nn:missing.pt"]}, "opponent 'nn:missing.pt': no model file missing.pt"),
        (
            {"final_opponents": [f"nn:{old}:8"]},
            f"opponent 'nn:{old}:8': {old} is a TorchScript file: a program",
        ),
        ({"opponents": [f"nn:{old}"]}, f"python -m zertz convert-network {old} OUT.safetensors"),
        (
            {"opponents": ["mcts:10", "random", "mcts: 10"]},
            "evaluate.opponents names one player twice: 'mcts:10' and 'mcts: 10'",
        ),
        (
            {"final_opponents": ["greedy", "greedy"]},
            "evaluate.final_opponents names one player twice: 'greedy' and 'greedy'",
        ),
        (
            {"final_opponents": ["nn:builtin", "nn:builtin:400"]},
            "'nn:builtin' and 'nn:builtin:400' (both nn:builtin:400)",
        ),
        (
            {"opponents": [f"cmd:{python} a_b", f"cmd:{python} a b"]},
            "would write their games to one file",
        ),
    ]
    for lists, words in refused:
        for run in (None, RunSection()):
            with pytest.raises(ValueError, match=re.escape(words)) as e:
                check_opponents(EvalSection(**lists), run)
            assert "\n" not in str(e.value)
    # A network that does not play the run's board or marble set (the built-in one plays 37
    # rings with the standard marbles): refused before the first evaluation, not at it.
    builtin = EvalSection(opponents=["nn:builtin"])
    check_opponents(builtin, RunSection(board=37))
    for run, words in [
        (RunSection(board=61), "not this run's 61 rings with the standard marbles"),
        (RunSection(blitz=True), "plays 37 rings with the standard marbles, not this run's 37"),
    ]:
        with pytest.raises(ValueError, match=re.escape(words)):
            check_opponents(builtin, run)
    # Before the run folder takes the config, and from the command line in one line.
    text = tiny_text(evaluate__opponents='["random", "cmd:/nonexistent"]')
    with pytest.raises(ValueError, match="cmd:/nonexistent"):
        train(parse_config(text), tmp_path / "run", log=lambda _: None)
    assert not (tmp_path / "run" / "config.toml").exists()
    config = tmp_path / "twice.toml"
    config.write_text(tiny_text(evaluate__opponents='["mcts:10", "mcts: 10"]'))
    proc = cli("train", "--config", config, "--run", tmp_path / "run")
    assert_one_line_error(proc, "'mcts:10' and 'mcts: 10'")
    assert not (tmp_path / "run" / "config.toml").exists()


# ---------------------------------------------------------------------------------- divergence


def test_a_diverging_run_stops_and_saves_nothing(program: Path, tmp_path: Path) -> None:
    """``learning_rate = 1e30``: the loss is NaN at the second step. The run stops with a
    one-line error; no checkpoint and no exported network of NaN weights is written, and running
    it again fails the same way instead of resuming from a poisoned checkpoint."""
    config = tmp_path / "diverge.toml"
    config.write_text(tiny_text(train__learning_rate="1e30"))
    folder = tmp_path / "run"
    proc = cli("train", "--config", config, "--run", folder)
    message = assert_one_line_error(proc, "training diverged", "train.learning_rate", "nan")
    assert "iteration 1 was not saved" in message
    assert not (folder / "checkpoint.pt").exists()
    models = sorted(p.name for p in (folder / "models").iterdir())
    assert models == ["best.safetensors", "iter-0000.safetensors"]
    for model in (folder / "models").iterdir():
        for name, t in load_network(model).state_dict().items():
            assert bool(torch.isfinite(t).all()), (model, name)
    assert not (folder / "metrics.jsonl").exists()
    # The same command again: the self-play is kept, the training diverges again.
    log: list[str] = []
    with pytest.raises(NonFiniteError, match="training diverged at step 1"):
        train(load_config(config), folder, log=log.append)
    assert not any("self-play chunk" in line for line in log)
    assert not (folder / "checkpoint.pt").exists()


def test_save_and_export_refuse_non_finite_weights(program: Path, tmp_path: Path) -> None:
    cfg = parse_config(tiny_text())
    run = zertz.training.Run(cfg, tmp_path)
    run.start()
    run.save()
    good = run.checkpoint.read_bytes()
    with torch.no_grad():
        run.net.stem.weight[0, 0, 0, 0] = math.nan
        run.net.stem_bn.running_var[1] = math.inf  # type: ignore[index]
    assert non_finite(run.net) == ["stem.weight", "stem_bn.running_var"]
    with pytest.raises(NonFiniteError, match=r"cannot checkpoint .*stem\.weight, stem_bn"):
        run.save()
    assert run.checkpoint.read_bytes() == good
    with pytest.raises(
        NonFiniteError, match=r"cannot export .*iter-0001\.safetensors.*stem\.weight"
    ):
        run.export(1)
    assert not run.model_path(1).exists()
    # NaN in the optimizer's state is refused too.
    with torch.no_grad():
        run.net.stem.weight.nan_to_num_(0.0)
        run.net.stem_bn.running_var.fill_(1.0)  # type: ignore[union-attr]
    run.opt.state[run.net.stem.weight]["exp_avg"] = torch.full_like(run.net.stem.weight, math.nan)
    with pytest.raises(NonFiniteError, match="optimizer's exp_avg"):
        run.save()
    assert run.checkpoint.read_bytes() == good
    del run
    # The good checkpoint resumes; a poisoned one (written by hand) is refused.
    again = zertz.training.Run(cfg, tmp_path)
    again.start()
    assert non_finite(again.net) == []
    del again
    ck = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    ck["model"]["value_fc2.bias"][0] = math.nan
    torch.save(ck, tmp_path / "checkpoint.pt")
    poisoned = zertz.training.Run(cfg, tmp_path)
    with pytest.raises(NonFiniteError, match=r"checkpoint\.pt: .*value_fc2\.bias"):
        poisoned.start()


# ---------------------------------------------------------------------------------- checkpoints


def test_a_checkpoint_holds_only_tensors_and_plain_data(program: Path, tmp_path: Path) -> None:
    run = zertz.training.Run(parse_config(tiny_text()), tmp_path)
    run.start()
    run.save()
    ck = torch.load(run.checkpoint, weights_only=True)
    assert set(ck["rng"]) == {"generator", "torch", "numpy", "python"}
    assert ck["rng"]["numpy"]["keys"].shape == (624,)
    assert ck["rng"]["python"]["internal"].shape == (625,)


def test_export_of_a_malicious_checkpoint_runs_no_code(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    evil = tmp_path / "checkpoint.pt"
    torch.save(fake_checkpoint(model=Payload(marker)), evil)
    with pytest.raises(ValueError, match=r"checkpoint\.pt is refused: it holds a posix\.system"):
        export_checkpoint(evil, tmp_path / "out.safetensors")
    assert not marker.exists()
    proc = cli("export", evil, tmp_path / "out.safetensors")
    assert_one_line_error(proc, str(evil), "refused")
    assert not marker.exists() and not (tmp_path / "out.safetensors").exists()
    # The payload works: an unrestricted load would have run it.
    torch.load(evil, weights_only=False)
    assert marker.exists()


def test_resume_from_a_malicious_checkpoint_runs_no_code(program: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    folder = tmp_path / "run"
    run = zertz.training.Run(parse_config(tiny_text()), folder)
    torch.save(fake_checkpoint(rng=Payload(marker)), run.checkpoint)
    with pytest.raises(ValueError, match=r"checkpoint\.pt is refused"):
        run.start()
    assert not marker.exists()


def test_a_checkpoint_of_numpy_objects_is_refused(tmp_path: Path) -> None:
    """Checkpoints of older versions held numpy's random state (arrays, unpickled as objects)."""
    import numpy as np

    old = tmp_path / "old.pt"
    torch.save(fake_checkpoint(rng={"numpy": np.random.get_state()}), old)
    with pytest.raises(ValueError, match=r"old\.pt is refused: it holds a numpy.*older zertz"):
        export_checkpoint(old, tmp_path / "out.safetensors")


def test_export_cli_refuses_random_bytes(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pt"
    junk.write_bytes(bytes(range(256)) * 8)
    proc = cli("export", junk, tmp_path / "out.safetensors")
    assert_one_line_error(proc, str(junk), "not a zertz training checkpoint")
    assert not (tmp_path / "out.safetensors").exists()


@pytest.mark.parametrize(
    "content",
    [b"", b"\x80\x04garbage", b"PK\x03\x04" + bytes(100), b"not a checkpoint at all"],
)
def test_export_refuses_other_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "file.pt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"file\.pt is not a zertz training checkpoint"):
        export_checkpoint(path, tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


def test_export_of_a_good_fake_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    torch.save(fake_checkpoint(), path)
    out = export_checkpoint(path, tmp_path / "out.safetensors")
    assert read_metadata(out)["step"] == 4


def test_export_as_an_aoti_package_plays_in_the_engine(tmp_path: Path) -> None:
    """``python -m zertz export CHECKPOINT OUT.pt2`` compiles an AOTInductor package that the
    engine plays with when told to trust it (in-process here) and whose metadata says what it
    is; untrusted, it is refused as the program it is."""
    path = tmp_path / "checkpoint.pt"
    torch.save(fake_checkpoint(), path)
    out = tmp_path / "m.pt2"
    proc = cli("export", path, out)
    assert proc.returncode == 0, proc.stderr
    meta = read_metadata(out, trust_code=True)
    assert (meta["step"], meta["boards"], meta["backend"]) == (4, [37], "aoti")
    assert (meta["device"], meta["precision"]) == ("cpu", "fp32")
    result = zertz.match(f"nn:{out}:16", "random", games=2, device="cpu", seed=3, trust_code=True)
    assert result["games"] == 2
    # Untrusted, a package is refused by what it is, by the engine and by Python's readers.
    for refused in (
        lambda: zertz.match(f"nn:{out}:16", "random", games=2, device="cpu"),
        lambda: read_metadata(out),
        lambda: load_network(out),
    ):
        with pytest.raises(ValueError, match=r"AOTInductor package.*--trust-code") as e:
            refused()
        one_line(e.value, str(out))
    # The engine runs a package as compiled: another number format is refused.
    with pytest.raises(ValueError, match="compiled for fp32"):
        zertz.match(f"nn:{out}:16:bf16", "random", games=2, device="cpu", trust_code=True)


def test_export_aoti_of_several_boards_names_the_one_that_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The boards are compiled in child processes: one that fails (here, with nowhere to write
    its files) is a RuntimeError naming the board, with the end of its output, and no package
    is written."""
    from zertz.exported import export_aoti

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/dev/null/nowhere")
    out = tmp_path / "m.pt2"
    with pytest.raises(RuntimeError, match=r"compiling board (37|61) failed \(status 1\)"):
        export_aoti(ZertzNet(TINY, boards=[37, 61]), out)
    assert not out.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("out", "options", "words"),
    [
        ("m.pt", {}, "a .pt2 file"),
        ("m.pt2", {"precision": "fp8"}, "precision must be one of"),
        ("m.pt2", {"device": "mps"}, "device must be cpu or cuda"),
    ],
)
def test_export_aoti_refuses_what_it_cannot_write(
    tmp_path: Path, out: str, options: dict[str, str], words: str
) -> None:
    from zertz.exported import export_aoti

    with pytest.raises(ValueError, match=re.escape(words)):
        export_aoti(
            ZertzNet(TINY, boards=[37]),
            tmp_path / out,
            device=options.get("device", "cpu"),
            precision=options.get("precision", "fp32"),
        )
    assert not (tmp_path / out).exists()


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        (
            {"network": {**dataclasses.asdict(TINY), "channels": 10**9}},
            "network.channels must be between 1 and 1024, not 1000000000",
        ),
        ({"network": {**dataclasses.asdict(TINY), "blocks": 10**9}}, "blocks"),
        ({"network": {**dataclasses.asdict(TINY), "evil": 1}}, "network keys"),
        ({"network": "tiny"}, "no network sizes"),
        ({"board": 36}, "board 36"),
        ({"board": "37"}, "board '37'"),
        ({"model": {"stem.weight": torch.zeros(3)}}, "blocks"),
        ({"state": {"step": "4"}}, "no training step"),
        ({"state": [4]}, "no training step"),
    ],
)
def test_export_refuses_a_checkpoint_that_does_not_fit(
    tmp_path: Path, changes: dict[str, Any], words: str
) -> None:
    """Sizes that disagree with the weights are refused before any memory is taken for them."""
    path = tmp_path / "checkpoint.pt"
    torch.save(fake_checkpoint(**changes), path)
    with pytest.raises(ValueError, match=re.escape(words)):
        export_checkpoint(path, tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


def test_export_refuses_non_finite_weights_of_a_checkpoint(tmp_path: Path) -> None:
    ck = fake_checkpoint()
    ck["model"]["hop.weight"][0, 0] = math.inf
    torch.save(ck, tmp_path / "checkpoint.pt")
    with pytest.raises(NonFiniteError, match=r"hop\.weight"):
        export_checkpoint(tmp_path / "checkpoint.pt", tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


def test_export_refuses_huge_sizes_without_taking_memory(tmp_path: Path) -> None:
    """A stem of no elements claims 10**9 channels: the network is never built."""
    ck = fake_checkpoint(network={**dataclasses.asdict(TINY), "channels": 10**9})
    ck["model"]["stem.weight"] = torch.zeros(10**9, 0, 3, 3)
    torch.save(ck, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=r"checkpoint\.pt is not a usable zertz training"):
        export_checkpoint(tmp_path / "checkpoint.pt", tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


# ---------------------------------------------------------------- kills and damaged run folders


class Killed(BaseException):
    """A kill at a chosen point (nothing after it runs, as after SIGKILL)."""


def iterations_in(folder: Path) -> list[int]:
    """The iteration of each line of ``folder/metrics.jsonl``."""
    text = (folder / "metrics.jsonl").read_text()
    return [json.loads(line)["iteration"] for line in text.splitlines()]


def test_a_kill_between_the_metrics_line_and_the_checkpoint_leaves_no_duplicate(
    program: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An iteration ends with its metrics line, then its checkpoint. A kill between the two
    left the line, and the resumed run, which repeats the iteration, wrote it again: iterations
    [1, 2, 2]. A run now resumes with one line per iteration its checkpoint holds, the one-machine
    loop and the distributed learner alike."""
    cfg = parse_config(tiny_text())
    folder = tmp_path / "run"
    save = Run.save

    def killed_at_2(run: Run) -> None:
        if run.state.iteration == 2:
            raise Killed
        save(run)

    monkeypatch.setattr(Run, "save", killed_at_2)
    try:
        train(cfg, folder, log=lambda _: None)
    except Killed:
        pass
    else:
        raise AssertionError("the run was not killed")
    monkeypatch.setattr(Run, "save", save)
    gc.collect()  # the killed run's lock goes with its frames
    assert iterations_in(folder) == [1, 2]
    assert torch.load(folder / "checkpoint.pt", weights_only=True)["state"]["iteration"] == 1

    # The distributed learner resumes the folder through the same start: the line goes.
    learner = Learner(cfg.source, str(folder))
    assert learner.run.state.iteration == 1
    del learner
    gc.collect()
    assert iterations_in(folder) == [1]
    # The one-machine loop runs iteration 2 again, and its line is there once.
    stats = train(cfg, folder, log=lambda _: None)
    assert [s["iteration"] for s in stats] == [2]
    assert iterations_in(folder) == [1, 2]
    last = (folder / "metrics.jsonl").read_text().splitlines()[-1]
    assert json.loads(last) == json.loads(json.dumps(stats[0]))


def test_a_resumed_run_keeps_one_metrics_line_per_checkpointed_iteration(tmp_path: Path) -> None:
    """What :meth:`Metrics.keep` makes of what kills (and older versions) left: the last line of
    each iteration the checkpoint holds, the pretraining's (iteration 0) only once it is done,
    in order; lines of later iterations, torn lines and lines that are no metrics go."""
    rows = [
        {"iteration": 0, "pretrain": True},
        {"iteration": 1, "attempt": "killed"},
        {"iteration": 2},
        {"iteration": 1, "attempt": "checkpointed"},
        {"iteration": 3},
    ]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    text += '["no", "metrics"]\n{"iteration": true}\n\n{"iteration": 3, "torn'
    path = tmp_path / "metrics.jsonl"
    path.write_text(text)
    assert Metrics(tmp_path).keep(2, pretrained=False) == 7
    assert [json.loads(line) for line in path.read_text().splitlines()] == [rows[3], rows[2]]
    path.write_text(text)
    Metrics(tmp_path).keep(2, pretrained=True)
    assert iterations_in(tmp_path) == [0, 1, 2]
    # Nothing to drop: the file is left as it is.
    before = path.stat().st_ino
    assert Metrics(tmp_path).keep(2, pretrained=True) == 0
    assert path.stat().st_ino == before
    # No checkpoint yet: nothing is kept.
    Metrics(tmp_path).keep(0, pretrained=False)
    assert path.read_text() == ""


def test_a_finished_run_with_a_torn_last_metrics_line_ends_with_its_result(
    program: Path, tmp_path: Path
) -> None:
    """A finished run whose last metrics line is cut short (or whose metrics are gone) asked to
    "run the same command again", which found the run done and asked again, forever: the
    command judged the run by the last metrics line, and the line of the last iteration, which
    no rerun writes, was missing. The checkpoint says how far the run is; the command ends with
    the table of the evaluations it still has and says what was lost."""
    config = tmp_path / "tiny.toml"
    config.write_text(tiny_text())
    folder = tmp_path / "run"
    train(load_config(config), folder, log=lambda _: None)
    done = cli("train", "--config", config, "--run", folder)
    assert done.returncode == 0, done
    assert "network after iteration 2" in done.stdout and "lost" not in done.stdout

    metrics = folder / "metrics.jsonl"
    metrics.write_bytes(metrics.read_bytes()[:-20])
    for _ in range(2):  # the same answer every time
        proc = cli("train", "--config", config, "--run", folder)
        assert proc.returncode == 0, proc
        assert "run the same command again" not in proc.stdout
        assert "all 2 iterations are done" in proc.stdout
        assert "has lost the line of the last one, 2" in proc.stdout
        assert "network after iteration 1" in proc.stdout and "play against it" in proc.stdout
    metrics.unlink()
    proc = cli("train", "--config", config, "--run", folder)
    assert proc.returncode == 0, proc
    assert "has lost the line of the last one, 2" in proc.stdout, proc.stdout
    assert "network after" not in proc.stdout and "play against it" in proc.stdout


@pytest.fixture(scope="module")
def one_iteration(program: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of one iteration."""
    folder = tmp_path_factory.mktemp("one") / "run"
    train(parse_config(tiny_text(run__iterations="1")), folder, log=lambda _: None)
    return folder


@pytest.mark.parametrize(
    ("state", "key"),
    [
        ({"iteration": -5}, "state.iteration = -5"),
        ({"iteration": "1"}, "state.iteration = '1'"),
        ({"iteration": 1.0}, "state.iteration = 1.0"),
        ({"iteration": 7, "step": 4}, "state.iteration = 7"),
        ({"step": -1}, "state.step = -1"),
        ({"step": True}, "state.step = True"),
        ({"step": 10**6}, "state.step = 1000000"),
        ({"best": 3}, "state.best = 3"),
        ({"ladder": {0: 0.0, "1": 5.0}}, "state.ladder = '1'"),
        ({"ladder": {0: 0.0, 9: 5.0}}, "state.ladder = 9"),
        ({"ladder": {1: 0.0}}, "state.ladder = {1: 0.0}"),
        ({"ladder": {0: math.nan}}, "state.ladder[0] = nan"),
        ({"ladder": [0.0]}, "state.ladder = [0.0]"),
        ({"pretrained": "yes"}, "state.pretrained = 'yes'"),
        ({"pretrained": True}, "state.pretrained = True"),
        ({"carried": 2}, "state.carried = 2"),
        ({"carried": -1}, "state.carried = -1"),
        ({"carried": "1"}, "state.carried = '1'"),
        ({"evil": 1}, "state.evil = 1"),
    ],
)
def test_a_checkpoint_of_an_impossible_state_is_refused(
    one_iteration: Path, tmp_path: Path, state: dict[str, Any], key: str
) -> None:
    """A checkpoint whose state no run can have written (negative counts, other types, the best
    network after the last iteration, an iteration beyond the self-play in the folder, more
    steps than its iterations take, ladder keys that are not iterations, pretraining in a run
    without it) is refused with an error that names the file and the field, before anything
    is loaded."""
    folder = tmp_path / "run"
    shutil.copytree(one_iteration, folder)
    path = folder / "checkpoint.pt"
    ck = torch.load(path, weights_only=True)
    ck["state"].update(state)
    torch.save(ck, path)
    run = Run(parse_config(tiny_text(run__iterations="1")), folder)
    with pytest.raises(ValueError, match=re.escape(f"{path} claims an impossible {key}")):
        run.start()


def test_the_train_command_names_the_impossible_field(one_iteration: Path, tmp_path: Path) -> None:
    folder = tmp_path / "run"
    shutil.copytree(one_iteration, folder)
    ck = torch.load(folder / "checkpoint.pt", weights_only=True)
    ck["state"]["iteration"] = -5
    torch.save(ck, folder / "checkpoint.pt")
    config = tmp_path / "tiny.toml"
    config.write_text(tiny_text(run__iterations="1"))
    proc = cli("train", "--config", config, "--run", folder)
    assert_one_line_error(proc, str(folder / "checkpoint.pt"), "state.iteration = -5")


# ----------------------------------------------------------------------- files a user names
# (issue "Hostile input, fourth round"): the training side reads only regular files, refused
# before they are opened, within the bound of their kind (zertz.files, Rust's readers); a
# full disk is one line naming the file; a killed write's partial output goes when the run opens.

DEAD_PIDS = (4294967295, 4294967294, 4294967293, 4294967292)  # above any system's process ids


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run of one iteration (needs no zertz program)."""
    folder = tmp_path_factory.mktemp("finished") / "run"
    train(parse_config(tiny_text(run__iterations="1")), folder, log=lambda _: None)
    return folder


def copy_run(finished: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(finished, tmp_path / "run", symlinks=True))


def replace_with(path: Path, kind: str) -> Path:
    """``path`` (removed if there) made a FIFO, or a link to ``/dev/zero``."""
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@contextmanager
def never_opened(fifo: Path) -> Iterator[None]:
    """Fails the block if anything opens the FIFO ``fifo`` for reading: a thread keeps trying to
    open its other end (which succeeds only while a reader has it open), and a reader it meets
    reads the end of the file at once instead of waiting for ever."""
    met: list[bool] = []
    stop = threading.Event()

    def writer() -> None:
        while not stop.is_set():
            try:
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader
                stop.wait(0.005)
                continue
            met.append(True)
            os.close(fd)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
    assert not met, f"{fifo} was opened"


def one_line(e: BaseException, *words: str) -> str:
    """The message of ``e``: one line that holds ``words``."""
    text = str(e)
    assert "\n" not in text.strip(), text
    for word in words:
        assert word in text, (word, text)
    return text


CLI_PROBES = ["config", "config-zero", "from", "checkpoint", "metrics", "export", "provenance"]


@pytest.mark.parametrize("probe", CLI_PROBES)
def test_the_cli_refuses_a_fifo_or_a_device_in_one_line(
    finished: Path, tmp_path: Path, probe: str
) -> None:
    """Each file the CLI reads, made a FIFO (whose opening waited for ever; SIGTERM then printed
    "stopped" and the process stayed blocked) or a link to /dev/zero (a resume read 21.8 GB of
    metrics): one line naming it, status 2. The subprocess's limit (cli: 600 s) only catches a
    hang."""
    config = tmp_path / "tiny.toml"
    config.write_text(tiny_text(run__iterations="1"))
    fifo = replace_with(tmp_path / "fifo", "fifo")
    zero = replace_with(tmp_path / "zero.toml", "zero")
    new = tmp_path / "new"
    args: list[str | Path]
    if probe == "config":
        args, culprit, kind = ["train", "--config", fifo, "--run", new], fifo, "a FIFO"
    elif probe == "config-zero":
        args, culprit, kind = ["train", "--config", zero, "--run", new], zero, "a device"
    elif probe == "from":
        args = ["train", "--config", config, "--run", new, "--from", fifo]
        culprit, kind = fifo, "a FIFO"
    elif probe in ("checkpoint", "metrics"):
        run = copy_run(finished, tmp_path)
        name = "checkpoint.pt" if probe == "checkpoint" else "metrics.jsonl"
        culprit = replace_with(run / name, "fifo" if probe == "checkpoint" else "zero")
        kind = "a FIFO" if probe == "checkpoint" else "a device"
        args = ["train", "--config", config, "--run", run]
    elif probe == "export":
        args, culprit, kind = ["export", fifo, tmp_path / "out.safetensors"], fifo, "a FIFO"
    else:
        checkpoint = finished / "checkpoint.pt"
        args = ["export", checkpoint, tmp_path / "out.safetensors", "--provenance", fifo]
        culprit, kind = fifo, "a FIFO"
    proc = cli(*args)
    assert_one_line_error(proc, f"cannot read {culprit}: not a regular file ({kind})")
    assert "stopped" not in proc.stdout
    assert not (tmp_path / "out.safetensors").exists()
    # Nothing was made: a checkpoint to carry on from is read before the new run's folder.
    assert not new.exists()


def test_the_python_readers_never_open_a_fifo(finished: Path, tmp_path: Path) -> None:
    """Configs, checkpoints, metrics, exported networks and a run's records: a FIFO in their
    place is refused (OSError naming it) without being opened."""
    from zertz.files import open_binary, read_bytes
    from zertz.plots import read_metrics
    from zertz.training.records import ChunkSummary

    run = copy_run(finished, tmp_path)
    fifo = replace_with(tmp_path / "fifo", "fifo")
    metrics = replace_with(run / "metrics.jsonl", "fifo")
    summary = next(run.glob("shards/iter-0000/c*/summary.json"))
    replace_with(summary, "fifo")
    calls: list[tuple[Any, Path]] = [
        (load_config, fifo),
        (zertz.training.load_checkpoint, fifo),
        (lambda p: export_checkpoint(p, tmp_path / "out.safetensors"), fifo),
        (read_metadata, fifo),
        (load_network, fifo),
        (lambda p: read_bytes(p, "json"), fifo),
        (open_binary, fifo),
        (lambda _: Metrics(run).keep(1, False), metrics),
        (lambda _: read_metrics(run), metrics),
        (ChunkSummary.read, summary),
    ]
    for call, path in calls:
        with never_opened(path), pytest.raises(OSError) as e:
            call(path)
        # The engine reads networks: "cannot read model PATH: ...".
        one_line(e.value, "cannot read ", f"{path}: not a regular file (a FIFO)")


def test_a_link_to_dev_zero_is_refused_unread(finished: Path, tmp_path: Path) -> None:
    """A resume whose metrics are a link to /dev/zero read until the OOM killer stopped it."""
    run = copy_run(finished, tmp_path)
    metrics = replace_with(run / "metrics.jsonl", "zero")
    with pytest.raises(OSError) as e:
        Run(parse_config(tiny_text(run__iterations="1")), run).start()
    one_line(e.value, f"cannot read {metrics}: not a regular file (a device)")
    for name in ("checkpoint.pt", "models/best.safetensors", "config.toml"):
        path = replace_with(run / name, "zero")
        reader = {
            "checkpoint.pt": zertz.training.load_checkpoint,
            "models/best.safetensors": read_metadata,
            "config.toml": load_config,
        }[name]
        with pytest.raises(OSError) as e:
            reader(path)
        one_line(e.value, "cannot read ", f"{path}: not a regular file (a device)")


@pytest.mark.parametrize(
    ("kind", "name", "what"),
    [
        ("config", "config.toml", "a config file"),
        ("metrics", "metrics.jsonl", "a metrics file"),
        ("network", "models/best.safetensors", "a network file"),
        ("checkpoint", "checkpoint.pt", "a training checkpoint"),
        ("json", "summary.json", "a JSON file of a run"),
    ],
)
def test_a_file_past_its_bound_is_refused_with_the_bound(
    finished: Path, tmp_path: Path, kind: str, name: str, what: str
) -> None:
    """A file one byte past the bound of its kind (a sparse file: no disk is taken) is refused
    before it is read, and the message states the bound; the bounds are Rust's."""
    from zertz.files import LIMITS, size_text
    from zertz.plots import read_metrics
    from zertz.training.records import ChunkSummary

    run = copy_run(finished, tmp_path)
    path = next(run.glob("shards/iter-0000/c*/summary.json")) if kind == "json" else run / name
    with open(path, "r+b") as f:
        f.truncate(LIMITS[kind] + 1)
    reader: Any = {
        "config": load_config,
        "metrics": lambda _: read_metrics(run),
        "network": read_metadata,
        "checkpoint": zertz.training.load_checkpoint,
        "json": ChunkSummary.read,
    }[kind]
    with pytest.raises(OSError) as e:
        reader(path)
    bound = size_text(LIMITS[kind])
    one_line(e.value, "cannot read ", f"{path}: ", f"more than the {bound} that {what} may have")
    if kind == "config":  # and the CLI says it in one line
        proc = cli("train", "--config", path, "--run", tmp_path / "new")
        assert_one_line_error(proc, str(path), f"the {bound} that a config file may have")


def test_the_bounds_fit_the_project_files() -> None:
    """Every config of the project is far within the bound of a config."""
    from zertz.files import LIMITS

    assert LIMITS["config"] == 1 << 20 and LIMITS["metrics"] == 64 << 20
    assert LIMITS["network"] == 1 << 30 and LIMITS["checkpoint"] == 4 << 30
    for config in (REPO / "configs").rglob("*.toml"):
        assert config.stat().st_size < LIMITS["config"] // 100, config


def test_a_network_that_is_not_a_network_file_is_one_line(tmp_path: Path) -> None:
    """Garbage, and what begins as a zip (a TorchScript file or an AOTInductor package: a
    program), are refused by the readers in one line naming the file; nothing is run."""
    garbage = tmp_path / "garbage.safetensors"
    garbage.write_bytes(b"not a network file at all" * 10)
    zipped = tmp_path / "zipped.safetensors"
    zipped.write_bytes(b"PK\x03\x04 not a zip at all" * 10)
    for path, words in [(garbage, "is not an exported zertz model"), (zipped, "convert-network")]:
        for reader in (load_network, read_metadata):
            with pytest.raises(ValueError) as e:
                reader(path)
            one_line(e.value, str(path), words)


def no_room(monkeypatch: pytest.MonkeyPatch, calls: list[str] | None = None) -> None:
    """Makes every write of zertz.files fail as on a full disk (ENOSPC), after the check of free
    room passed: what a disk that fills up meanwhile does."""
    import errno

    import zertz.files

    real_open = open

    class Full:
        def __init__(self, path: Any, mode: str) -> None:
            self.f = real_open(path, mode)

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.f.close()

        def write(self, data: bytes) -> int:
            self.f.write(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")

        def flush(self) -> None:
            pass

        def fileno(self) -> int:
            return self.f.fileno()

    def full_open(path: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Full:
        if calls is not None:
            calls.append(str(path))
        return Full(path, mode)

    monkeypatch.setattr(zertz.files, "open", full_open, raising=False)


def test_a_full_disk_is_one_line_naming_the_file_and_the_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC simulated (a full disk's error, raised by the write): an export, a checkpoint and a
    metrics line fail in one line naming the file and the room they need, and leave no partial
    file. (test_a_full_disk_during_training makes a real full disk where it can.)"""
    from zertz.exported import export
    from zertz.training.folder import atomic_save

    net = ZertzNet(TINY, boards=[37])
    no_room(monkeypatch)
    writes: list[tuple[Callable[[Path], object], Path]] = [
        (lambda p: export(net, p), tmp_path / "models" / "iter-0001.safetensors"),
        (lambda p: atomic_save({"x": torch.zeros(3)}, p), tmp_path / "checkpoint.pt"),
        (lambda p: Metrics(tmp_path).record({"iteration": 1}), tmp_path / "metrics.jsonl"),
    ]
    for write, path in writes:
        with pytest.raises(OSError) as e:
            write(path)
        one_line(e.value, f"cannot write {path}: the disk is full (", " needed, ", " free in ")
        assert "c10" not in str(e.value)
    left = [p.name for p in tmp_path.rglob("*") if ".partial-" in p.name]
    assert left == [], left
    assert not (tmp_path / "models" / "iter-0001.safetensors").exists()


def test_a_write_that_cannot_fit_is_refused_before_it_begins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk whose free room is less than the file: refused before anything is written."""
    import zertz.files

    opened: list[str] = []
    no_room(monkeypatch, opened)
    real = os.statvfs

    class Almost:
        def __init__(self, st: os.statvfs_result) -> None:
            self.f_frsize, self.f_bfree, self.f_bavail = st.f_frsize, 1, 1

    monkeypatch.setattr(os, "statvfs", lambda p: Almost(real(p)))
    path = tmp_path / "big.bin"
    with pytest.raises(OSError) as e:
        zertz.files.write_atomic(path, b"x" * 100_000)
    one_line(e.value, f"cannot write {path}: the disk is full (97.7 KiB needed, ")
    assert opened == [] and list(tmp_path.iterdir()) == []


def test_the_cli_says_a_full_disk_in_one_line(tmp_path: Path, finished: Path) -> None:
    """``python -m zertz export`` with ENOSPC simulated in the child (a full disk aborted the
    process with libtorch's c10::Error and 27 C++ frames, status 134)."""
    out = tmp_path / "out.safetensors"
    code = textwrap.dedent(
        """
        import errno, sys, zertz.files
        def full(path, mode="r", *args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device")
        zertz.files.open = full
        from zertz.__main__ import main
        sys.exit(main(sys.argv[1:]))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "export", str(finished / "checkpoint.pt"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO / "python",
    )
    assert_one_line_error(proc, f"cannot write {out}: the disk is full (", " needed, ")
    assert "c10" not in proc.stderr and proc.returncode != 134
    assert not out.exists() and not list(tmp_path.glob(".out.safetensors.partial-*"))


#: Whether a tmpfs can be mounted (and is unmounted and its folder removed again).
MOUNT_PROBE = (
    'd=$(mktemp -d) || exit 1; mount -t tmpfs -o size=64k tmpfs "$d"; r=$?; '
    'umount "$d"; rmdir "$d"; exit $r'
)


def small_disk_command() -> list[str] | None:
    """The command that runs ``sh -c SCRIPT`` where it may mount a tmpfs (a mount namespace of
    its own: nothing outside sees it, and it goes with the process), or None where this machine
    lets no test mount one."""
    unshare = shutil.which("unshare")
    if unshare is None or sys.platform != "linux":
        return None
    for command in ([unshare, "--mount"], [unshare, "--user", "--map-root-user", "--mount"]):
        probe = subprocess.run(
            [*command, "sh", "-c", MOUNT_PROBE],
            capture_output=True,
            timeout=60,
            check=False,
        )
        if probe.returncode == 0:
            return command
    return None


FULL_DISK = """
set -u
disk=$1 out=$2 config=$3
mount -t tmpfs -o size=400k tmpfs "$disk" || exit 99
"$PYTHON" -m zertz train --config "$config" --run "$disk/run" >"$out/1.out" 2>"$out/1.err"
echo $? >"$out/1.rc"
find "$disk/run" -name '*.partial-*' >"$out/1.partials"
mount -o remount,size=16m "$disk"
touch "$disk/run/models/.iter-0001.safetensors.partial-4294967295"
touch "$disk/run/.checkpoint.pt.partial-4294967294"
"$PYTHON" -m zertz train --config "$config" --run "$disk/run" >"$out/2.out" 2>"$out/2.err"
echo $? >"$out/2.rc"
find "$disk/run" -name '*.partial-*' >"$out/2.partials"
"""


def test_a_full_disk_during_training(tmp_path: Path) -> None:
    """A run on a 400 KB tmpfs (as in the issue: libtorch aborted the export, status 134, and the
    killed export's partial file stayed for ever): one line naming the file, status 2, no partial
    file left; once there is room, the same command finishes the run, and the partial files of
    dead writers are gone. Skipped where no tmpfs can be mounted (no mount namespace allowed):
    test_a_full_disk_is_one_line_naming_the_file_and_the_room simulates it."""
    command = small_disk_command()
    if command is None:
        pytest.skip("no mount namespace here to mount a small tmpfs in (ENOSPC is simulated)")
    config = tmp_path / "tiny.toml"
    config.write_text(tiny_text(run__iterations="2"))
    (tmp_path / "disk").mkdir()
    proc = subprocess.run(
        [*command, "sh", "-c", FULL_DISK, "sh", tmp_path / "disk", tmp_path, config],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=REPO / "python",
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert proc.returncode == 0, proc

    def read(name: str) -> str:
        return (tmp_path / name).read_text()

    failed = subprocess.CompletedProcess([], int(read("1.rc")), read("1.out"), read("1.err"))
    line = assert_one_line_error(failed, f"cannot write {tmp_path / 'disk' / 'run'}/")
    # Where the engine's self-play filled it, its own error (the system's words) says so.
    assert "the disk is full (" in line or "No space left on device" in line, line
    assert "c10" not in failed.stderr
    # A write of the training loop that failed left no partial file (the engine's self-play
    # chunk or match may: their next attempt, and the next opening of the run, remove them).
    left = read("1.partials").split()
    assert all("/shards/" in p or "/matches/" in p for p in left), left
    assert read("2.rc").strip() == "0", read("2.err")
    assert read("2.partials") == ""


def test_partial_outputs_of_dead_writers_go_when_the_run_opens(
    finished: Path, tmp_path: Path
) -> None:
    """``.NAME.partial-PID`` of processes that no longer run (a kill during an export, a
    checkpoint, a match) are removed when the run is next opened; a running writer's and other
    names stay."""
    run = copy_run(finished, tmp_path)
    live = subprocess.Popen(["sleep", "600"])
    try:
        dead = [
            run / "models" / f".iter-0001.safetensors.partial-{DEAD_PIDS[0]}",
            run / f".checkpoint.pt.partial-{DEAD_PIDS[1]}",
            run / "matches" / f".iter-0001-random.jsonl.partial-{DEAD_PIDS[2]}",
        ]
        folder = run / "models" / f".iter-0002.safetensors.partial-{DEAD_PIDS[3]}"
        kept = [
            run / "models" / f".best.safetensors.partial-{live.pid}",
            run / "models" / ".x.partial-y",
        ]
        for path in [*dead, *kept]:
            path.write_bytes(b"half")
        folder.mkdir()
        (folder / "inside").write_bytes(b"half")
        Run(parse_config(tiny_text(run__iterations="1")), run)
        assert [p for p in [*dead, folder] if os.path.lexists(p)] == []
        assert all(p.exists() for p in kept)
    finally:
        live.kill()
        live.wait()
