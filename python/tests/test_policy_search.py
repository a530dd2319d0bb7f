"""Search around any policy (``zertz.search_policy``): a library's policy-value function as the
evaluator of ``zertz.MCTS``, a player that searches with it, its batched form for the vector
environments, and a Stable-Baselines3 model's logits and values."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import zertz
from zertz.agents import PlayerLike
from zertz.observation import flatten
from zertz.search_policy import (
    PolicyEvaluator,
    SearchBot,
    game_from_observation,
    sb3_policy_value,
)

Answer = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]

#: P0 to move, one white marble on d4, each side one white captured: a grey on d5 lets P1
#: capture the white (``d5xd3``), a marble far from d4 gives nothing away.
QUIET = "37 standard ..../...../....../...w.../....../...../.... 3/8/10 1/0/0 1/0/0 P0 - 0"
#: P0 to move with three whites captured and two captures to choose from: ``d4xd2`` takes the
#: white (four whites: P0 wins), ``d3xd5`` the grey (the game goes on).
WINNING_CAPTURE = (
    "37 standard ..../...../....../..wg.../....../...../.... 2/7/10 3/0/0 0/0/0 P0 - 0"
)


def closer_to_a_win(observations: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """A fair heuristic value of flat observations: how much nearer the mover is to a win set
    than the opponent (globals 9..13 and 13..17: each side's distance to each win set)."""
    g = observations[:, -20:]
    own, other = g[:, 9:13].min(axis=1), g[:, 13:17].min(axis=1)
    values: npt.NDArray[np.float32] = np.tanh(3.0 * (other - own)).astype(np.float32)
    return values


def preferring(
    preferences: dict[int, float], value: bool = True
) -> Callable[[npt.NDArray[np.float32], npt.NDArray[np.bool_]], Answer]:
    """A policy-value function whose logits are ``preferences`` (0 elsewhere) and whose value is
    :func:`closer_to_a_win` (or 0 without ``value``)."""

    def policy(observations: npt.NDArray[np.float32], masks: npt.NDArray[np.bool_]) -> Answer:
        logits = np.zeros(masks.shape, dtype=np.float32)
        for action, logit in preferences.items():
            logits[:, action] = logit
        if value:
            return logits, closer_to_a_win(observations)
        return logits, np.zeros(len(masks), dtype=np.float32)

    return policy


def uniform(observations: Any, masks: npt.NDArray[np.bool_]) -> Answer:
    return np.zeros(masks.shape, dtype=np.float32), np.zeros(len(masks), dtype=np.float32)


def test_search_refuses_the_policys_blunder() -> None:
    """The policy's favourite move gives the opponent a capture; its value sees the capture two
    actions later. The raw policy plays the blunder, the search a move that gives nothing away,
    and with a value that says nothing the search follows the policy: what changed is search."""
    game = zertz.Game.from_text(QUIET)
    blunder, quiet = game.action_index("Gd5,a1"), game.action_index("Ga1,g1")
    policy = preferring({blunder: 8.0, quiet: 6.0})
    obs = flatten(*game.encode())[None]
    logits, _ = policy(obs, game.legal_action_mask()[None])
    assert int(logits[0].argmax()) == blunder  # the raw policy's move

    searcher = SearchBot(policy, simulations=200)
    move = searcher.choose(game)
    assert move != blunder and game.legal_action_mask()[move]
    after = game.clone()
    after.play(move)
    assert all("x" not in a for a in after.legal_actions()), "the opponent captures nothing"
    policies, _, visits = searcher.search([game])
    assert policies[0, blunder] < policies[0, quiet] and visits[0] == 200
    assert searcher.evaluator.calls > 0 and searcher.evaluator.positions >= 200

    blind = SearchBot(preferring({blunder: 8.0, quiet: 6.0}, value=False), simulations=200)
    assert blind.choose(game) == blunder


def test_search_finds_the_win_the_policy_misses() -> None:
    game = zertz.Game.from_text(WINNING_CAPTURE)
    wins, goes_on = game.action_index("d4xd2"), game.action_index("d3xd5")
    assert sorted(game.legal_action_indices().tolist()) == sorted([wins, goes_on])
    move = SearchBot(preferring({goes_on: 5.0}), simulations=50).choose(game)
    assert move == wins
    game.play(move)
    assert game.outcome == "P0"


def test_a_search_player_plays_matches_and_as_an_environments_opponent() -> None:
    pytest.importorskip("gymnasium")
    from zertz.gymnasium import ZertzEnv

    searcher: PlayerLike = SearchBot(preferring({}), simulations=8, seed=3)
    assert searcher.name == "policy+mcts:8"
    assert SearchBot(uniform, 8, name="mine").name == "mine"
    result = zertz.evaluate(searcher, ["random"], games=2, progress=False)[0]
    assert result["games"] == 2 and result["wins"] + result["draws"] + result["losses"] == 2

    env = ZertzEnv(board=37, opponent=searcher, first_player="P1")
    _, info = env.reset(seed=0)
    assert len(env.game.moves) == 1 and env.game.to_play == "P0"  # the search's first move
    for _ in range(6):
        _, _, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))
        if terminated or truncated:
            break
        assert env.game.to_play == "P0"  # the search answered
    assert env.episode.failure is None
    won = zertz.Game.from_text(WINNING_CAPTURE)
    won.play("d4xd2")
    with pytest.raises(ValueError, match=r"game 0 is over \(P0\): there is no move to choose"):
        searcher.choose(won)


