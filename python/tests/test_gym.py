"""zertz.gymnasium and zertz.pettingzoo: the libraries' own checkers on several boards, and what
the environments promise (rewards of the mover, final observations, masks, per-agent views)."""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import zertz

gymnasium = pytest.importorskip("gymnasium")
pettingzoo = pytest.importorskip("pettingzoo")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from pettingzoo.test import api_test  # type: ignore[import-untyped]  # noqa: E402

from zertz.gymnasium import VectorEnv, ZertzEnv  # noqa: E402
from zertz.pettingzoo import ZertzAEC, env  # noqa: E402

BOARDS = [(37, False), (48, False), (61, True), (40, True)]


@pytest.mark.parametrize(("board", "blitz"), BOARDS)
def test_gymnasium_checker_passes(board: int, blitz: bool) -> None:
    for opponent in ("greedy", None):
        for observation in ("flat", "dict"):
            e = ZertzEnv(board, blitz, opponent=opponent, observation=observation)
            check_env(e, skip_render_check=True)


@pytest.mark.parametrize(("board", "blitz"), BOARDS)
def test_pettingzoo_api_test_passes(board: int, blitz: bool) -> None:
    with warnings.catch_warnings():
        # Dict observations ({"observation", "action_mask"}) warn as every classic game's do.
        warnings.simplefilter("ignore", UserWarning)
        api_test(env(board, blitz), num_cycles=200)


def test_the_two_player_env_rewards_the_mover_and_ends_illegal_play() -> None:
    e = ZertzEnv(37, max_steps=400, opponent=None)
    obs, info = e.reset(seed=3)
    assert e.observation_space.contains(obs)
    rng = np.random.default_rng(0)
    done = False
    total: dict[str, float] = {"P0": 0.0, "P1": 0.0}
    while not done:
        mover = "P0" if info["to_play"] == 0 else "P1"
        action = e.action_space.sample(info["action_mask"])
        obs, reward, terminated, truncated, info = e.step(action)
        total[mover] += float(reward)
        # Both players' rewards are in the info: the loser's -1 too.
        assert info["rewards"][0 if mover == "P0" else 1] == reward
        assert info["rewards"][0] == -info["rewards"][1]
        done = terminated or truncated
        assert e.observation_space.contains(obs)
        _ = rng
    outcome = e.game.outcome
    if outcome in ("P0", "P1"):
        assert total[outcome] == 1.0 and total["P1" if outcome == "P0" else "P0"] == 0.0
        assert tuple(info["rewards"]) == ((1.0, -1.0) if outcome == "P0" else (-1.0, 1.0))
    # An illegal action loses at once, and says so.
    obs, info = e.reset(seed=4)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = e.step(illegal)
    assert (reward, terminated, truncated, info["illegal_action"]) == (-1.0, True, False, True)


def test_the_vector_env_follows_gymnasium() -> None:
    n = 16
    envs = VectorEnv(n, 37, threads=2, max_steps=60, seed=5, opponent=None, observation="dict")
    assert isinstance(envs, gymnasium.vector.VectorEnv)
    assert envs.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
    assert envs.action_space.shape == (n,) and envs.single_action_space.n == 4441
    obs, infos = envs.reset(seed=5)
    assert envs.observation_space.contains(obs)
    again, _ = envs.reset(seed=5)
    np.testing.assert_array_equal(again["planes"], obs["planes"])
    finished = 0
    for _ in range(200):
        to_play = infos["to_play"].copy()
        masks = infos["action_mask"]
        assert masks.dtype == np.int8
        np.testing.assert_array_equal(masks.astype(bool), infos["legal_action_mask"])
        before = [envs.env.game(i) for i in range(n)]
        actions = envs.sample_actions()
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        assert envs.observation_space.contains(obs)
        # The reward is the mover's: infos["rewards"] holds both players'.
        np.testing.assert_array_equal(rewards, infos["rewards"][np.arange(n), to_play])
        done = terminations | truncations
        if not done.any():
            assert "final_obs" not in infos
            continue
        np.testing.assert_array_equal(infos["_final_obs"], done)
        for i in np.flatnonzero(done):
            # The final observation is that of the position the game ended in.
            game = before[i]
            game.play(int(actions[i]))
            planes, globals_ = game.encode()
            final: dict[str, Any] = infos["final_obs"][i]
            np.testing.assert_array_equal(final["planes"], planes)
            np.testing.assert_array_equal(final["globals"], globals_)
            assert envs.single_observation_space.contains(final)
            finished += 1
        assert all(infos["final_obs"][i] is None for i in np.flatnonzero(~done))
    assert finished > 10
    # Gymnasium's own vector wrappers run on it.
    stats = gymnasium.wrappers.vector.RecordEpisodeStatistics(VectorEnv(4, 37, max_steps=30))
    assert stats.observation_space.shape == (4, 412)
    stats.reset(seed=0)
    for _ in range(40):
        stats.step(stats.unwrapped.sample_actions())
    assert len(stats.return_queue) > 0


