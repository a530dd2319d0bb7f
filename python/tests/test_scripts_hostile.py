"""Hostile run folders given to the run tools (issue "Hostile input, third round"):
scripts/compare-runs.py and scripts/ship-network.py load no pickle, open only regular files,
follow no symbolic link inside a run, and refuse what they cannot read with one line
(``error: ...``, status 2), never a traceback or a hang. And compare-runs finds a run and its
copy the same (the copy's records still name the original folder), and still finds what differs.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
from test_hostile_training import Payload, fake_checkpoint
from test_training import tiny_text

from zertz.exported import export, load_network, read_metadata
from zertz.training import parse_config, train

REPO = Path(__file__).resolve().parents[2]
COMMIT = "0123456789abcdef0123456789abcdef01234567"

pytestmark = pytest.mark.engine


def script(name: str) -> ModuleType:
    """``scripts/NAME.py`` as a module (its ``__main__`` part not run)."""
    path = REPO / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name.replace("-", "_"), path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


compare_runs = script("compare-runs")
ship_network = script("ship-network")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished tiny run of one iteration (about 15 s on two cores); tests copy it."""
    folder = tmp_path_factory.mktemp("scripts") / "run"
    train(parse_config(tiny_text(run__iterations="1")), folder, log=lambda _: None)
    return folder


def copy(run: Path, to: Path) -> Path:
    """A copy of ``run`` as ``cp -a`` makes it (its records still name ``run``)."""
    return Path(shutil.copytree(run, to, symlinks=True))


def compare(
    capsys: pytest.CaptureFixture[str], *folders: Path | str
) -> tuple[int, list[str], list[str]]:
    """compare-runs.py on ``folders``: its status, and its stdout and stderr lines."""
    capsys.readouterr()
    try:
        status: int = compare_runs.cli([str(f) for f in folders])
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return status, out.splitlines(), err.splitlines()


def ship(capsys: pytest.CaptureFixture[str], *args: Path | str) -> tuple[int, str]:
    """ship-network.py with ``args``: its status and stderr."""
    capsys.readouterr()
    try:
        ship_network.main([str(a) for a in args])
        status = 0
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    return status, capsys.readouterr().err


def one_error(err: list[str] | str, *words: str) -> str:
    """The one ``error: ...`` line of ``err``, which holds ``words``."""
    lines = err.splitlines() if isinstance(err, str) else err
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert "Traceback" not in lines[0]
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


# ------------------------------------------------------------------------------- compare-runs


def test_a_copy_compares_the_same(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy's metrics and match records name the original folder (``nn:RUN/models/...``,
    ``RUN/matches/...``): they are read as the run's own paths, as the original's are."""
    other = copy(run, tmp_path / "copy")
    assert str(run) in (other / "metrics.jsonl").read_text()
    status, out, err = compare(capsys, run, other)
    assert (status, out[-1], err) == (0, "no difference", [])
    assert "same    metrics.jsonl" in out
    assert "same    matches/iter-0001-previous.jsonl" in out
    # Both ways, and with relative paths.
    monkeypatch.chdir(tmp_path)
    status, out, _ = compare(capsys, "copy", run)
    assert (status, out[-1]) == (0, "no difference")


def test_what_differs_is_still_found(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A weight, a game record's line, a path that is not the run's, an optimizer moment of the
    checkpoint: each is a difference."""
    other = copy(run, tmp_path / "copy")
    model = other / "models" / "iter-0001.safetensors"
    net = load_network(model)
    with torch.no_grad():
        net.stem.weight.view(-1)[0] += 1e-6
    export(net, model, step=read_metadata(model)["step"])
    games = other / "shards" / "iter-0000" / "c0" / "games-00.jsonl"
    first, *rest = games.read_text().splitlines()
    record = json.loads(first)
    record["moves"] = record["moves"][:-1]
    games.write_text("\n".join([json.dumps(record), *rest]) + "\n")
    match = other / "matches" / "iter-0001-random.jsonl"
    match.write_text(match.read_text().replace(f"nn:{run}/", "nn:/elsewhere/"))
    ck = torch.load(other / "checkpoint.pt", weights_only=True)
    moments = [v for s in ck["optimizer"]["state"].values() for v in s.values()]
    next(m for m in moments if m.is_floating_point() and m.dim()).view(-1)[0] += 1
    torch.save(ck, other / "checkpoint.pt")

    status, out, err = compare(capsys, run, other)
    assert (status, err) == (1, [])
    assert sorted(line for line in out if line.startswith("DIFFERS")) == [
        "DIFFERS checkpoint.pt",
        "DIFFERS matches/iter-0001-random.jsonl",
        "DIFFERS models/iter-0001.safetensors",
        "DIFFERS shards/iter-0000/c0/games-00.jsonl",
    ]
    assert out[-1].startswith("4 of ")