def test_temperature_draws_seeded_moves_among_the_searched() -> None:
    game = zertz.Game()
    moves = [SearchBot(uniform, 16, temperature=1.0, seed=s).choose(game) for s in range(6)]
    again = [SearchBot(uniform, 16, temperature=1.0, seed=s).choose(game) for s in range(6)]
    assert moves == again and len(set(moves)) > 1
    assert all(game.legal_action_mask()[m] for m in moves)
    # A forced move (one capture: d1 over d2) is answered without a search.
    forced = zertz.Game.from_text(WINNING_CAPTURE.replace("..wg...", "wg....."))
    counted = PolicyEvaluator(uniform)
    assert SearchBot(counted, 16).choose(forced) == forced.action_index("d1xd3")
    assert counted.calls == 0


def test_a_batched_opponent_searches_every_game_of_a_vector_env_at_once() -> None:
    pytest.importorskip("gymnasium")
    from zertz.gymnasium import VectorEnv

    sizes: list[int] = []

    def counting(observations: Any, masks: npt.NDArray[np.bool_]) -> Answer:
        sizes.append(len(masks))
        return uniform(observations, masks)

    for kind in ("flat", "dict"):
        sizes.clear()
        opponent = SearchBot(counting, 8, observation=kind).vector_opponent(37)
        envs = VectorEnv(4, board=37, opponent=opponent, observation=kind, seed=0)
        envs.reset(seed=0)
        for _ in range(4):
            envs.step(envs.sample_actions())
        assert envs.env.failure is None
        # Leaves of several games in one call: more than one tree's round (8 leaves).
        assert max(sizes) > 8
    with pytest.raises(ValueError, match="not flat ones of 61 rings"):
        flat_37 = np.zeros((1, 412), np.float32)
        SearchBot(uniform, 8).vector_opponent(61)(flat_37, np.ones((1, 5), dtype=bool))


def test_positions_are_rebuilt_from_observations_exactly() -> None:
    """Every position of random games on every board and marble set, chains included: the
    observation rebuilds it (the mover as P0), with its legal actions."""
    rng = np.random.default_rng(0)
    chains = 0
    for board in zertz.BOARDS:
        for blitz in (False, True):
            for _ in range(3):
                game = zertz.Game(board, blitz)
                while not game.is_over and len(game.moves) < 200:
                    fields = game.to_text().split()
                    if game.to_play == "P1":
                        fields[4], fields[5] = fields[5], fields[4]
                    fields[6] = "P0"
                    rebuilt = game_from_observation(*game.encode(), board, blitz)
                    assert rebuilt.to_text() == " ".join(fields)
                    chains += game.chain is not None
                    game.play(int(rng.choice(game.legal_action_indices())))
    assert chains > 0
    passed = zertz.Game.from_text(WINNING_CAPTURE.replace("P0 - 0", "P0 - 1"))
    assert game_from_observation(*passed.encode()).to_text() == passed.to_text()
    with pytest.raises(ValueError, match="planes"):
        game_from_observation(*zertz.Game(61).encode(), 37)
    planes, globals_ = zertz.Game().encode()
    planes[3] = planes[0]  # a white marble on every cell
    with pytest.raises(ValueError, match="no position of 37 rings"):
        game_from_observation(planes, globals_)


