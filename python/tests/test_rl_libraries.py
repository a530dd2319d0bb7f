"""What RL libraries need of zertz, tried as their users try it: a single-agent environment
against any player (the learner sees its losses), registered ids, masks where sb3-contrib looks,
checkers without warnings, Stable-Baselines3's VecEnv, and an Elo for any Python policy on the
scale of ``zertz match``."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import zertz
from zertz._zertz import play_match_game
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
        assert info["to_play"] == 0, "the learner (P0) is to move"
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
        "player": zertz.Bot("greedy", seed=3),
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
    env.reset(seed=0)
    assert len(env.opponent_actions) == 1 and env.game.to_play == "P0"
    firsts = set()
    for seed in range(20):
        env = ZertzEnv(37, opponent="random", first_player="random")
        env.reset(seed=seed)
        firsts.add(len(env.opponent_actions))
    assert firsts == {0, 1}, "the learner's side is drawn per episode"
    # A capture chain of the opponent is played whole inside the step.
    env = ZertzEnv(37, opponent="greedy", first_player="P0")
    rng = np.random.default_rng(5)
    chains = 0
    for seed in range(6):
        env.reset(seed=seed)
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(env.action_masks())))
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            chains += len(env.opponent_actions) > 1
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
    assert obs.shape == (zertz.observation.observation_size(61),)
    assert env.unwrapped.action_masks().shape == (zertz.action_space_size(61),)
    envs = gymnasium.make_vec(ENV_ID, num_envs=8, vectorization_mode="vector_entry_point")
    assert isinstance(envs, VectorEnv)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (8, zertz.observation.observation_size(37))
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


def test_a_list_of_specs_gives_each_game_its_own_opponent() -> None:
    # Game i plays specs[i % len]: each game's play is what the same spec alone plays there
    # (the same seeds), and the games of the other spec differ.
    n = 4

    def played(opponent: Any) -> list[npt.NDArray[np.float32]]:
        envs = VectorEnv(n, 37, opponent=opponent, seed=7, threads=1, first_player="P1")
        obs, _ = envs.reset(seed=7)
        seen = [obs]
        for _ in range(12):
            obs, *_ = envs.step(np.array([first_legal(None, m) for m in envs.action_masks()]))
            seen.append(obs)
        return seen

    mixed, greedy, rand = played(["greedy", "random"]), played("greedy"), played("random")
    for step, (m, g, r) in enumerate(zip(mixed, greedy, rand, strict=True)):
        np.testing.assert_array_equal(m[0::2], g[0::2], err_msg=f"step {step}")
        np.testing.assert_array_equal(m[1::2], r[1::2], err_msg=f"step {step}")
    assert any(not np.array_equal(g[1::2], r[1::2]) for g, r in zip(greedy, rand, strict=True))
    assert np.array_equal(played(("greedy",) * 3 + ("random",))[-1][3], rand[-1][3])
    with pytest.raises(ValueError, match=r"1 to num_envs \(4\) of them.*not 0"):
        VectorEnv(n, 37, opponent=[])
    with pytest.raises(ValueError, match=r"not 5"):
        VectorEnv(n, 37, opponent=["random"] * 5)
    with pytest.raises(ValueError, match="nn:builtin"):
        VectorEnv(n, 37, opponent=["random", "nn:builtin"])
    with pytest.raises(TypeError, match="a list of specs"):
        VectorEnv(n, 37, opponent=["random", 3])  # type: ignore[list-item]


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
    with pytest.raises(ValueError, match=r"^game 0: the opponent answered action 0 \(.*not legal"):
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
    # Games 2k and 2k + 1 share their opening, the policy on each side in turn.
    games = [
        play_match_game(first_legal, "random", g, seed=4, opening_actions=3) for g in (2, 3, 4)
    ]
    a, b, c = (g["record"]["moves"][:3] for g in games)
    assert a == b != c
    assert [g["a_is_p0"] for g in games] == [True, False, True]
    assert games[0]["record"]["players"] == ["policy", "random"]
    with pytest.raises(ValueError, match="not legal"):
        evaluate(lambda obs, mask: int(np.flatnonzero(~mask)[0]), ["random"], games=2)
    with pytest.raises(ValueError, match="games: must be at least 1 to evaluate, not 0"):
        evaluate(first_legal, ["random"], games=0)
    # Rust's ranges of a match, in its words.
    most = zertz.MAX_MATCH_GAMES
    with pytest.raises(ValueError, match=f"games: must be at most {most}"):
        evaluate(first_legal, ["random"], games=most + 1)
    with pytest.raises(ValueError, match="max_actions: must be at least 1"):
        evaluate(first_legal, ["random"], games=2, max_actions=0)
    with pytest.raises((ValueError, TypeError), match="opening_actions"):
        evaluate(first_legal, ["random"], games=2, opening_actions=-1)


@pytest.mark.engine
def test_evaluate_plays_the_games_of_zertz_match() -> None:
    # A deterministic Rust player in the policy's place: evaluate's games are zertz.match's.
    mine = evaluate(
        zertz.Bot("alphabeta:1"), ["random"], games=8, seed=7, opening_actions=2, progress=False
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
    env.reset(seed=0)
    assert len(env.opponent_actions) == 1
    with pytest.raises(ValueError, match="plays"):
        nn.choose(zertz.Game(61))


class _Counting:
    """A policy that plays the first legal action and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, observation: Any, mask: npt.NDArray[np.bool_]) -> int:
        self.calls += 1
        return first_legal(observation, mask)