def test_a_pickle_checkpoint_runs_nothing(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint whose unpickling would run a command, in one folder of the two: refused with
    one line, the other files compared, nothing run."""
    other = copy(run, tmp_path / "copy")
    marker = tmp_path / "pwned"
    torch.save(fake_checkpoint(state=Payload(marker)), other / "checkpoint.pt")
    status, out, err = compare(capsys, run, other)
    assert status == 2
    one_error(err, f"{other}/checkpoint.pt", "refused")
    assert "ERROR   checkpoint.pt" in out and "same    metrics.jsonl" in out
    assert not marker.exists()
    # And the same file shipped.
    status, said = ship(capsys, other, "--commit", COMMIT, "--out", tmp_path / "out.safetensors")
    assert status == 2
    one_error(said, f"{other}/checkpoint.pt", "refused")
    assert not marker.exists() and not (tmp_path / "out.safetensors").exists()


@pytest.mark.parametrize(
    ("name", "contents", "words"),
    [
        # A line torn by a kill, after the whole ones.
        pytest.param("metrics.jsonl", b'+{"iteration": 2, "st', ["line 2 is not"], id="torn"),
        pytest.param(
            "metrics.jsonl", b'+{"iteration": 2, "loss": "\xff"}\n', ["not UTF-8"], id="latin1"
        ),
        pytest.param(
            "shards/iter-0000/c1/games-00.jsonl", b"\x80abc\n", ["not UTF-8"], id="records"
        ),
        pytest.param("shards/iter-0000/c1/summary.json", b'{"games": ', ["not JSON"], id="summary"),
        pytest.param(
            "shards/iter-0000/c1/summary.json", b"[" * 100_000, ["not JSON"], id="deep-json"
        ),
        pytest.param(
            "models/iter-0001.safetensors", b"garbage", ["not an exported network"], id="model"
        ),
        pytest.param(
            "shards/iter-0000/c0/shard-00-00000.npz", b"PK\x03\x04garbage", [".npz"], id="npz"
        ),
        pytest.param(
            "checkpoint.pt", b"garbage", ["not a zertz training checkpoint"], id="checkpoint"
        ),
    ],
)
def test_a_file_that_cannot_be_read_is_named(
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    contents: bytes,
    words: list[str],
) -> None:
    """Each is named in one line, the other files compared, status 2 (``+`` appends)."""
    other = copy(run, tmp_path / "copy")
    if contents.startswith(b"+"):
        with open(other / name, "ab") as f:
            f.write(contents[1:])
    else:
        (other / name).write_bytes(contents)
    status, out, err = compare(capsys, run, other)
    assert status == 2
    one_error(err, f"{other}/{name}", *words)
    assert f"ERROR   {name}" in out
    compared = {line.split()[1] for line in out if line.startswith(("same ", "DIFFERS "))}
    assert len(compared) == 12 and name not in compared
    assert "DIFFERS" not in "".join(out)
    assert "could not be read" in out[-1]


def test_links_and_special_files_are_never_followed_or_opened(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Links that loop, a link to a folder above, a FIFO and a name with control characters
    and undecodable bytes: listed as what they are, none followed or opened."""
    a, b = copy(run, tmp_path / "a"), copy(run, tmp_path / "b")
    for folder in (a, b):
        (folder / "loop").symlink_to("loop")
        (folder / "models" / "up").symlink_to("..")
        os.mkfifo(folder / "shards" / "pipe")
    # A link where the other folder has a file: a difference, though it leads to the same bytes.
    (b / "metrics.jsonl").unlink()
    (b / "metrics.jsonl").symlink_to(a / "metrics.jsonl")
    (b / os.fsdecode(b"odd\x1b]0;title\x07\xff.json")).write_text("{}")
    status, out, err = compare(capsys, a, b)
    assert (status, err) == (1, [])
    assert "same    loop (a symlink, not followed or opened)" in out
    assert "same    models/up (a symlink, not followed or opened)" in out
    assert "same    shards/pipe (a FIFO, not followed or opened)" in out
    assert f"DIFFERS metrics.jsonl (a regular file in {a}, a symlink in {b})" in out
    assert f"only in {b}: odd\\x1b]0;title\\x07\\udcff.json" in out
    assert all(line.isprintable() for line in out)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        pytest.param(["{missing}", "{run}"], ["{missing} does not exist"], id="missing"),
        pytest.param(
            ["{run}", "{run}/metrics.jsonl"], ["metrics.jsonl is not a folder"], id="file"
        ),
        pytest.param(["{run}"], ["usage"], id="one-folder"),
    ],
)
def test_compare_refuses_what_is_not_two_folders(
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    words: list[str],
) -> None:
    def fill(text: str) -> str:
        return text.format(run=run, missing=tmp_path / "missing")

    status, out, err = compare(capsys, *map(fill, args))
    assert (status, out) == (2, [])
    one_error(err, *map(fill, words))


