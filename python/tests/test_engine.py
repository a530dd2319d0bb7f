"""The engine in-process: zertz.selfplay with exported networks, zertz.match, zertz.selfplay_config
and zertz.parse_player; the same results as the zertz program, errors as the right exceptions,
Ctrl-C, and torch's threads left as they were."""

from __future__ import annotations

import fnmatch
import json
import math
import os
import signal
import subprocess
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import torch

import zertz
import zertz_engine
from zertz._zertz import shard_glob
from zertz.exported import (
    export,
    load_network,
    metadata_of,
    network_tensors,
    read_metadata,
)
from zertz.nn import NetConfig, ZertzNet
from zertz_engine import CODE_FORMAT_VERSION

from conftest import write_network_file

TINY = NetConfig.preset("tiny")
SMALL_SELFPLAY = {
    "games_per_worker": 2,
    "full_simulations": 8,
    "fast_simulations": 4,
    "max_actions": 80,
}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("engine")
    net = ZertzNet(TINY, boards=[37, 61]).eval()
    return export(net, folder / "model.safetensors", boards=[37, 61])


def test_selfplay_with_a_network_in_process(model: Path, tmp_path: Path) -> None:
    summary = zertz.selfplay(
        tmp_path / "run", model=model, config=SMALL_SELFPLAY, games=3, seed=5, device="cpu"
    )
    assert summary["games"] == 3 and summary["samples"] > 0
    assert summary["network_seconds"] > 0 and 0 < summary["network_share"] <= 1.0
    assert summary["search"] == zertz.search_presets()["default"]
    data = zertz.load_shards(summary["shards"], zertz.action_space_size(37))
    assert len(data["value"]) == summary["samples"]
    # A board the network knows besides 37, and a dict with a [search] table.
    config = {**SMALL_SELFPLAY, "board": 61, "search": {"preset": "network", "c_puct": 2.0}}
    summary = zertz.selfplay(tmp_path / "r61", model=model, config=config, games=1, device="cpu")
    assert summary["search"] == {**zertz.search_presets()["network"], "c_puct": 2.0}


def test_shards_hold_each_sides_final_captures(model: Path, tmp_path: Path) -> None:
    """Every sample's auxiliary target is what its game's record says each side held at the
    end, the mover's first."""
    summary = zertz.selfplay(
        tmp_path / "run", model=model, config=SMALL_SELFPLAY, games=3, seed=5, device="cpu"
    )
    data = zertz.load_shards(summary["shards"], zertz.action_space_size(37))
    records = {
        r["game"]: r["captures"]
        for path in sorted((tmp_path / "run").glob("games-*.jsonl"))
        for r in zertz.load_records(path)
    }
    assert data["final_captures"].shape == (summary["samples"], 6)
    for game, to_play, finals in zip(
        data["game_id"], data["to_play"], data["final_captures"], strict=True
    ):
        mover, other = records[int(game)][int(to_play)], records[int(game)][1 - int(to_play)]
        assert finals.tolist() == [*mover, *other]
    assert data["final_captures"].sum() > 0


