"""Training from human records: ``zertz dataset`` shards, the human-move benchmark (checked with
an oracle that knows every move played and one that knows none), and pretraining in a run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_training import tiny_text

import zertz
import zertz.__main__
from zertz import DATASET_VERSION
from zertz._zertz import DATASET_FORMAT
from zertz.human import (
    MANIFEST,
    benchmark,
    ceiling,
    dataset_manifest,
    validation_games,
)
from zertz.training import final_table, train
from zertz.training.config import parse_config


@pytest.fixture(scope="module")
def dataset(program: Path, games: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 300 sample records as a dataset, half the games held out for validation."""
    out = tmp_path_factory.mktemp("human") / "data"
    subprocess.run(
        [program, "dataset", games, "--out", out, "--validation", "0.5", "--shard-size", "512"],
        check=True,
        capture_output=True,
    )
    return out


def test_dataset_shards_hold_the_moves_played(dataset: Path) -> None:
    """Every sample's policy is the action played, its value the mover's result."""
    lines = [json.loads(line) for line in (dataset / "games.jsonl").read_text().splitlines()]
    assert len(lines) == 300 and {x["split"] for x in lines} == {"train", "validation"}
    game = next(x for x in lines if x["split"] == "validation" and x["board"] == 37)
    shards = sorted((dataset / "validation").glob("shard-37-*.npz"))
    data = zertz.load_shards(shards, zertz.action_space_size(37))
    rows = np.flatnonzero(data["game_id"] == game["game"])
    g = zertz.Game(37, first_player=game["first_player"])
    for move in game["moves"]:
        g.play(move)
    assert len(rows) == game["samples"] and g.is_over
    replay = zertz.Game(37, first_player=game["first_player"])
    for k, row in enumerate(rows):
        assert data["move_number"][row] == k
        played = int(np.argmax(data["policy"][row]))
        assert data["policy"][row, played] == 1.0 and data["legal_action_mask"][row, played]
        planes, globals_ = replay.encode()
        assert np.array_equal(data["planes"][row], planes)
        assert np.array_equal(data["globals"][row], globals_)
        winner = game["winner"]
        want = 0.0 if winner is None else (1.0 if winner == replay.to_play else -1.0)
        assert data["value"][row] == want
        replay.play(played)