# ------------------------------------------------------------------------------- ship-network


def test_ship_network(run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    figures = tmp_path / "figures.json"
    figures.write_text('{"alphabeta": {"score": 0.6}}')
    out = tmp_path / "builtin.safetensors"
    assert ship(capsys, run, "--commit", COMMIT, "--out", out, "--figures", figures) == (0, "")
    meta = read_metadata(out)
    assert meta["sha256"] == read_metadata(run / "models" / "iter-0001.safetensors")["sha256"]
    provenance: dict[str, Any] = meta["provenance"]
    assert provenance["commit"] == COMMIT and provenance["iterations"] == 1
    assert provenance["figures"]["alphabeta"] == {"score": 0.6}
    assert set(provenance["figures"]["final_evaluation"]) == {"random"}


def torn_final_line(run: Path) -> None:
    metrics = run / "metrics.jsonl"
    metrics.write_bytes(metrics.read_bytes()[:-40])


def metrics_loop(run: Path) -> None:
    (run / "metrics.jsonl").unlink()
    (run / "metrics.jsonl").symlink_to("metrics.jsonl")


def write(name: str, contents: bytes) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / name).write_bytes(contents)

    return damage


def remove(name: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / name).unlink()

    return damage


def rewrite_final_line(**changes: Any) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        metrics = run / "metrics.jsonl"
        *lines, last = metrics.read_text().splitlines()
        metrics.write_text("\n".join([*lines, json.dumps({**json.loads(last), **changes})]))

    return damage


def case(
    name: str, args: list[str], words: str, damage: Callable[[Path], None] | None = None
) -> Any:
    return pytest.param(damage, args, words, id=name)


