"""scripts/ladder.py's schedules, kept results and plot, with a stand-in for the matches (the
engine's matches themselves are tested elsewhere; the argument checks are in
test_scripts_hostile.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_scripts_hostile import script

from zertz.boardnet import BoardNet

ladder = script("ladder")

#: The stand-in's strength of each player: the stronger wins every game of a pair but one.
STRENGTH = {"random": 0, "greedy": 1, "mcts:100": 2, "alphabeta:2": 3}


def run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str, list[tuple[str, str]]]:
    """ladder.py with ``args`` and matches that the stronger player of STRENGTH wins (all
    games but one; a player not in it has strength 1.5): status, stdout, stderr and the pairs
    played."""
    played: list[tuple[str, str]] = []

    def match(a: str, b: str, **settings: Any) -> dict[str, Any]:
        played.append((a, b))
        games = settings["games"]
        sa, sb = (STRENGTH.get(p, 1.5) for p in (a, b))
        wins = games - 1 if sa > sb else 1
        effort = {"moves": 10, "cpu_seconds": 2.5}
        return {
            "wins": wins,
            "draws": 0,
            "losses": games - wins,
            "a_effort": effort,
            "b_effort": {"moves": 10, "cpu_seconds": None},
            "seconds": 1.0,
        }

    monkeypatch.setattr(ladder.zertz, "match", match)
    capsys.readouterr()
    try:
        ladder.main(list(args))
        status = 0
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return status, out, err, played


def ranking(out: str) -> list[str]:
    """The players of the rating table, weakest first."""
    return [
        line.split("`")[1]
        for line in out.splitlines()
        if line.startswith("| `") and line.count("`") == 2
    ]


def test_a_span_plays_each_player_against_the_next_and_still_ranks_them(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    players = ["random", "greedy", "mcts:100", "alphabeta:2"]
    status, out, err, played = run(
        monkeypatch, capsys, "--players", *players, "--games", "10", "--span", "1"
    )
    assert status == 0, err
    assert played == [("random", "greedy"), ("greedy", "mcts:100"), ("mcts:100", "alphabeta:2")]
    # A chain of neighbours is enough for the fit: the order comes out whole.
    assert ranking(out) == players
    # Each side's CPU seconds a move, "?" where the engine did not measure it.
    assert "| `random` - `greedy` | 1-0-9 | 250.0 / ? |" in out


def test_a_span_of_two(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    players = ["random", "greedy", "mcts:100", "alphabeta:2"]
    status, _, err, played = run(
        monkeypatch, capsys, "--players", *players, "--games", "2", "--span", "2"
    )
    assert status == 0, err
    assert played == [
        ("random", "greedy"),
        ("random", "mcts:100"),
        ("greedy", "mcts:100"),
        ("greedy", "alphabeta:2"),
        ("mcts:100", "alphabeta:2"),
    ]


def test_kept_results_are_not_played_again_and_a_new_player_plays_only_its_pairs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    kept = tmp_path / "ladder.jsonl"
    three = ["random", "greedy", "mcts:100"]
    status, _, err, played = run(
        monkeypatch, capsys, "--players", *three, "--games", "4", "--results", str(kept)
    )
    assert status == 0, err
    assert len(played) == 3
    rows = [json.loads(line) for line in kept.read_text().splitlines()]
    assert [(r["a"], r["b"], r["games"]) for r in rows] == [(a, b, 4) for a, b in played]

    # Again, one more player, another spelling of one: only the new player's pairs are played,
    # and every pair enters the table.
    four = ["random", "greedy", "MCTS: 100", "alphabeta:2"]
    status, out, err, played = run(
        monkeypatch, capsys, "--players", *four, "--games", "4", "--results", str(kept)
    )
    assert status == 0, err
    assert played == [
        ("random", "alphabeta:2"),
        ("greedy", "alphabeta:2"),
        ("MCTS: 100", "alphabeta:2"),
    ]
    assert "3 pairs from" in err
    assert ranking(out) == four
    assert out.count(" - `") == 6

    # Nothing left to play; other settings are other results.
    assert (
        run(monkeypatch, capsys, "--players", *four, "--games", "4", "--results", str(kept))[3]
        == []
    )
    again = run(monkeypatch, capsys, "--players", *three, "--games", "6", "--results", str(kept))
    assert len(again[3]) == 3


def test_a_network_file_trained_again_is_another_player(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    kept = tmp_path / "ladder.jsonl"
    agent = tmp_path / "agent.safetensors"
    BoardNet("tiny", board=37).export(agent)
    players = ["random", f"nn:{agent}:1"]
    args = ("--players", *players, "--games", "2", "--results", str(kept))
    assert len(run(monkeypatch, capsys, *args)[3]) == 1
    assert run(monkeypatch, capsys, *args)[3] == []
    agent.unlink()
    BoardNet("tiny", board=37).export(agent)  # fresh weights: other bytes
    status, _, err, played = run(monkeypatch, capsys, *args)
    assert status == 0, err
    assert played == [("random", f"nn:{agent}:1")]


def test_the_built_in_network_is_known_by_its_bytes() -> None:
    # Another version's built-in network is another player: its stored results are not reused.
    import hashlib

    from zertz_engine import builtin_model

    digest = hashlib.sha256(builtin_model()).hexdigest()[:16]
    assert ladder.identity("nn:builtin:32") == f"nn:builtin:32 sha256:{digest}"
    assert ladder.identity("nn:builtin:time=1") != ladder.identity("nn:builtin:32")
    assert ladder.identity("greedy") == "greedy"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("not json", "line 2: not a ladder result"),
        ("[1, 2]", "line 2: not a ladder result (not an object)"),
        ('{"a": "random"}', "line 2: not a ladder result (no player 'b')"),
    ],
)
def test_a_results_file_that_is_not_one_is_refused_before_any_game(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    line: str,
    words: str,
) -> None:
    kept = tmp_path / "ladder.jsonl"
    settings = ("--games", "2", "--results", str(kept))
    assert run(monkeypatch, capsys, "--players", "random", "greedy", *settings)[0] == 0
    with kept.open("a") as f:
        f.write(line + "\n")
    status, out, err, played = run(
        monkeypatch, capsys, "--players", "random", "greedy", "mcts:100", *settings
    )
    assert status == 2
    assert err.startswith("error: --results: ") and words in err, err
    assert err.count("\n") == 1
    assert played == [] and out == ""


def test_the_plot_draws_every_player(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    drawn = tmp_path / "ladder.svg"
    players = ["random", "greedy", "mcts:100"]
    status, _, err, _ = run(
        monkeypatch, capsys, "--players", *players, "--games", "2", "--plot", str(drawn)
    )
    assert status == 0, err
    svg = drawn.read_text()
    assert svg.startswith("<?xml") and "</svg>" in svg
    for name in players:
        assert name in svg


def test_a_results_file_that_cannot_be_written_is_refused_before_any_game(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    nowhere = tmp_path / "no-such-folder" / "ladder.jsonl"
    args = ("--players", "random", "greedy", "--games", "2", "--results", str(nowhere))
    status, out, err, played = run(monkeypatch, capsys, *args)
    assert status == 2 and err.startswith("error: --results: ") and err.count("\n") == 1, err
    assert played == [] and out == ""