class Oracle(torch.nn.Module):
    """Knows the action played at every position of the first validation game of each board (by
    its encoding: positions repeat across games, openings above all, not within one) and the
    mover's result: the best possible network, or with ``sign=-1`` the worst value head. With
    ``blind``, it knows a placement's colour and ring but ranks every other removal above the one
    played."""

    def __init__(self, dataset: Path, sign: float = 1.0, blind: bool = False) -> None:
        super().__init__()
        self.sign = sign
        self.known: dict[bytes, tuple[int, float, list[int]]] = {}
        first: dict[int, dict[str, Any]] = {}
        for game in validation_games(dataset):
            first.setdefault(game["board"], game)
        for game in first.values():
            g = zertz.Game(game["board"], first_player=game["first_player"])
            for move in game["moves"]:
                mover = g.to_play
                result = (
                    0.0 if game["winner"] is None else (1.0 if game["winner"] == mover else -1.0)
                )
                for _ in range(1 if "x" not in move else move.count("x")):
                    planes, globals_ = g.encode()
                    action = g.legal_actions()[0] if move == "pass" else None
                    hop_or_place = move if "x" not in move else self._next_hop(g, move)
                    index = g.action_index(action or hop_or_place)
                    marble = hop_or_place.split(",")[0]
                    same = [
                        i
                        for a, i in zip(g.legal_actions(), g.legal_action_indices(), strict=True)
                        if blind and "x" not in a and a.split(",")[0] == marble and i != index
                    ]
                    self.known[planes.tobytes() + globals_.tobytes()] = (index, result, same)
                    g.play(index)
        self.size = {b: zertz.action_space_size(b) for b in zertz.BOARDS}

    @staticmethod
    def _next_hop(g: zertz.Game, move: str) -> str:
        """The hop of ``move`` (a chain in notation) that ``g`` is at."""
        cells = move.split("x")
        start = g.chain or cells[0]
        i = cells.index(start)
        return f"{cells[i]}x{cells[i + 1]}"

    def forward(self, planes: torch.Tensor, g: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rings = int(planes[0, 0].sum())
        logits = torch.zeros(len(planes), self.size[rings])
        values = torch.zeros(len(planes))
        for i in range(len(planes)):
            key = planes[i].numpy().tobytes() + g[i].numpy().tobytes()
            if key in self.known:
                index, result, same = self.known[key]
                logits[i, index] = 45.0 if same else 50.0
                logits[i, same] = 50.0
                values[i] = self.sign * result
        return logits, values


def test_human_move_benchmark_with_an_oracle_and_a_uniform_guess(dataset: Path) -> None:
    perfect = benchmark(Oracle(dataset), dataset, max_games=1)
    assert set(perfect) == {37, 48, 61}
    for r in perfect.values():
        assert r["decisions"] > 0 and r["top1"] == 1.0 and r["top5"] == 1.0
        assert r["value"] == 1.0
        assert r["placements"] + r["captures"] == r["decisions"] and r["placements"] > 0
        assert r["place_top1"] == r["marble_top1"] == r["place_top5"] == 1.0
        assert r["capture_top1"] == (1.0 if r["captures"] else 0.0)
    # Right colour and ring, every other removal ranked above the one played: the placements
    # miss, the placements without their removal do not, the captures are unchanged.
    blind = benchmark(Oracle(dataset, blind=True), dataset, max_games=1)
    for board, r in blind.items():
        assert r["placements"] == perfect[board]["placements"] and r["place_top1"] == 0.0
        assert r["marble_top1"] == r["marble_top5"] == 1.0
        assert r["capture_top1"] == perfect[board]["capture_top1"]
        assert r["place_top5"] < 1.0
    worst = benchmark(Oracle(dataset, sign=-1.0), dataset, boards=[37], max_games=1)
    assert set(worst) == {37} and worst[37]["games"] == 1 and worst[37]["value"] == 0.0
    assert worst[37]["top1"] == 1.0

    class Uniform(torch.nn.Module):
        def forward(
            self, planes: torch.Tensor, g: torch.Tensor
        ) -> tuple[torch.Tensor, torch.Tensor]:
            rings = int(planes[0, 0].sum())
            return torch.zeros(len(planes), zertz.action_space_size(rings)), torch.zeros(
                len(planes)
            )

    # Ties count against the played move: a uniform guess is never top-1, and top-5 only where a
    # turn has few moves (placements tie; chains of different lengths do not).
    flat = benchmark(Uniform(), dataset, boards=[37], max_games=1)[37]
    assert flat["top1"] < 0.2 and flat["top5"] < perfect[37]["top5"] and flat["value"] == 0.0


def test_a_run_pretrains_on_records_and_logs_the_benchmark(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tiny_text(run__iterations="1") + (
        f'\n[pretrain]\ndataset = "{dataset}"\nsteps = 30\nboards = [37, 61]\nbatch_size = 32\n'
        "benchmark_games = 3\n"
    )
    cfg = parse_config(text)
    run = tmp_path / "run"
    stats = train(cfg, run, log=lambda _: None)
    assert [s["iteration"] for s in stats] == [0, 1]
    pre = stats[0]
    assert pre["pretrain"] and pre["pretrain_steps"] == 30
    assert set(pre["human"]) == {"37", "61"}
    assert stats[1]["human"] and set(stats[1]["human"]) == {"37", "61"}
    pretrained = run / "models" / "iter-0000.safetensors"
    meta = zertz.exported.read_metadata(pretrained)
    assert meta["boards"] == [37, 61]
    # The command reads the network file back (zertz.load_network) and scores it as the run did.
    command = ["human-moves", "--model", str(pretrained), "--dataset", str(dataset)]
    assert zertz.__main__.main([*command, "--boards", "37,61", "--max-games", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == pre["human"]
    assert "human moves" in final_table(run) and "61 rings: top-1" in final_table(run)
    # Resuming does not pretrain again.
    assert train(cfg, run, log=lambda _: None) == []
    with pytest.raises(ValueError, match=r"pretrain\.steps needs pretrain\.dataset"):
        parse_config(tiny_text() + "\n[pretrain]\nsteps = 5\n")
    missing = tiny_text() + f'\n[pretrain]\ndataset = "{dataset}"\nsteps = 5\nboards = [44]\n'
    with pytest.raises(ValueError, match="no shards of \\[44\\] rings"):
        train(parse_config(missing), tmp_path / "other", log=lambda _: None)


def test_dataset_in_process_equals_the_program(dataset: Path, games: Path, tmp_path: Path) -> None:
    """``zertz.dataset`` writes what ``zertz dataset`` writes; its errors are Python's."""
    s = zertz.dataset([games], tmp_path / "d", validation=0.5, shard_size=512)
    assert s["train_games"] + s["validation_games"] == 300 and s["skipped_files"] == 3
    assert s["failed"] == {} and s["filtered"] == {}
    same = (tmp_path / "d" / "games.jsonl").read_text()
    assert same == (dataset / "games.jsonl").read_text()
    few = zertz.dataset(
        [games], tmp_path / "few", boards=[48], min_turns=30, ends=["capture"], max_games=4
    )
    assert few["train_games"] + few["validation_games"] == 4
    assert set(few["filtered"]) >= {"board", "max_games"}
    with pytest.raises(FileExistsError):
        zertz.dataset([games], tmp_path / "d")
    with pytest.raises(ValueError, match="ends take"):
        zertz.dataset([games], tmp_path / "e", ends=["checkmate"])
    with pytest.raises(ValueError, match="validation"):
        zertz.dataset([games], tmp_path / "f", validation=2.0)
    with pytest.raises(FileNotFoundError):
        zertz.dataset([tmp_path / "none.tar.xz"], tmp_path / "g")
    # The manifest Rust writes is the one this package reads (format and version), with
    # the shards named in the folder.
    manifest = dataset_manifest(tmp_path / "d")
    assert (manifest["format"], manifest["version"]) == (DATASET_FORMAT, DATASET_VERSION)
    assert manifest["summary"]["shards"] == [
        str(Path(p).relative_to(tmp_path / "d")) for p in s["shards"]
    ]
    assert json.loads((dataset / MANIFEST).read_text())["version"] == DATASET_VERSION


def test_a_dataset_that_fails_part_way_leaves_nothing(games: Path, tmp_path: Path) -> None:
    """The records of ``games`` are read, then an archive that is not one ends the build: the
    exception of what failed, with a message that says nothing was left, and nothing is."""
    corrupt = tmp_path / "corrupt.tar.xz"
    corrupt.write_bytes(b"no xz stream")
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"corrupt\.tar\.xz.*nothing was left") as e:
        zertz.dataset([games, corrupt], out)
    assert "\n" not in str(e.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corrupt.tar.xz"]
    # A source that does not exist: refused before anything is written.
    with pytest.raises(FileNotFoundError, match="none"):
        zertz.dataset([games, tmp_path / "none"], tmp_path / "new" / "out")
    assert not (tmp_path / "new").exists()
    # A build of the same folder under way (its temporary folder, of a process that runs).
    (tmp_path / f".busy.partial-{os.getpid()}").mkdir()
    with pytest.raises(FileExistsError, match="another build"):
        zertz.dataset([games], tmp_path / "busy")
    assert not (tmp_path / "busy").exists()


def test_readers_refuse_an_incomplete_dataset(dataset: Path, tmp_path: Path) -> None:
    """A dataset folder without its manifest (a build stopped part-way, or one of an older
    version) or with a manifest of another version is refused by every reader, with one line
    that names the folder and what to do."""
    copy = tmp_path / "copy"
    shutil.copytree(dataset, copy)
    (copy / MANIFEST).unlink()
    for read in (
        lambda: validation_games(copy),
        lambda: ceiling(copy),
        lambda: benchmark(lambda p, g: (torch.zeros(len(p), 1), torch.zeros(len(p))), copy),
    ):
        with pytest.raises(ValueError, match="incomplete dataset") as e:
            read()
        message = str(e.value)
        assert str(copy) in message and "remove" in message and "\n" not in message
    (copy / MANIFEST).write_text(json.dumps({"format": DATASET_FORMAT, "version": 99}))
    with pytest.raises(ValueError, match="format version 99"):
        validation_games(copy)
    (copy / MANIFEST).write_text("{cut")
    with pytest.raises(ValueError, match="not a dataset manifest"):
        validation_games(copy)
    with pytest.raises(FileNotFoundError, match="no such dataset folder"):
        validation_games(tmp_path / "none")


def test_pretraining_refuses_a_dataset_left_by_a_kill(games: Path, tmp_path: Path) -> None:
    """A kill while ``[pretrain]`` makes its dataset once left a folder of some shards and
    games, which the next run used as the dataset. Such a folder (no manifest) is refused now,
    with what to do; once it is removed, the run makes it again (and removes the temporary
    folder a killed build left)."""
    data = tmp_path / "data"
    zertz.dataset([games], data, boards=[37])
    # As the dataset writer before the manifest left it when killed: some of the games.
    (data / MANIFEST).unlink()
    lines = (data / "games.jsonl").read_text().splitlines()
    (data / "games.jsonl").write_text("".join(line + "\n" for line in lines[:20]))
    text = tiny_text(run__iterations="1") + (
        f'\n[pretrain]\ndataset = "{data}"\nrecords = ["{games}"]\nsteps = 5\n'
        "batch_size = 16\nbenchmark_games = 2\n"
    )
    run = tmp_path / "run"
    refused: list[str] = []
    with pytest.raises(ValueError, match="incomplete dataset") as e:
        train(parse_config(text), run, log=refused.append)
    message = str(e.value)
    assert str(data) in message and "remove" in message and "\n" not in message
    assert not any("pretraining:" in line for line in refused), refused
    assert not (run / "checkpoint.pt").exists() and not (run / "metrics.jsonl").exists()

    shutil.rmtree(data)
    killed = tmp_path / ".data.partial-4294967295"
    (killed / "train").mkdir(parents=True)
    log: list[str] = []
    # (A new run folder: the traceback above holds the first one's lock.)
    stats = train(parse_config(text), tmp_path / "again", log=log.append)
    assert stats[0]["pretrain_steps"] == 5
    assert not killed.exists() and any(str(killed) in line for line in log), log
    assert len((data / "games.jsonl").read_text().splitlines()) > 20
    assert dataset_manifest(data)["settings"]["boards"] == [37]


def test_pretrain_makes_its_dataset_from_records(games: Path, tmp_path: Path) -> None:
    """``[pretrain] records`` makes the dataset folder the first time, then uses it."""
    data = tmp_path / "data"
    text = tiny_text(run__iterations="1") + (
        f'\n[pretrain]\ndataset = "{data}"\nrecords = ["{games}"]\nsteps = 5\n'
        "batch_size = 16\nbenchmark_games = 2\n"
    )
    stats = train(parse_config(text), tmp_path / "run", log=lambda _: None)
    assert stats[0]["pretrain_steps"] == 5 and set(stats[0]["human"]) == {"37"}
    lines = (data / "games.jsonl").read_text().splitlines()
    assert lines and all(json.loads(x)["board"] == 37 for x in lines)


def test_ceiling_scores_the_players_own_frequencies(tmp_path: Path) -> None:
    """Six games (written here) open with Wd4,a1 three times, with its mirror image Wd4,d7 once
    and with Bd4,a1 twice; the three Wd4,a1 games go on with Gc3,g1. Each occurrence is predicted
    from the others' moves."""
    first = ["Wd4,a1"] * 3 + ["Wd4,d7", "Bd4,a1", "Bd4,a1"]
    lines = []
    for i, move in enumerate(first):
        moves = [move, "Gc3,g1"] if move == "Wd4,a1" else [move]
        split = "validation" if i % 2 else "train"
        lines.append({"game": i, "split": split, "board": 37, "first_player": "P0", "moves": moves})
    lines.append(
        {"game": 6, "split": "train", "board": 61, "first_player": "P0", "moves": ["Wa1,a2"]}
    )
    (tmp_path / "games.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / MANIFEST).write_text(
        json.dumps({"format": DATASET_FORMAT, "version": DATASET_VERSION})
    )

    # The opening alone: Wd4,a1 (3) is second to Bd4,a1 (2) when one of its own occurrences is
    # left out (a tie counts against it), Wd4,d7 is played nowhere else; with mirror images as
    # one, Wd4,a1 and Wd4,d7 are four of six.
    one = ceiling(tmp_path, boards=[37], plies=1, min_count=6)
    assert set(one) == {37}
    assert one[37] == {
        "games": 6,
        "positions": 1,
        "decisions": 6,
        "top1": 0.0,
        "top5": 5 / 6,
        "class_positions": 1,
        "class_decisions": 6,
        "class_top1": 4 / 6,
        "class_top5": 1.0,
    }
    # Two turns: the position after Wd4,a1 (three times, the same answer) joins.
    two = ceiling(tmp_path, plies=2, min_count=3)
    assert set(two) == {37, 61} and two[61]["positions"] == 0 and two[61]["top1"] == 0.0
    assert (two[37]["positions"], two[37]["decisions"]) == (2, 9)
    assert (two[37]["top1"], two[37]["top5"]) == (3 / 9, 8 / 9)
    assert (two[37]["class_top1"], two[37]["class_top5"]) == (7 / 9, 1.0)
    # Positions seen fewer times are left out.
    assert ceiling(tmp_path, boards=[37], plies=2, min_count=7)[37]["decisions"] == 0
    with pytest.raises(ValueError, match="plies must be >= 1"):
        ceiling(tmp_path, plies=0)
    (tmp_path / "games.jsonl").write_text('{"split": "train"}\n')
    with pytest.raises(ValueError, match=r"not a line of games\.jsonl"):
        ceiling(tmp_path)


def test_the_ceiling_command_prints_what_the_function_returns(dataset: Path) -> None:
    """``python -m zertz human-ceiling``: the function's figures as JSON, a line per board, and
    bad arguments as one-line errors with status 2."""

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "zertz", "human-ceiling", "--dataset", str(dataset)]
        return subprocess.run([*command, *args], capture_output=True, text=True, timeout=300)

    done = run("--plies", "2", "--min-count", "2", "--json")
    assert done.returncode == 0, done.stderr
    want = ceiling(dataset, plies=2, min_count=2)
    assert json.loads(done.stdout) == {str(b): r for b, r in want.items()}
    assert want[37]["positions"] >= 1  # the start, at least
    lines = run("--boards", "37,61").stdout.splitlines()
    assert [line.split(" ")[0] for line in lines] == ["37", "61"]
    for args, message in (
        (("--boards", "thirty"), "--boards must be ring counts"),
        (("--boards", "44"), "has no games of those boards"),
        (("--min-count", "1"), "min_count >= 2"),
    ):
        bad = run(*args)
        assert bad.returncode == 2 and message in bad.stderr and bad.stdout == ""
