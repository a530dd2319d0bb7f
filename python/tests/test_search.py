"""zertz.MCTS and zertz.selfplay, with built-in and Python evaluators."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import zertz


def test_uniform_search_distributes_visits() -> None:
    mcts = zertz.MCTS()
    games = [zertz.Game(), zertz.Game(48)]
    with pytest.raises(ValueError, match="one board"):
        mcts.search(games, 10)
    policies, values, visits = mcts.search([zertz.Game(), zertz.Game(first="P1")], 100)
    assert policies.shape == (2, zertz.action_space_size(37))
    np.testing.assert_allclose(policies.sum(axis=1), 1.0, rtol=1e-5)
    assert (visits == 100).all()
    mask = zertz.Game().legal_action_mask()
    assert (policies[0][~mask] == 0).all(), "visits only on legal actions"
    assert values.shape == (2,)


def test_python_evaluator_steers_the_search() -> None:
    """A callable that puts all prior mass on one action makes it the most visited."""
    game = zertz.Game()
    favourite = game.action_index("Gd4,a1")
    calls: list[int] = []

    def evaluator(
        planes: npt.NDArray[np.float32],
        globals_: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        b = planes.shape[0]
        assert planes.dtype == np.float32 and planes.shape[1:] == (8, 7, 7)
        assert globals_.shape == (b, 20) and masks.shape == (b, zertz.action_space_size(37))
        calls.append(b)
        logits = np.zeros(masks.shape, dtype=np.float32)
        logits[:, favourite] = 20.0
        return logits, np.zeros(b, dtype=np.float32)

    policies, _, _ = zertz.MCTS(evaluator).search([game], 64)
    assert int(policies[0].argmax()) == favourite
    assert sum(calls) >= 1


def test_evaluator_errors_become_exceptions() -> None:
    def wrong_shape(
        planes: npt.NDArray[np.float32],
        globals_: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        return np.zeros((1, 3), dtype=np.float32), np.zeros(1, dtype=np.float32)

    with pytest.raises(ValueError, match="logits has shape"):
        zertz.MCTS(wrong_shape).search([zertz.Game()], 10)

    def raises(*_: object) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        raise RuntimeError("model exploded")

    with pytest.raises(ValueError, match="model exploded"):
        zertz.MCTS(raises).search([zertz.Game()], 10)
    with pytest.raises(ValueError, match="unknown evaluator"):
        zertz.MCTS("neural")
    with pytest.raises(TypeError, match="callable"):
        zertz.MCTS(3)  # type: ignore[arg-type]


def test_selfplay_writes_shards_numpy_reads(tmp_path: Path) -> None:
    config = tmp_path / "small.toml"
    config.write_text(
        "full_simulations = 16\nfast_simulations = 4\ngames_per_worker = 2\nshard_size = 40\n"
    )
    summary = zertz.selfplay(tmp_path / "run", "uniform", config=config, games=3, seed=1)
    assert summary["games"] == 3 and summary["samples"] > 0
    data = zertz.load_shards(summary["shards"], zertz.action_space_size(37))
    s = summary["samples"]
    assert data["planes"].shape == (s, 8, 7, 7)
    assert data["policy"].shape == data["legal_mask"].shape == (s, zertz.action_space_size(37))
    np.testing.assert_allclose(data["policy"].sum(axis=1), 1.0, rtol=1e-5)
    policy = np.asarray(data["policy"], dtype=np.float32)
    legal = np.asarray(data["legal_mask"], dtype=bool)
    assert not (policy > 0)[~legal].any(), "policy only on legal actions"
    assert set(np.unique(data["value"]).tolist()) <= {-1.0, 0.0, 1.0}
    assert len(list((tmp_path / "run").glob("games-*.jsonl"))) >= 1
    # The encoding of a stored sample is that of its position: planes are 0/1.
    assert set(np.unique(data["planes"]).tolist()) <= {0.0, 1.0}


def test_selfplay_with_a_python_evaluator(tmp_path: Path) -> None:
    def evaluator(
        planes: npt.NDArray[np.float32],
        globals_: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        return np.zeros(masks.shape, dtype=np.float32), np.zeros(len(masks), dtype=np.float32)

    config = tmp_path / "c.toml"
    config.write_text("full_simulations = 8\nfast_simulations = 4\n")
    summary = zertz.selfplay(tmp_path / "run", evaluator, config=config, games=2, threads=2)
    assert summary["games"] == 2


def test_selfplay_rejects_bad_configs(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("gmaes = 3\n")
    with pytest.raises(ValueError, match="gmaes"):
        zertz.selfplay(tmp_path / "run", config=config)