@pytest.mark.parametrize(
    ("opponents", "settings", "error", "words"),
    [
        # The bad opponent last: the good ones before it are not played first.
        (["random", "greedy", "alphabeta:1", "mcts:0"], {}, ValueError, "opponent 'mcts:0': "),
        (["random", "nobody"], {}, ValueError, "opponent 'nobody': "),
        # One player in two spellings (Rust's canonical specs are compared).
        (["random", "mcts:100", "MCTS: 100"], {}, ValueError, "'mcts:100' and 'MCTS: 100'"),
        (["random", "random"], {}, ValueError, "name one player twice"),
        (["random", 'cmd:/bin/sh -c "exit 0"'], {}, ValueError, "ended before it answered"),
        ([], {}, ValueError, "opponents: name at least one player"),
        (["random", 3], {}, TypeError, "player specs"),
        (["random"], {"games": 0}, ValueError, "games: must be at least 1"),
        (["random"], {"games": -2}, ValueError, "games: must not be negative"),
        (["random"], {"board": 38}, ValueError, "no 38-ring board"),
    ],
)
def test_evaluate_checks_everything_before_the_first_game(
    opponents: list[Any], settings: dict[str, Any], error: type[Exception], words: str
) -> None:
    policy = _Counting()
    settings = {"games": 2, **settings}
    with pytest.raises(error, match=re.escape(words)) as caught:
        evaluate(policy, opponents, progress=False, **settings)
    assert "\n" not in str(caught.value)
    assert policy.calls == 0, "no game was played"


@pytest.mark.engine
@pytest.mark.parametrize(
    ("opponents", "board", "words"),
    [
        (["random", "nn:/nonexistent"], 37, "opponent 'nn:/nonexistent': cannot read model"),
        # The built-in network plays 37 rings only.
        (["random", "nn:builtin:8"], 61, "opponent 'nn:builtin:8': model builtin was trained"),
    ],
)
def test_evaluate_checks_each_network_before_the_first_game(
    opponents: list[str], board: int, words: str
) -> None:
    policy = _Counting()
    with pytest.raises(ValueError, match=re.escape(words)):
        evaluate(policy, opponents, games=2, board=board, progress=False)
    assert policy.calls == 0


def test_evaluate_refuses_a_policy_that_is_neither_callable_nor_a_player() -> None:
    with pytest.raises(TypeError, match="policy must be a callable or a player"):
        evaluate(3, ["random"], games=2, progress=False)  # type: ignore[arg-type]


class _FirstLegal:
    """A player that answers the first legal action; ``look`` plays it on the game it is given
    first (an honest look-ahead)."""

    name = "first-legal"

    def __init__(self, look: bool) -> None:
        self.look = look

    def choose(self, game: zertz.Game) -> int:
        action = int(game.legal_action_indices()[0])
        if self.look:
            game.play(action)
        return action


def test_evaluate_gives_each_player_a_copy_of_the_game() -> None:
    """A player that plays on the game it is given plays its own games: the results are those
    of the same player that does not, and nothing fails."""
    plain = evaluate(_FirstLegal(False), ["mcts:20"], games=4, seed=3, progress=False)
    looking = evaluate(_FirstLegal(True), ["mcts:20"], games=4, seed=3, progress=False)
    assert looking == plain

    # A policy's mask is a copy too: marking every action legal changes nothing.
    def widening(observation: Any, mask: npt.NDArray[np.bool_]) -> int:
        action = first_legal(observation, mask)
        mask[:] = True
        return action

    assert evaluate(widening, ["mcts:20"], games=4, seed=3, progress=False) == plain


def test_evaluate_names_the_side_whose_answer_was_illegal() -> None:
    def illegal(observation: Any, mask: npt.NDArray[np.bool_]) -> int:
        return int(np.flatnonzero(~mask)[0])

    with pytest.raises(ValueError, match=r"^the policy \(game 0\) answered action \d+, which"):
        evaluate(illegal, ["random"], games=2, progress=False)

    class Illegal:
        name = "illegal"

        def choose(self, game: zertz.Game) -> int:
            return int(np.flatnonzero(~game.legal_action_mask())[0])

    # Rust's players answer legal actions; a Python player that does not stands for one.
    with pytest.raises(
        ValueError, match=r"^the opponent 'x' \(game 1\) answered action \d+, which"
    ):
        play_match_game(first_legal, Illegal(), 1, who=("the policy", "the opponent 'x'"))