def test_selfplay_equals_the_program(model: Path, tmp_path: Path, program: Path) -> None:
    """The same settings and seed give the same games in-process and in `zertz selfplay`."""
    summary = zertz.selfplay(
        tmp_path / "py", model=model, config=SMALL_SELFPLAY, games=2, seed=9, device="cpu"
    )
    config = tmp_path / "c.toml"
    config.write_text("".join(f"{k} = {v}\n" for k, v in SMALL_SELFPLAY.items()))
    out = subprocess.run(
        [program, "selfplay", "--config", config, "--model", model, "--games", "2",
         "--seed", "9", "--device", "cpu", "--out", tmp_path / "cli", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    line = json.loads(out.strip().splitlines()[-1])
    for key in ("games", "samples", "actions", "evaluations", "first_wins", "second_wins"):
        assert summary[key] == line[key], key
    py = zertz.load_shards(summary["shards"], zertz.action_space_size(37))
    cli = zertz.load_shards(line["shards"], zertz.action_space_size(37))
    for key in ("planes", "policy", "value", "root_value"):
        np.testing.assert_array_equal(py[key], cli[key], err_msg=key)


def test_match_in_process_equals_the_program(model: Path, tmp_path: Path, program: Path) -> None:
    out = tmp_path / "games.jsonl"
    spec = f"nn:{model}:8"
    result = zertz.match(spec, "random", games=4, threads=2, seed=3, device="cpu", out=out)
    assert result["a"] == spec and result["b"] == "random" and result["games"] == 4
    assert result["wins"] + result["draws"] + result["losses"] == 4
    assert result["elo_low"] <= result["elo"] <= result["elo_high"]
    assert len(out.read_text().splitlines()) == 4
    line = subprocess.run(
        [program, "match", "--player", spec, "--player", "random", "--games", "4",
         "--threads", "2", "--seed", "3", "--device", "cpu", "--json"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    cli = json.loads(line.strip().splitlines()[-1])
    assert set(cli) == set(result)
    for key in ("wins", "draws", "losses", "score", "elo"):
        assert cli[key] == result[key], key
    # Built-in players need no network; 61 rings, blitz.
    r = zertz.match("greedy", "random", games=2, board=61, blitz=True, threads=1)
    assert (r["board"], r["blitz"], r["games"]) == (61, True, 2)


def test_engine_errors_are_the_right_exceptions(model: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no-such\.safetensors"):
        zertz.selfplay(
            tmp_path / "a", model=tmp_path / "no-such.safetensors", config=SMALL_SELFPLAY
        )
    with pytest.raises(ValueError, match=r"37.*61|61.*37"):
        zertz.selfplay(tmp_path / "b", model=model, config={**SMALL_SELFPLAY, "board": 48})
    with pytest.raises(ValueError, match="an evaluator or a model, not both"):
        zertz.selfplay(tmp_path / "c", "rollout", model=model)
    with pytest.raises(ValueError, match="not a device"):
        zertz.selfplay(tmp_path / "d", model=model, device="tpu")
    # The inference settings' declared range (zertz_model::Inference), in its words.
    with pytest.raises(ValueError, match=r"^inference_threads: must be between 1 and 64$"):
        zertz.selfplay(tmp_path / "d", model=model, inference_threads=0)
    # Out of any thread count's range: named, not an OverflowError.
    for threads in (-1, 2**40):
        with pytest.raises(ValueError, match=f"^inference_threads: .*{threads}"):
            zertz.selfplay(tmp_path / "d", model=model, inference_threads=threads)
        with pytest.raises(ValueError, match="inference_threads"):
            zertz.match("random", "random", games=2, inference_threads=threads)
    with pytest.raises(ValueError, match="alphazero"):
        zertz.match("alphazero", "random")
    with pytest.raises(FileNotFoundError, match=r"no-such\.safetensors"):
        zertz.match(f"nn:{tmp_path / 'no-such.safetensors'}", "random", games=2)
    with pytest.raises(ValueError, match="threads"):
        zertz.match("random", "random", threads=100_000)
    with pytest.raises(ValueError, match="max_actions"):
        zertz.match("random", "random", max_actions=0)
    for bad in ("b", "d"):
        assert not (tmp_path / bad).exists()


def network_state(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of the network file ``path``, by name (copies, to change)."""
    net = load_network(path)
    return {name: net.state_dict()[name].clone() for name, _, _ in network_tensors(net)}


def test_a_network_file_with_nan_weights_is_refused_before_it_plays(
    model: Path, tmp_path: Path
) -> None:
    """The engine checks the weights when it reads the file: a NaN weight makes a bad file
    (ValueError naming it and the tensor), before any game or self-play output."""
    meta = read_metadata(model)
    del meta["sha256"]
    state = network_state(model)
    state["stem.weight"][0, 0, 0, 0] = math.nan
    path = write_network_file(tmp_path / "nan.safetensors", state, meta)
    with pytest.raises(ValueError, match=r"nan\.safetensors .*stem\.weight holds NaN"):
        zertz.match(f"nn:{path}:8", "random", games=2, threads=1, device="cpu")
    with pytest.raises(ValueError, match=r"nan\.safetensors .*stem\.weight holds NaN"):
        zertz.selfplay(tmp_path / "sp", model=path, config=SMALL_SELFPLAY, games=1, device="cpu")
    assert not (tmp_path / "sp").exists()


def test_a_nan_network_fails_a_match_and_selfplay_with_a_runtime_error(
    model: Path, tmp_path: Path
) -> None:
    """Finite weights so large that the answers overflow to NaN: the work fails while it plays
    (RuntimeError), not its settings. So does a trusted program (TorchScript) of NaN weights."""
    meta = read_metadata(model)
    del meta["sha256"]
    state = network_state(model)
    state["stem.weight"].fill_(3e38)
    path = write_network_file(tmp_path / "big.safetensors", state, meta)
    with pytest.raises(RuntimeError, match=r"big\.safetensors.*NaN/non-finite"):
        zertz.match(f"nn:{path}:8", "random", games=2, threads=1, device="cpu")
    # Self-play classifies it as a match does: the work failed, not its settings.
    with pytest.raises(RuntimeError, match=r"big\.safetensors.*NaN/non-finite"):
        zertz.selfplay(tmp_path / "sp", model=path, config=SMALL_SELFPLAY, games=1, device="cpu")
    # A program of an older zertz, trusted.
    net = ZertzNet(TINY, boards=[37]).eval()
    net.metadata_json = json.dumps(
        metadata_of(net, step=0, name="nan", boards=[37], format_version=CODE_FORMAT_VERSION)
    )
    with torch.no_grad():
        for p in net.parameters():
            p.fill_(math.nan)
    program = tmp_path / "nan.pt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(net), str(program))
    with pytest.raises(RuntimeError, match=r"nan\.pt.*NaN/non-finite"):
        zertz.match(f"nn:{program}:8", "random", games=2, threads=1, device="cpu", trust_code=True)
    with pytest.raises(RuntimeError, match=r"nan\.pt.*NaN/non-finite"):
        zertz.selfplay(
            tmp_path / "sp-program",
            model=program,
            config=SMALL_SELFPLAY,
            games=1,
            device="cpu",
            trust_code=True,
        )


def test_settings_come_from_the_engine(tmp_path: Path) -> None:
    defaults = zertz.selfplay_config()
    assert defaults["board"] == 37 and defaults["search"] == {}
    settings = zertz.selfplay_config({"games": 8, "search": {"preset": "rollout"}})
    assert settings["games"] == 8 and settings["search"] == {"preset": "rollout"}
    path = tmp_path / "c.toml"
    path.write_text("games = 5\n[search]\nc_puct = 2.0\n")
    assert zertz.selfplay_config(path)["search"] == {"c_puct": 2.0}
    with pytest.raises(ValueError, match=r'unknown key "gmaes" \(the keys: board, blitz, games'):
        zertz.selfplay_config({"gmaes": 8})
    with pytest.raises(ValueError, match=r"search\.c_puct is not finite"):
        zertz.selfplay_config({"search": {"c_puct": float("nan")}})
    with pytest.raises(ValueError, match="full_simulations"):
        zertz.selfplay_config({"full_simulations": 1})
    with pytest.raises(TypeError, match="config must be a path, a dict or None"):
        zertz.selfplay_config(3)  # type: ignore[arg-type]
    assert zertz.parse_player(" MCTS:50 ") == {
        "name": "mcts:50",
        "model": None,
        "simulations": 50,
        "precision": None,
        "gumbel": None,
        "depth": None,
        "time": None,
        "program": None,
    }
    assert zertz.parse_player("nn:m.pt:8:BF16:gumbel=16") == {
        "name": "nn:m.pt:8:bf16:gumbel=16",
        "model": "m.pt",
        "simulations": 8,
        "precision": "bf16",
        "gumbel": 16,
        "depth": None,
        "time": None,
        "program": None,
    }
    assert zertz.parse_player("nn:a:b/m.pt:7")["model"] == "a:b/m.pt"
    assert zertz.parse_player('cmd:"my engine" --x "a b"')["program"] == "my engine"
    # A part that belongs nowhere is named, not read as part of the model's file name.
    with pytest.raises(ValueError, match="'fp8' is not a simulation count"):
        zertz.parse_player("nn:builtin:fp8")
    with pytest.raises(ValueError, match=r"'time=0\.01' must end the spec"):
        zertz.parse_player("nn:builtin:time=0.01:gumbel=4")
    assert zertz.parse_player("greedy")["simulations"] is None
    with pytest.raises(ValueError, match="bad player"):
        zertz.parse_player("mcts:0")


def test_torch_threads_are_left_as_they_were(model: Path, tmp_path: Path) -> None:
    """The engine runs each CPU worker's network with one libtorch thread; torch's own count (the
    same libtorch) is back where it was afterwards, so training in the same process keeps it."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        zertz.selfplay(tmp_path / "r", model=model, config=SMALL_SELFPLAY, games=2, threads=2,
                       device="cpu")  # fmt: skip
        assert torch.get_num_threads() == 2
        zertz.match(f"nn:{model}:4", "random", games=2, threads=2, device="cpu")
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_players_search_threads_leave_torchs_threads_as_they_were() -> None:
    """A network's player on several search threads searches as deterministically as on one (its
    batches are cut into parts, not changed), and neither changes torch's own thread count on the
    thread that asked (each forward pass sets its own thread's)."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        game = zertz.Game(37)
        one = zertz_engine.Bot("nn:builtin:64", search_threads=1, device="cpu")
        two = [zertz_engine.Bot("nn:builtin:64", search_threads=2, device="cpu") for _ in "ab"]
        assert game.legal_action_mask()[one.choose(game)]
        assert two[0].choose(game) == two[1].choose(game)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
    for bad in (0, -1, 10_000):
        with pytest.raises(ValueError, match="search_threads must be from 1 to 256"):
            zertz_engine.Bot("nn:builtin", search_threads=bad)


def test_a_match_reports_each_sides_cpu_seconds_and_search_threads() -> None:
    r = zertz.match("nn:builtin:32", "random", games=2, threads=1, device="cpu", search_threads=2)
    assert r["search_threads"] == 2
    a, b = r["a_effort"], r["b_effort"]
    assert set(a) == {"moves", "seconds", "cpu_seconds", "work", "unit"}
    assert a["cpu_seconds"] > 0 and a["cpu_seconds"] > b["cpu_seconds"], (a, b)
    # One game at a time: by default a network's search takes every core.
    r = zertz.match("nn:builtin:8", "random", games=1, threads=1, device="cpu")
    assert r["search_threads"] == len(os.sched_getaffinity(0))
    with pytest.raises(ValueError, match="search_threads: must be at most 256"):
        zertz.match("nn:builtin:8", "random", games=1, search_threads=257)


def test_bench_player_measures_each_position() -> None:
    rows = zertz_engine.bench_player(
        "nn:builtin", boards=[37], search_threads=[1, 2], move_time=0.05, searches=1, device="cpu"
    )
    assert [(r["position"], r["search_threads"]) for r in rows] == [
        (p, t) for t in (1, 2) for p in ("opening", "middle", "endgame")
    ]
    for r in rows:
        assert r["unit"] == "simulations" and r["work"] > 0, r
        assert r["per_cpu_second"] > 0 and r["cpu_seconds"] > 0, r
    with pytest.raises(ValueError, match="does not search here"):
        zertz_engine.bench_player("random", move_time=0.01, searches=1)
    with pytest.raises(ValueError, match="search threads must be from 1 to 256, not 0"):
        zertz_engine.bench_player("mcts:10", search_threads=[0])
    with pytest.raises(ValueError, match="searches must be from 1 to 1000, not 0"):
        zertz_engine.bench_player("mcts:10", searches=0)


#: Seconds a test waits for what must happen at once (a stop, a refusal, a process's end) before
#: it fails: only what never happens takes that long, however busy the machine. (How soon a stop
#: ends a match is a figure of ``scripts/bench-stops.py``.)
NEVER = 60


def test_ctrl_c_stops_a_match() -> None:
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        # Started in the block: however late a busy machine runs it, its Ctrl-C lands here.
        timer.start()
        zertz.match("mcts:2000", "mcts:2000", games=10_000, threads=2)
    timer.join()
    assert time.monotonic() - started < NEVER


def _hanging_program(pidfile: Path, asked: Path | None = None) -> str:
    """A ``cmd:`` player whose program answers ``name`` and ``newgame``, then thinks forever on
    ``genmove`` (first making the file ``asked``, if given); it first starts ``sleep 1000`` and
    writes that process's pid to ``pidfile``."""
    think = f"touch {asked}; sleep 1000" if asked else "sleep 1000"
    script = (
        f'sleep 1000 & echo $! > {pidfile}; while read -r line; do case \\"$line\\" in '
        f"genmove) {think};; name) printf '= fake\\n\\n';; *) printf '=\\n\\n';; esac; done"
    )
    return f'cmd:sh -c "{script}"'


@contextmanager
def _interrupt_when(path: Path) -> Iterator[None]:
    """Sends SIGINT (Ctrl-C) to this process, from a thread of its own, once ``path`` exists
    while the block runs."""
    done = threading.Event()

    def wait() -> None:
        while not done.wait(0.01):
            if path.exists():
                os.kill(os.getpid(), signal.SIGINT)
                return

    watcher = threading.Thread(target=wait, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


def _ended(pidfile: Path) -> bool:
    """Whether the process of ``pidfile`` ended (gone, or a zombie) within ``NEVER`` seconds."""
    pid = pidfile.read_text().strip()
    deadline = time.monotonic() + NEVER
    while time.monotonic() < deadline:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.02)
    return False


def test_ctrl_c_ends_a_program_that_thinks_forever(tmp_path: Path) -> None:
    # Ctrl-C once the program thinks about its move; the match would wait 30 s for its answer.
    pid, asked = tmp_path / "sleep.pid", tmp_path / "asked"
    player = _hanging_program(pid, asked)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt), _interrupt_when(asked):
        zertz.match(player, "random", games=2, threads=1)
    assert asked.exists(), "the program was never asked for a move"
    assert time.monotonic() - started < NEVER
    assert _ended(pid), "the program's own child is ended too"


def test_a_program_past_its_answer_time_fails_the_match(tmp_path: Path) -> None:
    # The answer time holds for ``name`` and ``newgame`` too: long enough for a shell to start on
    # a busy machine.
    pid = tmp_path / "sleep.pid"
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=r"did not answer 'genmove' within 3 s"):
        zertz.match(_hanging_program(pid), "random", games=2, threads=1, answer_time=3.0)
    assert 3 <= time.monotonic() - started < NEVER
    assert _ended(pid)
    # The range's words are its declaration's (zertz_settings::Range), as for every setting.
    for bad in (0.0, -1.0, 1e9):
        with pytest.raises(ValueError, match=r"^answer_time: must be a number of seconds more"):
            zertz.match("random", "random", games=1, answer_time=bad)
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match=r"^answer_time: must be a finite number"):
            zertz.match("random", "random", games=1, answer_time=bad)
    with pytest.raises(TypeError, match="answer_time must be float, not NoneType"):
        zertz.match("random", "random", games=1, answer_time=None)  # type: ignore[arg-type]


def test_parse_player_reads_alphabeta_and_a_time_per_move() -> None:
    assert zertz.parse_player("alphabeta:3") == {
        "name": "alphabeta:3",
        "model": None,
        "simulations": None,
        "precision": None,
        "gumbel": None,
        "depth": 3,
        "time": None,
        "program": None,
    }
    assert zertz.parse_player("alphabeta")["depth"] is None
    timed = zertz.parse_player("mcts:time=0.5")
    assert (timed["name"], timed["time"], timed["depth"]) == ("mcts:1000:time=0.5", 0.5, None)
    deep = zertz.parse_player("alphabeta:4:time=2")
    assert (deep["depth"], deep["time"], deep["simulations"]) == (4, 2.0, None)
    net = zertz.parse_player("nn:m.pt:8:time=1")
    assert (net["model"], net["simulations"], net["time"]) == ("m.pt", 8, 1.0)
    for bad, reason in (
        ("alphabeta:0", "the depth must be an integer from 1 to 64"),
        ("mcts:time=0", "the time per move must be a number of seconds from 0.001 to 3600"),
        ("mcts:time=nan", "not NaN"),
        ("random:time=1", "random does not search"),
        ("mcts:time=1:time=2", "one time per move at most"),
        ("nn:m.pt:gumbel=1", "the Gumbel root's actions"),
    ):
        with pytest.raises(ValueError, match=f"^bad player '{bad}': .*{reason}"):
            zertz.parse_player(bad)


def test_a_match_without_a_time_per_move() -> None:
    r = zertz.match("alphabeta:1", "random", games=2, threads=1, move_time=None)
    assert (r["a"], r["games"], r["move_time"]) == ("alphabeta:1", 2, None)
    assert r["wins"] + r["draws"] + r["losses"] == 2
    a, b = r["a_effort"], r["b_effort"]
    assert set(a) == set(b) == {"moves", "seconds", "cpu_seconds", "work", "unit"}
    assert a["unit"] == "nodes" and a["work"] > 0 and a["moves"] > 0
    assert b["unit"] is None and b["work"] == 0 and b["moves"] > 0


def test_a_match_at_equal_time_per_move() -> None:
    """Each searching player searches for the match's time per move instead of its count: a
    check that the budget is applied, not a timing test (hence the loose bounds)."""
    r = zertz.match("alphabeta", "mcts:100", games=2, threads=2, move_time=0.05)
    assert r["move_time"] == 0.05 and r["games"] == 2
    for side, unit in (("a_effort", "nodes"), ("b_effort", "simulations")):
        effort = r[side]
        assert effort["unit"] == unit and effort["work"] > 0 and effort["moves"] > 0, effort
        per_move = effort["seconds"] / effort["moves"]
        assert 0.02 <= per_move <= 0.5, (side, per_move)


def test_a_bad_time_per_move_is_a_value_error() -> None:
    # The range's words are its declaration's (zertz_settings::Range), as for every setting.
    for bad in (-1.0, 1e9, 3600.5, 0.0001):
        with pytest.raises(
            ValueError, match=r"^move_time: must be 0 or a number of seconds from 0\.001 to 3600$"
        ) as e:
            zertz.match("alphabeta", "random", games=1, move_time=bad)
        assert "\n" not in str(e.value)
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match=r"^move_time: must be a finite number"):
            zertz.match("alphabeta", "random", games=1, move_time=bad)
    # 0, as None, is none (as in a config file).
    r = zertz.match("alphabeta:1", "random", games=2, threads=1, move_time=0.0)
    assert r["move_time"] is None
    with pytest.raises(TypeError):
        zertz.match("alphabeta", "random", games=1, move_time="fast")  # type: ignore[arg-type]


def test_match_output_is_never_replaced_nor_a_fifo_opened(tmp_path: Path) -> None:
    out = tmp_path / "games.jsonl"
    out.write_text("precious\n")
    with pytest.raises(FileExistsError, match="nothing is ever replaced"):
        zertz.match("greedy", "random", games=2, out=out)
    assert out.read_text() == "precious\n"
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    started = time.monotonic()
    with pytest.raises(FileExistsError, match="a FIFO of that name exists"):
        zertz.match("greedy", "random", games=2, out=fifo)
    assert time.monotonic() - started < NEVER
    # A folder that is not there: an error about writing, not reading.
    with pytest.raises(FileNotFoundError, match=r"^cannot write .*none/games\.jsonl"):
        zertz.match("greedy", "random", games=1, out=tmp_path / "none" / "games.jsonl")


def test_shards_follow_the_engines_schema(tmp_path: Path) -> None:
    """The arrays of a written shard are those of zertz.shard_schema(), names and dtypes, in
    order; versions and formats come from the native module."""
    summary = zertz.selfplay(tmp_path / "r", "rollout", config=SMALL_SELFPLAY, games=1)
    schema = zertz.shard_schema()
    # Named as the engine's glob finds them (worker 0's, and any writer's).
    name = Path(summary["shards"][0]).name
    assert fnmatch.fnmatch(name, shard_glob(0)) and fnmatch.fnmatch(name, shard_glob())
    assert not fnmatch.fnmatch(name, shard_glob(1))
    with np.load(summary["shards"][0]) as shard:
        assert shard.files == [a["name"] for a in schema]
        for a in schema:
            assert shard[a["name"]].dtype == np.dtype(a["dtype"]), a
        # The shapes too, read from the schema's letters as zertz.load_shards reads them.
        from zertz.data import _shape

        (c, h, w), g = zertz.observation_shape(37)
        sizes = {"S": shard["planes"].shape[0], "C": c, "H": h, "W": w, "G": g}
        sizes |= {"A": zertz.action_space_size(37), "K": len(shard["policy_index"])}
        for a in schema:
            want = (1,) if a["shape"] == "[1]" else _shape(a["name"], sizes)
            assert shard[a["name"]].shape == want, a
        assert [a["name"] for a in schema if a["since"] > 1] == ["final_captures"]
        renamed = {a["name"]: a["formerly"] for a in schema if a["formerly"]}
        assert renamed == {"legal_action_mask": {"name": "legal_mask", "until": 3}}
        assert int(shard["format_version"][0]) == zertz.SHARD_FORMAT_VERSION
        assert int(shard["encoding_version"][0]) == zertz.ENCODING_VERSION
    assert zertz.MODEL_FORMAT == "zertz-model" and zertz.MODEL_FORMAT_VERSION >= 1


def test_self_play_and_match_records_are_one_type(tmp_path: Path) -> None:
    """Self-play and matches write the same typed record, with the board in every one; they load
    checked and replay."""
    sp = zertz.selfplay(tmp_path / "sp", "rollout", config={**SMALL_SELFPLAY, "board": 48}, games=2)
    files = sorted((tmp_path / "sp").glob("games-*.jsonl"))
    records = [r for f in files for r in zertz.load_records(f)]
    assert len(records) == sp["games"] == 2
    keys = {"game", "board", "blitz", "first_player", "moves", "winner", "end", "captures"}
    for r in records:
        assert set(r) == keys and r["board"] == 48
        game = zertz.Game(48, first_player=r["first_player"])
        for m in r["moves"]:
            game.play(m)
        assert r["end"] in {"win", "resign", "draw", "repetition", "limit"}
    out = tmp_path / "m.jsonl"
    zertz.match("greedy", "random", games=2, board=61, threads=1, out=out)
    played = zertz.load_records(out)
    assert [set(r) for r in played] == [keys | {"players"}] * 2
    assert played[0]["players"] == ["greedy", "random"] and played[1]["players"] == [
        "random",
        "greedy",
    ]
    assert all(r["board"] == 61 for r in played)
    # A line that is not a record, or does not replay, is named.
    bad = tmp_path / "bad.jsonl"
    lines = out.read_text().splitlines()
    bad.write_text(lines[0] + "\n" + lines[1].replace('"moves":["', '"moves":["Wz9,a1","') + "\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: move 1 \(Wz9,a1\) cannot be played"):
        zertz.load_records(bad)
    bad.write_text('{"game": 0, "bord": 37}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: not a game record: unknown field `bord`"):
        zertz.load_records(bad)
    with pytest.raises(FileNotFoundError):
        zertz.load_records(tmp_path / "none.jsonl")


def test_keyword_defaults_are_the_engines() -> None:
    """The defaults that Python's signatures show are the engine's own."""
    import inspect

    match = inspect.signature(zertz.match).parameters
    assert match["device"].default is None and match["inference_threads"].default is None
    assert match["precision"].default is None
    settings = {s["name"]: s["default"] for s in zertz._zertz.match_settings()}
    # One default for the draw cap of matches and self-play (it was 2000 for matches, 1000 for
    # self-play; no real game reaches either).
    selfplay = {s["name"]: s["default"] for s in zertz._zertz.selfplay_settings()}
    assert settings["max_actions"] == selfplay["max_actions"] == zertz.DEFAULT_MAX_ACTIONS == 1000
    assert settings["move_time"] is None and settings["answer_time"] == 30.0
    assert inspect.signature(zertz.selfplay).parameters["precision"].default is None
    # MCTS's settings are its keywords (the stub's are generated from `mcts_settings()`).
    assert inspect.signature(zertz.MCTS).parameters["preset"].default is None
    assert all(s["default"] is None for s in zertz.mcts_settings())
    search = inspect.signature(zertz.MCTS.search).parameters
    assert search["noise_alpha_total"].default is None


def test_precision_of_networks(model: Path, tmp_path: Path) -> None:
    """Networks run in the precision asked for, by keyword or by a player's spec; a precision
    that does not exist is a ValueError before anything runs."""
    a, b = f"nn:{model}:8:bf16", f"nn:{model}:8"
    summary = zertz.match(a, b, games=2, threads=1, device="cpu", precision="fp32")
    assert summary["a"] == a and summary["wins"] + summary["draws"] + summary["losses"] == 2
    played = zertz.selfplay(
        tmp_path / "sp",
        model=model,
        config=SMALL_SELFPLAY,
        games=2,
        threads=1,
        device="cpu",
        precision="bf16",
    )
    assert played["games"] == 2 and played["network_seconds"] > 0
    assert zertz.PRECISIONS == ("auto", "fp32", "bf16", "fp16")
    for precision in zertz.PRECISIONS:
        assert zertz.parse_player(f"nn:m.pt:{precision}")["precision"] == precision
    with pytest.raises(ValueError, match="not a precision"):
        zertz.match(b, "random", games=2, precision="fp8")
    with pytest.raises(ValueError, match="not a precision"):
        zertz.selfplay(tmp_path / "sp2", model=model, games=2, precision="int8")
    assert not (tmp_path / "sp2").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU, CUDA graphs work")
def test_cuda_graphs_on_the_cpu_are_refused(model: Path, tmp_path: Path) -> None:
    """``cuda_graphs=True`` with a network on the CPU is a clear error before any game."""
    with pytest.raises(ValueError, match="CUDA graphs need a CUDA device"):
        zertz.selfplay(tmp_path / "sp", model=model, games=2, device="cpu", cuda_graphs=True)
    assert not (tmp_path / "sp").exists()
    with pytest.raises(ValueError, match="CUDA graphs need a CUDA device"):
        zertz.match(f"nn:{model}:8", "random", games=2, device="cpu", cuda_graphs=True)
    # Where they are left to the engine (None, the default) or turned off, the CPU plays.
    for graphs in (None, False):
        r = zertz.match(f"nn:{model}:4", "random", games=1, device="cpu", cuda_graphs=graphs)
        assert r["wins"] + r["draws"] + r["losses"] == 1


def test_random_model_command_writes_a_model_of_the_preset(tmp_path: Path) -> None:
    """``python -m zertz random-model`` exports a random network of a preset size for
    benchmarks; the engine loads it."""
    from zertz.__main__ import main

    out = tmp_path / "small.safetensors"
    assert main(["random-model", str(out), "--network", "small", "--boards", "37,61"]) == 0
    meta = read_metadata(out)
    assert meta["boards"] == [37, 61] and meta["network"]["channels"] == 64
    assert meta["name"] == "random-small" and meta["marbles"] == ["standard"]
    blitz = tmp_path / "blitz.safetensors"
    assert main(["random-model", str(blitz), "--marbles", "blitz"]) == 0
    assert read_metadata(blitz)["marbles"] == ["blitz"]
    assert main(["random-model", str(blitz), "--marbles", "all"]) == 0
    assert read_metadata(blitz)["marbles"] == ["blitz", "standard"]
    assert load_network(out).net_config() == NetConfig.preset("small")
    bad = tmp_path / "x.safetensors"
    assert main(["random-model", str(bad), "--network", "huge"]) == 2
    assert main(["random-model", str(bad), "--boards", "37,x"]) == 2
    assert main(["random-model", str(bad), "--marbles", "fast"]) == 2
    assert not bad.exists()


def test_the_builtin_network_is_named_nn_builtin_and_readable_as_data() -> None:
    spec = f"nn:{zertz.BUILTIN_MODEL}:50"
    assert zertz.parse_player(spec)["model"] == "builtin"
    # Trained, it beats random players.
    r = zertz.match(spec, "random", games=4, threads=2, seed=1, device="cpu")
    assert r["wins"] >= 3, r
    # The same file, as data: a network file whose metadata says how it was trained.
    meta_json, sha256, tensors = zertz_engine.decode_network(zertz.builtin_model(), "builtin")
    meta = json.loads(meta_json)
    assert meta["format_version"] == zertz.MODEL_FORMAT_VERSION
    assert meta["architecture"] == zertz_engine.ARCHITECTURE == "ZertzNet"
    # Exported before the metadata named marble sets, and converted: the standard ones.
    assert meta["boards"] == [37] and meta["marbles"] == ["standard"]
    assert "[run]" in meta["provenance"]["config"] and len(meta["provenance"]["commit"]) == 40
    assert read_metadata("builtin") == {**meta, "sha256": sha256}
    # For torch: the network of the same weights.
    net = load_network("builtin")
    assert (net.boards, net.marbles, asdict(net.net_config())) == (
        [37],
        ["standard"],
        meta["network"],
    )
    state = net.state_dict()
    for name, shape, data in tensors:
        assert list(state[name].shape) == shape, name
        assert state[name].numpy().astype("<f4").tobytes() == data, name
    # Another board than its own is refused, naming it; so are the blitz marbles (it played
    # them silently).
    with pytest.raises(ValueError, match="builtin"):
        zertz.match(spec, "random", games=2, board=61, threads=1, device="cpu")
    with pytest.raises(ValueError, match=r"trained for the standard marbles.*blitz"):
        zertz.match(spec, "random", games=2, blitz=True, threads=1, device="cpu")