@pytest.mark.parametrize(
    ("answer", "needle"),
    [
        (lambda b, a: None, "answered NoneType, not \\(logits, values\\)"),
        (lambda b, a: (np.zeros((b, 3)), np.zeros(b)), r"logits have shape \(\d+, 3\)"),
        (lambda b, a: (np.zeros((b, a)), np.zeros((b, 2))), r"values have shape"),
        (lambda b, a: (np.full((b, a), np.nan), np.zeros(b)), "logit of legal action .* nan"),
        (lambda b, a: (np.zeros((b, a)), np.full(b, np.inf)), "value of position 0 is inf"),
        (lambda b, a: (np.zeros((b, a)), ["x"] * b), "its values are not an array of numbers"),
    ],
)
def test_a_policys_bad_answer_is_a_value_error_naming_it(
    answer: Callable[[int, int], Any], needle: str
) -> None:
    def broken(observations: Any, masks: npt.NDArray[np.bool_]) -> Any:
        return answer(*masks.shape)

    with pytest.raises(ValueError, match=f"^the policy 'broken'.*{needle}"):
        SearchBot(broken, 8).choose(zertz.Game())


def test_values_are_clipped_or_checked_and_illegal_logits_ignored() -> None:
    game = zertz.Game()
    mask = game.legal_action_mask()[None]
    planes, globals_ = (x[None] for x in game.encode())

    def overshoots(observations: Any, masks: npt.NDArray[np.bool_]) -> Answer:
        logits = np.where(masks, 0.0, -np.inf).astype(np.float32)  # a masked distribution's
        return logits, np.full(len(masks), 1.5, dtype=np.float32)

    logits, values = PolicyEvaluator(overshoots)(planes, globals_, mask)
    assert values.tolist() == [1.0] and np.isfinite(logits).all()
    with pytest.raises(ValueError, match=r"^the policy 'named': the value .* 1.5, outside"):
        PolicyEvaluator(overshoots, values="check", name="named")(planes, globals_, mask)
    # A critic's [B, 1] values are taken as [B].
    column = PolicyEvaluator(lambda o, m: (np.zeros(m.shape), np.zeros((len(m), 1))))
    assert column(planes, globals_, mask)[1].shape == (1,)
    with pytest.raises(ValueError, match="values must be 'clip' or 'check'"):
        PolicyEvaluator(uniform, values="scale")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="simulations: must be at least 2"):
        SearchBot(uniform, 1)
    with pytest.raises(ValueError, match="temperature"):
        SearchBot(uniform, temperature=-1.0)
    with pytest.raises(ValueError, match="observation must be"):
        SearchBot(uniform, observation="image")
    with pytest.raises(TypeError, match="callable"):
        PolicyEvaluator(3)  # type: ignore[arg-type]


def test_a_stable_baselines3_model_is_searched_with_its_own_logits_and_values() -> None:
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from zertz.sb3 import VecEnv

    env = VecEnv(4, board=37, opponent="random", seed=0)
    model = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=16,
        batch_size=64,
        n_epochs=1,
        policy_kwargs={"net_arch": [16]},
        seed=0,
    )
    model.learn(64)  # one update: logits of its own, not those of its initialisation
    fn = sb3_policy_value(model)
    assert fn.observation == "flat" and fn.maskable and fn.name == "MaskablePPO"
    games = [zertz.Game(), zertz.Game.from_text(QUIET)]
    obs = np.stack([flatten(*g.encode()) for g in games])
    masks = np.stack([g.legal_action_mask() for g in games])
    model.policy.set_training_mode(True)
    logits, values = fn(obs, masks)
    assert model.policy.training, "the policy's mode is restored"
    model.policy.set_training_mode(False)
    with torch.no_grad():
        tensor, _ = model.policy.obs_to_tensor(obs)
        distribution = model.policy.get_distribution(tensor, action_masks=masks).distribution
        assert isinstance(distribution, torch.distributions.Categorical)
        want = distribution.logits
        want_values = model.policy.predict_values(tensor)
    np.testing.assert_array_equal(logits, want.numpy())
    np.testing.assert_array_equal(values, want_values.numpy().reshape(-1))
    assert logits.shape == masks.shape and values.shape == (2,)

    searcher = SearchBot(fn, simulations=8)
    assert searcher.name == "MaskablePPO+mcts:8"
    result = zertz.evaluate(searcher, ["random"], games=2, progress=False)[0]
    assert result["wins"] + result["draws"] + result["losses"] == 2  # every move legal

    # PPO's distribution takes no masks; the search uses the legal actions' logits alone.
    plain = sb3_policy_value(PPO("MlpPolicy", env, n_steps=32, policy_kwargs={"net_arch": [8]}))
    assert not plain.maskable and plain(obs, masks)[0].shape == masks.shape
    with pytest.raises(ValueError, match="MaskablePPO has 4441 actions, the positions 11713"):
        fn(np.zeros((1, 412), np.float32), zertz.Game(61).legal_action_mask()[None])
    with pytest.raises(TypeError, match="not an actor-critic model"):
        sb3_policy_value(types.SimpleNamespace(policy=object()))