@pytest.mark.parametrize(
    ("damage", "args", "words"),
    [
        case("no-run", ["{tmp}/missing"], "missing does not exist"),
        case("run-is-a-file", ["{run}/metrics.jsonl"], "metrics.jsonl is not a folder"),
        case("commit", ["{run}", "--commit", "abc"], "--commit must be a full commit hash"),
        case("no-commit", ["{run}", "--commit"], "usage"),
        case("figures-list", ["{run}", "--figures", "{tmp}/list.json"], "list.json is not a JSON"),
        case("figures-torn", ["{run}", "--figures", "{tmp}/torn.json"], "torn.json is not JSON"),
        case("figures-latin1", ["{run}", "--figures", "{tmp}/l1.json"], "l1.json is not UTF-8"),
        case("figures-nan", ["{run}", "--figures", "{tmp}/nan.json"], "nan.json holds a NaN"),
        case("figures-folder", ["{run}", "--figures", "{tmp}"], " is a folder, not a file"),
        case("figures-missing", ["{run}", "--figures", "{tmp}/no.json"], "no.json does not exist"),
        case("out-folder", ["{run}", "--out", "{tmp}"], "exists and is not a regular file"),
        case("metrics-torn", ["{run}"], "metrics.jsonl: line 1 is not JSON", torn_final_line),
        case(
            "metrics-latin1",
            ["{run}"],
            "metrics.jsonl is not UTF-8",
            write("metrics.jsonl", b'{"final": "\xff"}\n'),
        ),
        case(
            "metrics-list",
            ["{run}"],
            "metrics.jsonl: line 1 is not a JSON object",
            write("metrics.jsonl", b"[1]\n"),
        ),
        case(
            "unfinished",
            ["{run}"],
            "has not finished",
            write("metrics.jsonl", b'{"iteration": 1}\n'),
        ),
        case("step", ["{run}"], "line 1 has no step count", rewrite_final_line(step="4")),
        case(
            "evaluation", ["{run}"], "line 1 has no evaluation", rewrite_final_line(evaluation=[])
        ),
        case(
            "match",
            ["{run}"],
            "evaluation 'x' is not a match",
            rewrite_final_line(evaluation={"x": 1}),
        ),
        case(
            "metrics-loop",
            ["{run}"],
            "metrics.jsonl cannot be read (Too many levels of symbolic links)",
            metrics_loop,
        ),
        case("no-config", ["{run}"], "config.toml does not exist", remove("config.toml")),
        case(
            "checkpoint",
            ["{run}"],
            "checkpoint.pt is not a zertz training checkpoint",
            write("checkpoint.pt", b"garbage"),
        ),
        case(
            "average",
            ["{run}"],
            "iter-0001-average.safetensors is not an exported zertz model",
            write("models/iter-0001-average.safetensors", b"garbage"),
        ),
        case(
            "torchscript-average",
            ["{run}"],
            "iter-0001-average.pt is a network of an older zertz (TorchScript): convert it first "
            "(python -m zertz convert-network",
            write("models/iter-0001-average.pt", b"PK\x03\x04"),
        ),
        case("out-pt", ["{run}", "--out", "{tmp}/out.pt"], "a network file is named .safetensors"),
    ],
)
def test_ship_network_refuses_with_one_line(
    run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], None] | None,
    args: list[str],
    words: str,
) -> None:
    other = copy(run, tmp_path / "run")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "torn.json").write_text('{"alphabeta": ')
    (tmp_path / "l1.json").write_bytes(b'{"\xe9": 1}')
    (tmp_path / "nan.json").write_text('{"elo": NaN}')
    if damage is not None:
        damage(other)
    if "--commit" not in args:
        args = [*args, "--commit", COMMIT]
    if "--out" not in args:
        args = [*args, "--out", "{tmp}/out.safetensors"]
    filled = [a.format(run=other, tmp=tmp_path) for a in args]
    status, err = ship(capsys, *filled)
    assert status == 2
    one_error(err, words)
    assert not list(tmp_path.glob("out.*"))


