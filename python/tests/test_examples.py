"""The examples of examples/ run as written, on a few thousand steps, and the documented self-play
route learns: a short self-play run of examples/ppo_vector.py beats the random player."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conftest import run_example as run

pytest.importorskip("torch")
pytest.importorskip("gymnasium")


def scores(result: dict[str, Any]) -> dict[str, float]:
    return {r["opponent"]: r["score"] for r in result["results"]}


def test_maskable_ppo_runs() -> None:
    pytest.importorskip("sb3_contrib")
    result = run("maskable_ppo.py", "--steps", "2048", "--envs", "8", "--games", "4")
    assert result["steps"] >= 2048
    assert set(scores(result)) == {"random", "greedy"}
    assert all(r["wins"] + r["draws"] + r["losses"] == 4 for r in result["results"])


def test_ppo_against_an_opponent_runs() -> None:
    result = run("ppo_vector.py", "--opponent", "greedy", "--steps", "4096", "--games", "4")
    assert result["steps"] >= 4096 and set(scores(result)) == {"random", "greedy"}


def test_self_play_beats_random() -> None:
    # The documented self-play route (two-player environment, returns per player) learns: a
    # short run scores clearly above even against random, over 400 games (a policy that learnt
    # nothing stays at 50%, and the route of issue 45, which never showed the loser its -1,
    # scored 47%). BENCHMARKS.md has the same run over three seeds: 62.5% to 64.5%.
    result = run(
        "ppo_vector.py",
        *("--opponent", "self", "--steps", "40960", "--games", "400", "--against", "random"),
    )
    assert scores(result)["random"] >= 0.56, result["results"]


def test_board_ppo_clones_people_trains_and_exports(games: Path, tmp_path: Path) -> None:
    # The route of docs/agents.md on a few steps: behaviour cloning on a dataset it makes from
    # records, MaskablePPO with the board policy, the matches, the network file for the engine.
    pytest.importorskip("sb3_contrib")
    from zertz.exported import read_metadata

    agent = tmp_path / "agent.safetensors"
    result = run(
        "board_ppo.py",
        *("--clone-steps", "10", "--dataset", str(tmp_path / "human"), "--records", str(games)),
        *("--steps", "1024", "--envs", "16", "--games", "4", "--export", str(agent)),
    )
    assert result["clone"]["steps"] == 10 and result["steps"] >= 1024
    assert set(scores(result)) == {"random", "greedy"}
    assert read_metadata(agent)["step"] == result["steps"]


def test_board_ppo_gives_ppo_what_the_clone_leaves_of_the_total(
    games: Path, tmp_path: Path
) -> None:
    # A total spent by the clone leaves PPO its first step of the 16 games, not an error.
    pytest.importorskip("sb3_contrib")
    result = run(
        "board_ppo.py",
        *("--clone-steps", "5", "--dataset", str(tmp_path / "human"), "--records", str(games)),
        *("--total-minutes", "0.0001", "--envs", "16", "--games", "2", "--against", "random"),
    )
    assert result["clone"]["steps"] == 5
    assert 16 <= result["steps"] < 1024, result["steps"]


def test_ppo_vector_runs_the_board_network_and_exports(tmp_path: Path) -> None:
    from zertz.exported import load_network

    agent = tmp_path / "agent.safetensors"
    result = run(
        "ppo_vector.py",
        *("--opponent", "greedy", "--network", "tiny", "--steps", "2048", "--games", "4"),
        *("--export", str(agent)),
    )
    assert result["steps"] >= 2048 and set(scores(result)) == {"random", "greedy"}
    assert load_network(agent).boards == [37]