def test_the_deprecated_match_helpers_warn() -> None:
    with pytest.warns(DeprecationWarning, match="zertz.match_opening is deprecated"):
        opening = zertz.match_opening(37, seed=4, game=2, actions=3)
    assert len(opening.moves) == 3
    with pytest.warns(DeprecationWarning, match="zertz.match_player_seed is deprecated"):
        assert isinstance(zertz.match_player_seed(4, 2, 1), int)
    assert "match_opening" not in zertz.__all__


#: A program that runs ``zertz.evaluate`` against ``sys.argv[1]`` on ``sys.argv[2]`` rings and
#: says "searching" when its policy first answers (the opponent searches next); with
#: ``sys.argv[3] == "term"`` a SIGTERM handler raises SystemExit, as a training run's does.
_EVALUATE_UNTIL_STOPPED = """
import signal, sys
from zertz.agents import evaluate

said = False
def policy(observation, mask):
    global said
    if not said:
        print("searching", flush=True)
        said = True
    return int(mask.argmax())

if sys.argv[3] == "term":
    def stop(signum, frame):
        raise SystemExit("terminated")
    signal.signal(signal.SIGTERM, stop)
evaluate(policy, [sys.argv[1]], games=2, board=int(sys.argv[2]), progress=False)
print("finished", flush=True)
"""


@pytest.mark.parametrize(
    ("sent", "last_line", "status"),
    [
        # Python ends by the signal after an unhandled KeyboardInterrupt.
        (signal.SIGINT, "KeyboardInterrupt", -signal.SIGINT),
        # An unhandled SystemExit prints its message.
        (signal.SIGTERM, "terminated", 1),
    ],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_stops_the_search_of_an_evaluation(sent: int, last_line: str, status: int) -> None:
    """Ctrl-C (and SIGTERM where a handler raises) reaches the opponent's search: a search that
    would run for hours (alphabeta to depth 12 on 61 rings) ends with the signal's exception.
    The bound only catches a search that never stops: it says nothing of the speed."""
    kind = "term" if sent == signal.SIGTERM else "int"
    child = subprocess.Popen(
        [sys.executable, "-c", _EVALUATE_UNTIL_STOPPED, "alphabeta:12", "61", kind],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "searching\n"
        time.sleep(1)  # into the search (a later signal still stops it)
        child.send_signal(sent)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert "finished" not in out
    assert err.strip().splitlines()[-1] == last_line, err
    assert child.returncode == status


def test_evaluate_plays_the_engines_match_game_with_python_on_one_side() -> None:
    """A Python player in the policy's place plays the games Rust's own player plays
    there: one match loop, Rust's."""
    mine = evaluate(zertz.Bot("alphabeta:1"), ["random"], games=6, seed=7, progress=False)[0]
    engine = [
        play_match_game("alphabeta:1", "random", g, seed=7, opening_actions=2)["a_score"]
        for g in range(6)
    ]
    assert mine["wins"] + 0.5 * mine["draws"] == sum(engine)
    assert mine["wins"] == engine.count(1.0) and mine["losses"] == engine.count(0.0)


class _Refusal(Exception):
    pass


def test_a_policys_exception_passes_through_evaluate_unchanged() -> None:
    def refusing(observation: Any, mask: npt.NDArray[np.bool_]) -> int:
        assert set(observation) == {"planes", "globals"}
        raise _Refusal("no")

    with pytest.raises(_Refusal, match=r"^no$"):
        evaluate(refusing, ["greedy"], games=2, observation="dict", progress=False)
    with pytest.raises(ValueError, match=r"^the policy \(game 0\) answered 1.5, not an action"):
        evaluate(lambda obs, mask: 1.5, ["random"], games=2, progress=False)


def test_player_is_the_deprecated_name_of_bot() -> None:
    with pytest.warns(DeprecationWarning, match="use zertz.Bot"):
        old = zertz.Player
    assert old is zertz.Bot and "Player" not in zertz.__all__
    assert repr(zertz.Bot("greedy")) == 'Bot("greedy")'


def test_search_player_is_the_deprecated_name_of_search_bot() -> None:
    import zertz.search_policy

    with pytest.warns(DeprecationWarning, match="use zertz.SearchBot"):
        old = zertz.SearchPlayer
    assert old is zertz.SearchBot and "SearchPlayer" not in zertz.__all__
    with pytest.warns(DeprecationWarning, match="use SearchBot"):
        assert zertz.search_policy.SearchPlayer is zertz.SearchBot


def test_the_episode_module_is_deprecated() -> None:
    sys.modules.pop("zertz.episode", None)
    with pytest.warns(DeprecationWarning, match="use zertz.Episode and zertz.observation"):
        import zertz.episode
    assert zertz.episode.Episode is zertz.Episode
    assert zertz.episode.flatten is zertz.observation.flatten