@pytest.mark.parametrize("fifo", ["figures", "metrics"])
def test_ship_network_opens_no_fifo(run: Path, tmp_path: Path, fifo: str) -> None:
    """A FIFO would block its opening forever: it is refused without being opened."""
    other = copy(run, tmp_path / "run")
    args = [other, "--commit", COMMIT, "--out", tmp_path / "out.safetensors"]
    if fifo == "figures":
        os.mkfifo(tmp_path / "figures.json")
        args += ["--figures", tmp_path / "figures.json"]
    else:
        (other / "metrics.jsonl").unlink()
        os.mkfifo(other / "metrics.jsonl")
    proc = subprocess.run(
        [sys.executable, REPO / "scripts" / "ship-network.py", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc
    one_error(proc.stderr, "is not a regular file")


# ------------------------------------------------------------------------------------- ladder

ladder = script("ladder")


def run_ladder(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str, list[tuple[str, str]]]:
    """ladder.py with ``args``, its matches a stand-in that records them: its status, stdout,
    stderr and the pairs it played."""
    played: list[tuple[str, str]] = []

    def match(a: str, b: str, **settings: Any) -> dict[str, int]:
        played.append((a, b))
        return {"wins": settings["games"] // 2, "draws": 0, "losses": settings["games"] // 2}

    monkeypatch.setattr(ladder.zertz, "match", match)
    capsys.readouterr()
    try:
        ladder.main(list(args))
        status = 0
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err, played


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--games", "0"], "--games must be a positive even count"),
        (["--games", "3"], "--games must be a positive even count"),
        (["--games", "-2"], "--games: must not be negative"),
        (["--games", "x"], "invalid int value: 'x'"),
        (["--threads", "100000"], "--threads: must be at most"),
        (["--threads", "-1"], "--threads: must not be negative"),
        (["--board", "38"], "--board: no 38-ring board"),
        (["--opening-actions", "-1"], "--opening-actions: must not be negative"),
        (["--seed", "-1"], "--seed: must not be negative"),
        (["--players", "random", "random"], "names one player twice"),
        # One player in two spellings (Rust's canonical specs are compared).
        (["--players", "random", "mcts:100", "MCTS: 100"], "'mcts:100' and 'MCTS: 100'"),
        (["--players", "random"], "at least two players, not 1"),
        (["--players", "random", "greedy", "mcts:0"], "bad player 'mcts:0'"),
        (["--players", "random", "nn:/nonexistent"], "'nn:/nonexistent' cannot play"),
        # Named by the user, the built-in network on a board it does not play is refused.
        (["--players", "random", "nn:builtin", "--board", "61"], "'nn:builtin' cannot play"),
        (["--players", "random", 'cmd:/bin/sh -c "exit 0"'], "ended before it answered"),
        (["--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_ladder_checks_every_argument_and_player_before_the_first_game(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    words: str,
) -> None:
    status, out, err, played = run_ladder(monkeypatch, capsys, *args)
    assert status == 2
    one_error(err, words)
    assert played == [], "no match was played"
    assert out == "", "no rating table"


def test_ladder_leaves_out_the_default_players_that_cannot_play_the_board(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default players with ``--board 61``: the built-in network (37 rings only) is left
    out with a note, the others play every pair."""
    status, out, err, played = run_ladder(monkeypatch, capsys, "--board", "61", "--games", "2")
    assert status == 0, err
    left = [p for p in ladder.DEFAULT_PLAYERS if p.startswith("nn:builtin")]
    assert left
    kept = [p for p in ladder.DEFAULT_PLAYERS if p not in left]
    assert f"ladder: leaving out {left[0]} (" in err
    assert played == [(a, b) for i, a in enumerate(kept) for b in kept[i + 1 :]]
    for name in kept:
        assert f"| `{name}` |" in out
    assert f"`{left[0]}`" not in out


# ---------------------------------------------------------------------- bounds and a full disk


def grow_past_bound(path: Path, kind: str) -> str:
    """Makes ``path`` one byte past the bound of its kind (a sparse file); the bound in words."""
    from zertz.files import LIMITS, size_text

    with open(path, "r+b") as f:
        f.truncate(LIMITS[kind] + 1)
    return size_text(LIMITS[kind])


def test_ship_network_refuses_metrics_past_their_bound(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = copy(run, tmp_path / "run")
    bound = grow_past_bound(other / "metrics.jsonl", "metrics")
    status, err = ship(capsys, other, "--commit", COMMIT, "--out", tmp_path / "out.safetensors")
    assert status == 2
    one_error(err, f"{other / 'metrics.jsonl'}: ", f"the {bound} that a metrics file may have")
    assert not (tmp_path / "out.safetensors").exists()


def test_ship_network_says_a_full_disk_in_one_line(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ENOSPC simulated on the write of --out: one line naming it and the room it needs."""
    from test_hostile_training import no_room

    other = copy(run, tmp_path / "run")
    out = tmp_path / "out.safetensors"
    no_room(monkeypatch)
    status, err = ship(capsys, other, "--commit", COMMIT, "--out", out)
    assert status == 2
    one_error(err, f"cannot write {out}: the disk is full (", " needed, ")
    assert not out.exists() and not list(tmp_path.glob(".out.safetensors.partial-*"))


def test_compare_names_metrics_past_their_bound(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Metrics past their bound are named in one line and not read; the rest is compared."""
    other = copy(run, tmp_path / "run")
    bound = grow_past_bound(other / "metrics.jsonl", "metrics")
    status, out, err = compare(capsys, run, other)
    assert status == 2
    assert "ERROR   metrics.jsonl" in out and "same    checkpoint.pt" in out
    one_error(err, f"{other / 'metrics.jsonl'}: ", f"the {bound} that a metrics file may have")
