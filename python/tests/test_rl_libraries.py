"""What RL libraries need of zertz, tried as their users try it: a single-agent environment
against any player (the learner sees its losses), registered ids, masks where sb3-contrib looks,
checkers without warnings, Stable-Baselines3's VecEnv, and an Elo for any Python policy on the
scale of ``zertz match``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import zertz
from zertz.agents import evaluate, player

gymnasium = pytest.importorskip("gymnasium")

from zertz.gymnasium import ENV_ID, VectorEnv, ZertzEnv  # noqa: E402


def first_legal(observation: Any, mask: npt.NDArray[np.bool_]) -> int:
    return int(np.flatnonzero(mask)[0])


def random_policy(seed: int) -> Any:
    rng = np.random.default_rng(seed)
    return lambda observation, mask: int(rng.choice(np.flatnonzero(mask)))


def play_out(env: ZertzEnv, seed: int) -> tuple[float, list[float], dict[str, Any]]:
    """A random learner's episode: its last reward, every reward, the last info."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    rewards: list[float] = []
    while True:
        assert info["to_play"] == "P0", "the learner is to move"
        mask = env.action_masks()
        np.testing.assert_array_equal(mask, info["action_mask"].astype(bool))
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        rewards.append(float(reward))
        assert env.observation_space.contains(obs)
        if terminated or truncated:
            return float(reward), rewards, info


@pytest.mark.parametrize(
    "opponent",
    ["greedy", "mcts:20", "alphabeta:1", "player", "callable"],
)
def test_the_learner_gets_its_own_result_against_any_opponent(opponent: str) -> None:
    opp: Any = {
        "player": zertz.Player("greedy", seed=3),
        "callable": random_policy(1),
    }.get(opponent, opponent)
    env = ZertzEnv(37, blitz=True, opponent=opp)
    results = []
    for seed in range(12 if opponent != "mcts:20" else 4):
        last, rewards, _ = play_out(env, seed)
        assert all(r == 0.0 for r in rewards[:-1]), "rewards only at the end"
        outcome = env.game.outcome
        want = {"P0": 1.0, "P1": -1.0}.get(outcome or "draw", 0.0)
        assert last == want, (outcome, last)
        results.append(last)
    if opponent in ("greedy", "alphabeta:1"):
        # The opponent's winning moves reach the learner as its losses.
        assert -1.0 in results


def test_the_opponent_plays_its_whole_turn_and_may_begin() -> None:
    env = ZertzEnv(37, opponent="greedy", first_player="P1")
    _, info = env.reset(seed=0)
    assert len(info["opponent_actions"]) == 1 and env.game.to_play == "P0"
    firsts = set()
    for seed in range(20):
        env = ZertzEnv(37, opponent="random", first_player="random")
        _, info = env.reset(seed=seed)
        firsts.add(len(info["opponent_actions"]))
    assert firsts == {0, 1}, "the learner's side is drawn per episode"
    # A capture chain of the opponent is played whole inside the step.
    env = ZertzEnv(37, opponent="greedy", first_player="P0")
    rng = np.random.default_rng(5)
    chains = 0
    for seed in range(6):
        _, info = env.reset(seed=seed)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            chains += len(info["opponent_actions"]) > 1
            assert done or env.game.to_play == "P0"
    assert chains > 0


def test_bad_opponents_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown player"):
        ZertzEnv(opponent="grandmaster")
    with pytest.raises(TypeError, match="opponent must be"):
        ZertzEnv(opponent=3)  # type: ignore[arg-type]
    env = ZertzEnv(opponent=lambda obs, mask: int(np.flatnonzero(~mask)[0]), first_player="P1")
    with pytest.raises(ValueError, match=r"the opponent answered action .* not legal"):
        env.reset(seed=0)
    with pytest.raises(ValueError, match="observation must be 'flat' or 'dict'"):
        ZertzEnv(observation="image")
    with pytest.raises(TypeError, match="a batched Python policy or None"):
        VectorEnv(2, opponent=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="network or a program"):
        VectorEnv(2, opponent="nn:builtin")


