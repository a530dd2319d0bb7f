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
from pathlib import Path
from typing import Any

import pytest
import torch
from test_training import tiny_text

import zertz
import zertz.training
from zertz.exported import load_exported, read_metadata
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
        # Over the player grammar's cap (2**20), which the engine checks when the config is read,
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
    (``final_games``: after the whole run). The bound is the engine's, from its description of
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
    """A ``cmd:`` program that does not exist, and two opponents that are one player (the
    second match's games replaced the first's file), are refused before the first iteration,
    in one line naming them; the built-in network is an opponent like any network."""
    python = sys.executable
    check_opponents(EvalSection(opponents=["nn:builtin", f"cmd:{python} -c pass"]))
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
        with pytest.raises(ValueError, match=re.escape(words)) as e:
            check_opponents(EvalSection(**lists))
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
    assert sorted(p.name for p in (folder / "models").iterdir()) == ["best.pt", "iter-0000.pt"]
    for model in (folder / "models").iterdir():
        for name, t in load_exported(model).state_dict().items():
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
    with pytest.raises(NonFiniteError, match=r"cannot export .*iter-0001\.pt.*stem\.weight"):
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
        export_checkpoint(evil, tmp_path / "out.pt")
    assert not marker.exists()
    proc = cli("export", evil, tmp_path / "out.pt")
    assert_one_line_error(proc, str(evil), "refused")
    assert not marker.exists() and not (tmp_path / "out.pt").exists()
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
        export_checkpoint(old, tmp_path / "out.pt")


def test_export_cli_refuses_random_bytes(tmp_path: Path) -> None:
    junk = tmp_path / "junk.pt"
    junk.write_bytes(bytes(range(256)) * 8)
    proc = cli("export", junk, tmp_path / "out.pt")
    assert_one_line_error(proc, str(junk), "not a zertz training checkpoint")
    assert not (tmp_path / "out.pt").exists()


@pytest.mark.parametrize(
    "content",
    [b"", b"\x80\x04garbage", b"PK\x03\x04" + bytes(100), b"not a checkpoint at all"],
)
def test_export_refuses_other_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "file.pt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=r"file\.pt is not a zertz training checkpoint"):
        export_checkpoint(path, tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def test_export_of_a_good_fake_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "checkpoint.pt"
    torch.save(fake_checkpoint(), path)
    out = export_checkpoint(path, tmp_path / "out.pt")
    assert read_metadata(out)["step"] == 4


def test_export_as_an_aoti_package_plays_in_the_engine(tmp_path: Path) -> None:
    """``python -m zertz export CHECKPOINT OUT.pt2`` compiles an AOTInductor package that the
    engine plays with (in-process here) and whose metadata says what it is."""
    path = tmp_path / "checkpoint.pt"
    torch.save(fake_checkpoint(), path)
    out = tmp_path / "m.pt2"
    proc = cli("export", path, out)
    assert proc.returncode == 0, proc.stderr
    meta = read_metadata(out)
    assert (meta["step"], meta["boards"], meta["backend"]) == (4, [37], "aoti")
    assert (meta["device"], meta["precision"]) == ("cpu", "fp32")
    result = zertz.match(f"nn:{out}:16", "random", games=2, device="cpu", seed=3)
    assert result["games"] == 2
    # Python's own loader is for TorchScript files: a package is refused by name.
    with pytest.raises(ValueError, match="AOTInductor package"):
        load_exported(out)
    # The engine runs a package as compiled: another number format is refused.
    with pytest.raises(ValueError, match="compiled for fp32"):
        zertz.match(f"nn:{out}:16:bf16", "random", games=2, device="cpu")


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
        ({"network": {**dataclasses.asdict(TINY), "channels": 10**9}}, "do not fit"),
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
        export_checkpoint(path, tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def test_export_refuses_non_finite_weights_of_a_checkpoint(tmp_path: Path) -> None:
    ck = fake_checkpoint()
    ck["model"]["hop.weight"][0, 0] = math.inf
    torch.save(ck, tmp_path / "checkpoint.pt")
    with pytest.raises(NonFiniteError, match=r"hop\.weight"):
        export_checkpoint(tmp_path / "checkpoint.pt", tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


def test_export_refuses_huge_sizes_without_taking_memory(tmp_path: Path) -> None:
    """A stem of no elements claims 10**9 channels: the network is never built."""
    ck = fake_checkpoint(network={**dataclasses.asdict(TINY), "channels": 10**9})
    ck["model"]["stem.weight"] = torch.zeros(10**9, 0, 3, 3)
    torch.save(ck, tmp_path / "checkpoint.pt")
    with pytest.raises(ValueError, match=r"checkpoint\.pt is not a usable zertz training"):
        export_checkpoint(tmp_path / "checkpoint.pt", tmp_path / "out.pt")
    assert not (tmp_path / "out.pt").exists()


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