def test_each_agent_observes_its_own_side() -> None:
    e = ZertzAEC(37)
    e.reset(seed=0)
    # Play until someone has captured, so that the two sides differ.
    game = e.game
    while not any(sum(c) for c in game.captures.values()) and not game.is_over:
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
        game = e.game
    mover = e.agent_selection
    other = "player_1" if mover == "player_0" else "player_0"
    mine, theirs = e.observe(mover), e.observe(other)
    c = zertz.observation_shape(37)[0][0]
    np.testing.assert_array_equal(mine["observation"][:c], theirs["observation"][:c])
    planes, globals_ = game.encode()
    np.testing.assert_array_equal(mine["observation"][:c], planes)
    np.testing.assert_array_equal(mine["observation"][c:, 0, 0], globals_)
    own, opp = globals_[3:6], globals_[6:9]
    np.testing.assert_array_equal(theirs["observation"][c + 3 : c + 6, 0, 0], opp)
    np.testing.assert_array_equal(theirs["observation"][c + 6 : c + 9, 0, 0], own)
    assert mine["action_mask"].sum() > 0 and theirs["action_mask"].sum() == 0
    assert zertz.Game().encode("P1")[1][19] == 0.0


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="render_mode must be None or 'ansi'"):
        ZertzEnv(render_mode="human")
    with pytest.raises(ValueError, match="max_steps must be at least 1"):
        env(max_steps=0)
    with pytest.raises(ValueError, match="no 38-ring board"):
        VectorEnv(2, 38)
    assert ZertzEnv(render_mode="ansi").render() is not None


def test_every_front_end_reads_first_player_as_the_engine_does() -> None:
    """One reading of ``first_player`` (``zertz._zertz.parse_first_player``): the same words in
    any case, the same refusal. The Gymnasium environment once took only the exact words, with
    a message of its own."""
    fronts: dict[str, Callable[[str], object]] = {
        "zertz.VecEnv": lambda fp: zertz.VecEnv(2, first_player=fp),
        "gymnasium.VectorEnv": lambda fp: VectorEnv(2, first_player=fp),
        "gymnasium.ZertzEnv": lambda fp: ZertzEnv(first_player=fp),
    }
    # Stable-Baselines3's, where its extra is installed (not in the torch-free wheel's test).
    if importlib.util.find_spec("stable_baselines3") is not None:
        from zertz.sb3 import VecEnv as Sb3VecEnv

        fronts["sb3.VecEnv"] = lambda fp: Sb3VecEnv(2, first_player=fp)
    message = 'first_player must be "random", "P0" or "P1", not "first"'
    for name, make in fronts.items():
        for word in ("random", "P0", "p1", "RANDOM"):
            make(word)
        with pytest.raises(ValueError) as refused:
            make("first")
        assert message in str(refused.value), name
    first = ZertzEnv(opponent=None, first_player="p1")
    first.reset(seed=0)
    assert first.game.to_play == "P1"