def test_self_play_through_the_opponent_sees_both_results() -> None:
    # The learner's own policy as its opponent: one policy, and each game's result from its side.
    policy = random_policy(0)
    env = ZertzEnv(37, blitz=True)
    env.set_opponent(policy)
    results = [play_out(env, seed)[0] for seed in range(16)]
    assert 1.0 in results and -1.0 in results


def test_the_ids_are_registered() -> None:
    env = gymnasium.make(ENV_ID, board=61, opponent="greedy")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (zertz.episode.observation_size(61),)
    assert env.unwrapped.action_masks().shape == (zertz.action_space_size(61),)
    envs = gymnasium.make_vec(ENV_ID, num_envs=8, vectorization_mode="vector_entry_point")
    assert isinstance(envs, VectorEnv)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (8, zertz.episode.observation_size(37))
    # Gymnasium's own vectorisation of the single game works too.
    sync = gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="sync", opponent="random")
    sync.reset(seed=0)


@pytest.mark.parametrize("board", [37, 61])
@pytest.mark.parametrize("opponent", ["random", None])
def test_both_checkers_pass_without_warnings(board: int, opponent: str | None) -> None:
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker")
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(ZertzEnv(board, opponent=opponent))
        check_env(gymnasium.make(ENV_ID, board=board, opponent=opponent).unwrapped)
        sb3.check_env(ZertzEnv(board, opponent=opponent))


def test_the_vector_env_against_an_opponent() -> None:
    n = 16
    envs = VectorEnv(n, 37, blitz=True, opponent="greedy", seed=2, threads=2)
    obs, infos = envs.reset(seed=2)
    assert (infos["to_play"] == 0).all()
    results = []
    for _ in range(300):
        masks = envs.action_masks()
        assert masks.dtype == np.bool_ and masks.any(axis=1).all()
        obs, rewards, terminations, _, infos = envs.step(envs.sample_actions())
        assert (infos["to_play"] == 0).all(), "every game waits for the learner"
        np.testing.assert_array_equal(rewards, infos["rewards"][:, 0])
        assert envs.single_observation_space.contains(obs[0])
        results.extend(rewards[terminations].tolist())
    # A random learner loses to greedy, and sees it.
    assert results.count(-1.0) > results.count(1.0) > 0 or results.count(-1.0) > 10


def test_the_vector_env_against_a_batched_python_policy() -> None:
    # The learner's own kind of policy on the other side: self-play at the batch's speed.
    rng = np.random.default_rng(0)
    given: list[int] = []

    def batched(obs: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]) -> Any:
        assert obs.shape == (len(masks), 412)
        given.append(len(masks))
        return [int(rng.choice(np.flatnonzero(m))) for m in masks]

    n = 8
    envs = VectorEnv(n, 37, blitz=True, opponent=batched, seed=4, threads=2)
    _, infos = envs.reset(seed=4)
    assert (infos["to_play"] == 0).all() and given, "the opponent begins some games"
    results: list[float] = []
    for _ in range(300):
        _, rewards, terminations, truncations, infos = envs.step(envs.sample_actions())
        assert (infos["to_play"] == 0).all()
        np.testing.assert_array_equal(rewards, infos["rewards"][:, 0])
        assert not (rewards[~(terminations | truncations)]).any()
        for i in np.flatnonzero(terminations | truncations):
            assert infos["final_obs"][i].shape == (412,)
        results.extend(rewards[terminations].tolist())
    assert 1.0 in results and -1.0 in results
    bad = VectorEnv(2, 37, opponent=lambda obs, masks: [0] * len(masks), first_player="P1")
    with pytest.raises(ValueError, match="one legal action index for each game"):
        bad.reset(seed=0)


