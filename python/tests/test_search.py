"""zertz.MCTS and zertz.selfplay, with built-in and Python evaluators (self-play is the
engine's: those tests are marked ``engine``)."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import zertz
from zertz._zertz import partial_owner


def test_uniform_search_distributes_visits() -> None:
    mcts = zertz.MCTS()
    games = [zertz.Game(), zertz.Game(48)]
    with pytest.raises(ValueError, match="one board"):
        mcts.search(games, 10)
    policies, values, visits = mcts.search([zertz.Game(), zertz.Game(first_player="P1")], 100)
    assert policies.shape == (2, zertz.action_space_size(37))
    np.testing.assert_allclose(policies.sum(axis=1), 1.0, rtol=1e-5)
    assert (visits == 100).all()
    mask = zertz.Game().legal_action_mask()
    assert (policies[0][~mask] == 0).all(), "visits only on legal actions"
    assert values.shape == (2,)


def test_a_gumbel_root_returns_the_improved_policy() -> None:
    """With gumbel_actions the search considers that many root actions (sequential halving over
    the simulations) and returns the improved policy, which covers every legal action; its draws
    follow the seed."""
    mcts = zertz.MCTS(gumbel_actions=8)
    assert mcts.config["gumbel_actions"] == 8
    game = zertz.Game()
    policies, values, visits = mcts.search([game, game], 65)
    mask = game.legal_action_mask()
    assert (policies[:, mask] > 0).all() and (policies[:, ~mask] == 0).all()
    np.testing.assert_allclose(policies.sum(axis=1), 1.0, rtol=1e-5)
    assert (visits == 65).all() and values.shape == (2,)
    # Seeded draws: the same seed, the same search; another seed, another one (values that
    # differ between positions, so that which actions are considered shows in the policy).
    weights = np.random.default_rng(0).normal(size=8 * 7 * 7).astype(np.float32)

    def evaluator(
        planes: npt.NDArray[np.float32],
        globals_: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        values = np.tanh(planes.reshape(len(planes), -1) @ weights).astype(np.float32)
        return np.zeros(masks.shape, dtype=np.float32), values

    valued = zertz.MCTS(evaluator, gumbel_actions=8)
    first = valued.search([game], 65, noise=True, seed=1)[0]
    np.testing.assert_array_equal(first, valued.search([game], 65, noise=True, seed=1)[0])
    assert not np.array_equal(first, valued.search([game], 65, noise=True, seed=2)[0])
    # Without a Gumbel root the policy is the visit distribution: 64 visits over the children.
    puct = zertz.MCTS().search([game], 65)[0]
    assert set(np.unique(puct * 64).round(3).tolist()) <= set(map(float, range(65)))


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

    # The evaluator's own exception, unchanged, with its traceback (not a ValueError about it).
    with pytest.raises(RuntimeError, match=r"^model exploded$") as info:
        zertz.MCTS(raises).search([zertz.Game()], 10)
    assert info.traceback[-1].name == "raises"
    with pytest.raises(ValueError, match="unknown evaluator"):
        zertz.MCTS("neural")
    with pytest.raises(TypeError, match="callable"):
        zertz.MCTS(3)  # type: ignore[arg-type]


def test_search_presets_come_from_the_engine() -> None:
    """One source for the settings: the presets, their use by evaluator, overrides on top."""
    presets = zertz.search_presets()
    assert set(presets) == {"default", "rollout", "network"}
    default = presets["default"]
    assert default["c_puct"] == 1.25 and default["leaves_per_round"] == 8
    assert default["dirichlet_alpha_total"] == pytest.approx(10.83)
    assert presets["rollout"] == {
        **default,
        "c_puct": 4.0,
        "fpu_reduction": -1.0,
        "leaves_per_round": 1,
    }
    assert presets["network"] == {**default, "policy_temperature": 3.0}
    # The evaluator chooses the preset when none is named: rollouts search as "rollout".
    assert zertz.MCTS("rollout").config == presets["rollout"]
    assert zertz.MCTS("uniform").config == default
    assert zertz.MCTS(lambda p, g, m: (m * 0.0, m[:, 0] * 0.0)).config == default
    mcts = zertz.MCTS("rollout", preset="network", c_puct=2.0)
    assert mcts.config == {**presets["network"], "c_puct": 2.0}
    assert zertz.MCTS("rollout", leaves_per_round=4).config["leaves_per_round"] == 4
    with pytest.raises(ValueError, match=r"unknown search preset .*default, rollout, network"):
        zertz.MCTS(preset="fast")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="c_puct"):
        zertz.MCTS(c_puct=float("nan"))


def test_the_mcts_keywords_are_the_engines_search_settings() -> None:
    """MCTS takes every search setting Rust describes (``mcts_settings()``, from which its
    stub is generated) but ``tree_reuse``: each is applied over the preset, numpy's numbers as
    Python's; a value of the wrong type or an unknown keyword is a TypeError naming it."""
    described = zertz.mcts_settings()
    names = [s["name"] for s in described]
    default = zertz.search_presets()["default"]
    assert set(names) == set(default) - {"tree_reuse"}
    assert all(s["default"] is None and s["doc"] for s in described)
    for s in described:
        value = default[s["name"]]
        # (gumbel_actions: 2, a Gumbel root's fewest actions, from 0.)
        step = 2 if s["name"] == "gumbel_actions" else 1
        changed = value + step if s["name"] != "dirichlet_fraction" else value / 2
        config = zertz.MCTS("uniform", **{s["name"]: changed}).config  # type: ignore[arg-type]
        assert config == {**default, s["name"]: pytest.approx(changed)}, s["name"]
    numpy_numbers = {"c_puct": np.float32(2.5), "leaves_per_round": np.int64(3)}
    config = zertz.MCTS(**numpy_numbers).config  # type: ignore[arg-type]
    assert (config["c_puct"], config["leaves_per_round"]) == (2.5, 3)
    with pytest.raises(ValueError, match=r"^c_puct: an integer beyond every float"):
        zertz.MCTS(c_puct=10**400)
    with pytest.raises(ValueError, match=r"^tree_reuse: MCTS searches from new roots"):
        zertz.MCTS(tree_reuse=False)  # type: ignore[call-arg]
    with pytest.raises(
        TypeError, match=r"unexpected keyword argument 'cpuct' .*c_puct, c_base"
    ) as e:
        zertz.MCTS(cpuct=2.0)  # type: ignore[call-arg]
    # The keywords listed are those of the stub: the one withheld is not among them.
    listed = str(e.value).split("(its settings: ", 1)[1].rstrip(")").split(", ")
    assert listed == names
    with pytest.raises(
        TypeError, match=re.escape("leaves_per_round must be int | None, not float")
    ):
        zertz.MCTS(leaves_per_round=2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=re.escape("c_puct must be float | None, not bool")):
        zertz.MCTS(c_puct=True)