def test_stable_baselines3_trains_on_both_environments() -> None:
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecMonitor

    from zertz.sb3 import VecEnv

    for env in (ZertzEnv(37, opponent="random"), VecMonitor(VecEnv(8, 37, seed=1))):
        model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=64, n_epochs=1, seed=0)
        model.learn(256)
        assert model.num_timesteps >= 256

    # Self-play on the vector environment, as docs/rl-libraries.md writes it: the learner's own
    # policy, batched, is the opponent.
    def opponent(observations: Any, masks: npt.NDArray[np.bool_]) -> Any:
        return selfplay.predict(observations, action_masks=masks)[0]

    vector = VecMonitor(VecEnv(8, 37, opponent=opponent, seed=2))
    selfplay = MaskablePPO("MlpPolicy", vector, n_steps=64, batch_size=64, n_epochs=1, seed=0)
    selfplay.learn(512)
    assert selfplay.num_timesteps >= 512
    sb3_env = VecEnv(4, 37, opponent="greedy", seed=3)
    sb3_env.reset()
    masks = np.stack(sb3_env.env_method("action_masks"))
    assert masks.shape == (4, zertz.action_space_size(37)) and sb3_env.has_attr("action_masks")
    ended = 0
    for _ in range(400):
        _, rewards, dones, infos = sb3_env.step(sb3_env.sample_actions())
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (412,)
            assert rewards[i] in (-1.0, 0.0, 1.0)
            ended += 1
    assert ended > 0


def test_evaluate_plays_paired_openings_and_reports_the_engines_elo() -> None:
    results = evaluate(first_legal, ["random", "greedy"], games=6, seed=4, progress=False)
    assert [r["opponent"] for r in results] == ["random", "greedy"]
    for r in results:
        assert r["wins"] + r["draws"] + r["losses"] == 6
        assert (r["elo"], r["elo_low"], r["elo_high"]) == zertz.elo(
            r["wins"], r["draws"], r["losses"]
        )
    # Games 2k and 2k + 1 share their opening.
    a = zertz.match_opening(37, seed=4, game=2, actions=3)
    b = zertz.match_opening(37, seed=4, game=3, actions=3)
    c = zertz.match_opening(37, seed=4, game=4, actions=3)
    assert a.to_text() == b.to_text() != c.to_text() and len(a.moves) == 3
    with pytest.raises(ValueError, match="not legal"):
        evaluate(lambda obs, mask: int(np.flatnonzero(~mask)[0]), ["random"], games=2)
    with pytest.raises(ValueError, match="games: must be at least 1 to evaluate, not 0"):
        evaluate(first_legal, ["random"], games=0)
    # The engine's ranges of a match, in its words.
    most = zertz.MAX_MATCH_GAMES
    with pytest.raises(ValueError, match=f"games: must be at most {most}"):
        evaluate(first_legal, ["random"], games=most + 1)
    with pytest.raises(ValueError, match="max_actions: must be at least 1"):
        evaluate(first_legal, ["random"], games=2, max_actions=0)
    with pytest.raises((ValueError, TypeError), match="opening_actions"):
        evaluate(first_legal, ["random"], games=2, opening_actions=-1)


@pytest.mark.engine
def test_evaluate_plays_the_games_of_zertz_match() -> None:
    # A deterministic engine player in the policy's place: evaluate's games are zertz.match's.
    mine = evaluate(
        zertz.Player("alphabeta:1"), ["random"], games=8, seed=7, opening_actions=2, progress=False
    )[0]
    theirs = zertz.match("alphabeta:1", "random", games=8, seed=7, opening_actions=2, threads=1)
    got = (mine["wins"], mine["draws"], mine["losses"])
    assert got == (theirs["wins"], theirs["draws"], theirs["losses"])
    assert mine["elo"] == pytest.approx(theirs["elo"])


@pytest.mark.engine
def test_a_network_plays_as_an_opponent() -> None:
    nn = player("nn:builtin:8", 37)
    assert nn.name == "nn:builtin:8"
    env = ZertzEnv(37, opponent="nn:builtin:8", first_player="P1")
    _, info = env.reset(seed=0)
    assert len(info["opponent_actions"]) == 1
    with pytest.raises(ValueError, match="plays"):
        nn.choose(zertz.Game(61))