def test_the_dirichlet_settings_are_the_noise_of_a_search() -> None:
    """``dirichlet_alpha_total`` and ``dirichlet_fraction`` of MCTS are what ``search(noise=True)``
    mixes in when the call names none: a fraction of 0 is no noise at all."""
    games = [zertz.Game() for _ in range(2)]
    plain = zertz.MCTS("uniform").search(games, 16)[0]
    none = zertz.MCTS("uniform", dirichlet_fraction=0.0).search(games, 16, noise=True, seed=1)[0]
    noisy = zertz.MCTS("uniform").search(games, 16, noise=True, seed=1)[0]
    assert np.array_equal(plain, none)
    assert not np.array_equal(plain, noisy)


@pytest.mark.engine
def test_selfplay_summary_is_the_programs(tmp_path: Path, program: Path) -> None:
    """zertz.selfplay and `zertz selfplay --json` give the same typed summary, the search
    settings included (the rollout evaluator's preset)."""
    import subprocess

    config = tmp_path / "c.toml"
    config.write_text("full_simulations = 8\nfast_simulations = 4\ngames_per_worker = 2\n")
    summary = zertz.selfplay(tmp_path / "py", "rollout", config=config, games=2, seed=3)
    out = subprocess.run(
        [
            program,
            "selfplay",
            "--config",
            config,
            "--evaluator",
            "rollout",
            "--games",
            "2",
            "--seed",
            "3",
            "--out",
            tmp_path / "cli",
            "--json",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    line = json.loads(out.strip().splitlines()[-1])
    assert set(line) == set(summary)
    assert summary["search"] == line["search"] == zertz.search_presets()["rollout"]
    for key in ("games", "samples", "actions", "first_wins", "second_wins", "draws"):
        assert summary[key] == line[key], key
    assert summary["network_seconds"] is None and summary["network_share"] is None
    assert [Path(p).name for p in summary["shards"]] == [Path(p).name for p in line["shards"]]


@pytest.mark.engine
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
    assert (
        data["policy"].shape == data["legal_action_mask"].shape == (s, zertz.action_space_size(37))
    )
    np.testing.assert_allclose(data["policy"].sum(axis=1), 1.0, rtol=1e-5)
    policy = np.asarray(data["policy"], dtype=np.float32)
    legal = np.asarray(data["legal_action_mask"], dtype=bool)
    assert not (policy > 0)[~legal].any(), "policy only on legal actions"
    assert set(np.unique(data["value"]).tolist()) <= {-1.0, 0.0, 1.0}
    assert len(list((tmp_path / "run").glob("games-*.jsonl"))) >= 1
    # The encoding of a stored sample is that of its position: planes are 0/1.
    assert set(np.unique(data["planes"]).tolist()) <= {0.0, 1.0}


@pytest.mark.engine
def test_selfplay_with_a_gumbel_root_learns_the_improved_policy(tmp_path: Path) -> None:
    """[search] gumbel_actions: a full search's target is the improved policy over every legal
    action; a fast search's stays its visits; the run is reproducible from its seed."""
    config = tmp_path / "gumbel.toml"
    config.write_text(
        "full_simulations = 16\nfast_simulations = 4\nfull_search_probability = 0.5\n"
        "games_per_worker = 2\nmax_actions = 60\n[search]\ngumbel_actions = 4\n"
    )
    runs = [
        zertz.selfplay(tmp_path / name, "uniform", config=config, games=2, seed=1, threads=1)
        for name in ("a", "b")
    ]
    assert runs[0]["search"]["gumbel_actions"] == 4
    data = [zertz.load_shards(r["shards"], zertz.action_space_size(37)) for r in runs]
    for key in ("policy", "value", "planes"):
        np.testing.assert_array_equal(data[0][key], data[1][key])
    policy = np.asarray(data[0]["policy"], dtype=np.float32)
    legal = np.asarray(data[0]["legal_action_mask"], dtype=bool)
    full = np.asarray(data[0]["full_search"], dtype=bool)
    assert full.any() and (~full).any()
    assert not ((policy > 0) & ~legal).any()
    # Far more actions than 15 visits could reach: every legal action but an avoidable proven
    # loss, or the proven wins alone.
    covered, choices = (policy[full] > 0).sum(axis=1), legal[full].sum(axis=1)
    wide = covered[choices > 16]
    assert ((wide > 16) | (wide == 1)).all() and (covered == choices).mean() > 0.5
    # A fast search keeps its visits (a reused subtree's included): a few actions, not all.
    covered, choices = (policy[~full] > 0).sum(axis=1), legal[~full].sum(axis=1)
    assert (covered[choices > 100] < 50).all()


@pytest.mark.engine
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


@pytest.mark.engine
def test_selfplay_rejects_bad_configs(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("gmaes = 3\n")
    with pytest.raises(ValueError, match="gmaes"):
        zertz.selfplay(tmp_path / "run", config=config)


class _Boom(Exception):
    pass


def _raising(
    exc: BaseException,
) -> Callable[..., tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]]:
    def evaluator(*_: object) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        raise exc

    return evaluator


@pytest.mark.engine
@pytest.mark.parametrize("exc", [_Boom("mine"), SystemExit(3), KeyboardInterrupt()])
def test_evaluator_exceptions_pass_through_unchanged(tmp_path: Path, exc: BaseException) -> None:
    """Whatever a Python evaluator raises reaches the caller as itself: the same object, with the
    evaluator's frame in its traceback, from search and from self-play on worker threads."""
    with pytest.raises(type(exc)) as info:
        zertz.MCTS(_raising(exc)).search([zertz.Game()], 10)
    assert info.value is exc
    assert info.traceback[-1].name == "evaluator"
    with pytest.raises(type(exc)) as info:
        zertz.selfplay(tmp_path / "run", _raising(exc), games=4, threads=2)
    assert info.value is exc


def test_non_finite_evaluator_answers_are_refused() -> None:
    def nan_values(
        planes: npt.NDArray[np.float32],
        globals_: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        return np.zeros(masks.shape, np.float32), np.full(len(masks), np.nan, np.float32)

    def inf_logits(
        planes: npt.NDArray[np.float32],
        globals_: npt.NDArray[np.float32],
        masks: npt.NDArray[np.bool_],
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        return np.where(masks, np.inf, 0).astype(np.float32), np.zeros(len(masks), np.float32)

    mcts = zertz.MCTS(nan_values)
    with pytest.raises(ValueError, match="value of position 0 of the batch is NaN"):
        mcts.search([zertz.Game()], 10)
    with pytest.raises(ValueError, match=r"logit of legal action .* is inf"):
        zertz.MCTS(inf_logits).search([zertz.Game()], 10)


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("c_puct", float("nan")),
        ("c_puct", 0.0),
        ("c_base", float("inf")),
        ("fpu_reduction", float("nan")),
        ("virtual_loss", float("nan")),
        ("virtual_loss", -1.0),
        ("leaves_per_round", 0),
        ("policy_temperature", float("inf")),
        ("gumbel_actions", 65537),
        ("gumbel_c_visit", -1.0),
        ("gumbel_c_scale", 0.0),
    ],
)
def test_search_settings_out_of_range_are_refused(keyword: str, value: float) -> None:
    # NaN settings once panicked in the search (PanicException, which `except Exception` misses).
    with pytest.raises(ValueError, match=f"^{keyword}: must be"):
        zertz.MCTS("uniform", **{keyword: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("noise_alpha_total", float("inf")),  # once never returned
        ("noise_alpha_total", float("nan")),
        ("noise_alpha_total", 0.0),
        ("noise_alpha_total", -1.0),
        ("noise_fraction", 2.0),
        ("noise_fraction", float("nan")),
    ],
)
def test_noise_settings_out_of_range_are_refused(keyword: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"^{keyword}: must be"):
        zertz.MCTS("uniform").search([zertz.Game()], 10, noise=True, **{keyword: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="simulations must be from 1 to"):
        zertz.MCTS("uniform").search([zertz.Game()], 2**30)


def test_a_search_of_no_simulations_is_refused() -> None:
    # It answered all-zero policies.
    with pytest.raises(ValueError, match="simulations must be from 1 to 1048576, not 0"):
        zertz.MCTS("uniform").search([zertz.Game()], 0)


def test_a_gumbel_root_of_one_action_is_refused() -> None:
    # The player grammar's gumbel=K wants at least 2; one action is no choice.
    with pytest.raises(ValueError, match="gumbel_actions: must be 0"):
        zertz.MCTS("uniform", gumbel_actions=1)
    assert zertz.MCTS("uniform", gumbel_actions=2).config["gumbel_actions"] == 2


def _interrupt_after(seconds: float) -> threading.Timer:
    """Sends SIGINT (Ctrl-C) to this process after ``seconds``."""
    timer = threading.Timer(seconds, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def test_ctrl_c_stops_a_long_search_and_the_trees_stay_usable() -> None:
    mcts = zertz.MCTS("uniform")
    games = [zertz.Game() for _ in range(16)]
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        # Started in the block: however late a busy machine runs it, its Ctrl-C lands here.
        timer = _interrupt_after(0.3)
        mcts.search(games, 1_000_000)  # minutes of work
    timer.join()
    # Within a round; only a search run to its end (minutes) takes half a minute, however busy
    # the machine.
    assert time.monotonic() - started < 30, "Ctrl-C is honoured between rounds"
    _, _, visits = mcts.search(games[:2], 50)
    assert (visits == 50).all()


@pytest.mark.engine
def test_ctrl_c_stops_selfplay_and_keeps_whole_games(tmp_path: Path) -> None:
    out = tmp_path / "run"
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        timer = _interrupt_after(0.5)
        zertz.selfplay(out, "rollout", games=100_000, threads=2)
    timer.join()
    # Only a run that goes on (100,000 games: hours) takes a minute, however busy the machine.
    assert time.monotonic() - started < 60
    assert not [p for p in out.glob("*") if partial_owner(p.name)], "no partial shard is left"
    for records in out.glob("games-*.jsonl"):
        text = records.read_text()
        assert text == "" or text.endswith("\n"), "records hold whole lines"
        for line in text.splitlines():
            assert json.loads(line)["moves"]


@pytest.mark.engine
def test_selfplay_never_replaces_output(tmp_path: Path) -> None:
    out = tmp_path / "run"
    zertz.selfplay(out, "uniform", games=2, seed=1)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(FileExistsError, match="already holds self-play output"):
        zertz.selfplay(out, "uniform", games=2, seed=2)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.engine
@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("temperature = nan", "temperature"),
        ("resign_threshold = 5.0", "resign_threshold"),
        ("[search]\ndirichlet_alpha_total = -1.0", "search.dirichlet_alpha_total"),
        ("[search]\nc_puct = inf", "search.c_puct"),
        ("threads = 100000", "threads"),
    ],
)
def test_selfplay_configs_out_of_range_are_refused(tmp_path: Path, text: str, key: str) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(text + "\n")
    with pytest.raises(ValueError, match=f"^{key}:"):
        zertz.selfplay(tmp_path / "run", config=config)
    assert not (tmp_path / "run").exists()
