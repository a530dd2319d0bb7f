"""League self-play (zertz.league): a pool of frozen snapshots of the learner, Rust's players and
the latest policy, drawn per game for each episode; every finished episode counted once against
the member it was played against, in ``results()`` and the model's logger; seeded draws
reproducible; the example runs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback, CallbackList
from stable_baselines3.common.logger import KVWriter, Logger
from stable_baselines3.common.vec_env import VecMonitor

from zertz.league import League, LeagueVecEnv
from zertz.sb3 import VecEnv

from conftest import run_example

#: Learner steps of one rollout of the tiny model: 16 steps in each of 4 games.
ROLLOUT = 64


@pytest.fixture(autouse=True, scope="module")
def _one_thread() -> Iterator[None]:
    """Torch on one thread: these networks are tiny, and torch's threads waiting on each other
    on busy cores cost ten times the work."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def tiny(env: Any, seed: int = 0) -> MaskablePPO:
    return MaskablePPO(
        "MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=2, seed=seed, verbose=0
    )


class Capture(KVWriter):
    """What the logger dumps."""

    def __init__(self) -> None:
        self.dumps: list[dict[str, Any]] = []

    def write(
        self, key_values: dict[str, Any], key_excluded: dict[str, Any], step: int = 0
    ) -> None:
        self.dumps.append(dict(key_values))

    def close(self) -> None:
        pass


class Watch(BaseCallback):
    """The pool at each rollout's start (after the league's own callback), and every episode's
    end as the infos give it."""

    def __init__(self, league: League) -> None:
        super().__init__()
        self.league = league
        self.pools: list[list[str]] = []
        self.ends: list[tuple[str, float]] = []

    def _on_rollout_start(self) -> None:
        self.pools.append(self.league.pool)

    def _on_step(self) -> bool:
        for i in np.flatnonzero(self.locals["dones"]):
            info = self.locals["infos"][i]
            self.ends.append((info["league_opponent"], float(info["episode"]["r"])))
        return True


@dataclass
class Run:
    model: MaskablePPO
    league: League
    monitor: VecMonitor
    watch: Watch
    capture: Capture
    results: list[dict[str, Any]] = field(default_factory=list)
    episodes: int = 0


@pytest.fixture(scope="module")
def run() -> Run:
    """Six rollouts of a tiny MaskablePPO in a league of at most 2 snapshots (one a rollout),
    with greedy, and the latest policy a quarter of the time."""
    monitor = VecMonitor(LeagueVecEnv(4, board=37, seed=0))
    model = tiny(monitor)
    capture = Capture()
    model.set_logger(Logger(None, [capture]))
    league = League(
        model,
        pool_size=2,
        snapshot_every=ROLLOUT,
        engines=["greedy"],
        latest_probability=0.25,
        seed=0,
    )
    watch = Watch(league)
    model.learn(6 * ROLLOUT, callback=CallbackList([league, watch]))
    return Run(model, league, monitor, watch, capture, league.results(), monitor.episode_count)


def by_name(results: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["opponent"]: r for r in results}


def test_the_pool_grows_and_is_capped(run: Run) -> None:
    assert run.watch.pools == [
        ["snapshot-0", "greedy"],
        ["snapshot-0", "snapshot-1", "greedy"],
        ["snapshot-1", "snapshot-2", "greedy"],
        ["snapshot-2", "snapshot-3", "greedy"],
        ["snapshot-3", "snapshot-4", "greedy"],
        ["snapshot-4", "snapshot-5", "greedy"],
    ]
    results = by_name(run.results)
    assert [r["opponent"] for r in run.results] == [
        *(f"snapshot-{k}" for k in range(6)),
        "greedy",
        "latest",
    ]
    assert [results[f"snapshot-{k}"]["steps"] for k in range(6)] == [k * ROLLOUT for k in range(6)]
    assert [results[f"snapshot-{k}"]["in_pool"] for k in range(6)] == [False] * 4 + [True] * 2
    assert results["greedy"]["kind"] == "engine" and results["latest"]["kind"] == "latest"


def test_results_count_every_finished_episode_once(run: Run) -> None:
    assert run.episodes > 0
    assert sum(r["games"] for r in run.results) == run.episodes == len(run.watch.ends)
    for r in run.results:
        assert r["games"] == r["wins"] + r["draws"] + r["losses"]
    # Each against the member the game was played against, by its result.
    counted = Counter((name, int(np.sign(reward))) for name, reward in run.watch.ends)
    for r in run.results:
        name = r["opponent"]
        assert (r["wins"], r["draws"], r["losses"]) == (
            counted[name, 1],
            counted[name, 0],
            counted[name, -1],
        )
    # Every episode is drawn once: one per game at the reset, then one per finished episode.
    assert sum(r["drawn"] for r in run.results) == 4 + run.episodes


def test_the_opponents_drawn_include_the_engine_players_and_the_latest_policy(run: Run) -> None:
    results = by_name(run.results)
    assert results["greedy"]["drawn"] > 0 and results["latest"]["drawn"] > 0
    assert any(results[f"snapshot-{k}"]["drawn"] > 0 for k in range(6))
    assert "greedy" in {name for name, _ in run.watch.ends}


def test_the_logger_records_the_league(run: Run) -> None:
    dumps = [d for d in run.capture.dumps if "league/snapshots" in d]
    assert len(dumps) == 6
    last = dumps[-1]
    assert last["league/snapshots"] == 6 and last["league/pool"] == 3
    for r in run.results:
        if r["in_pool"]:
            for key in ("wins", "draws", "losses"):
                assert last[f"league/{r['opponent']}/{key}"] == r[key]
    assert "league/snapshot-0/wins" not in last  # dropped from the pool
    assert "league/snapshot-0/wins" in dumps[0]


def test_snapshots_are_frozen_copies(run: Run) -> None:
    snapshots = run.league.snapshots
    assert len(snapshots) == 2
    before = [[p.detach().clone() for p in s.parameters()] for s in snapshots]
    learner = list(run.model.policy.parameters())
    for snapshot in snapshots:
        assert snapshot is not run.model.policy and not snapshot.training
        for p, q in zip(snapshot.parameters(), learner, strict=True):
            assert not p.requires_grad and p.data_ptr() != q.data_ptr()
    # The learner trained after the last snapshot: its weights have moved on.
    assert any(
        not torch.equal(p, q) for p, q in zip(snapshots[-1].parameters(), learner, strict=True)
    )
    run.model.learn(2 * ROLLOUT, callback=run.league, reset_num_timesteps=False)
    for snapshot, old in zip(snapshots, before, strict=True):
        assert all(torch.equal(p, q) for p, q in zip(snapshot.parameters(), old, strict=True))
    assert run.league.pool == ["snapshot-6", "snapshot-7", "greedy"]


def test_each_game_keeps_its_opponent_for_its_episode() -> None:
    env = LeagueVecEnv(16, board=37, seed=3)
    league = League(
        tiny(env), engines=["random", "greedy"], latest_probability=0.3, seed=3, pool_size=1
    )
    env.reset()
    opponents = env.opponents
    assert len(set(opponents)) > 1  # drawn per game, not for the batch
    ended = 0
    for _ in range(60):
        assert env.action_masks().any(axis=1).all()
        _, rewards, dones, infos = env.step(env.sample_actions())
        for i in range(16):
            if dones[i]:
                ended += 1
                assert infos[i]["league_opponent"] == opponents[i]
                assert "terminal_observation" in infos[i]
            else:
                assert env.opponents[i] == opponents[i] and rewards[i] == 0
        opponents = env.opponents
    assert ended > 0
    assert {r["opponent"] for r in league.results() if r["drawn"]} == {
        "snapshot-0",
        "random",
        "greedy",
        "latest",
    }


def test_seeded_draws_are_reproducible() -> None:
    def draws(seed: int) -> tuple[list[str], list[dict[str, Any]]]:
        env = VecMonitor(LeagueVecEnv(4, board=37, seed=0))
        model = tiny(env)
        league = League(model, snapshot_every=ROLLOUT, engines=["random"], seed=seed)
        model.learn(2 * ROLLOUT, callback=league)
        return league.env.opponents, league.results()

    assert draws(5) == draws(5)
    first = LeagueVecEnv(32, board=37, seed=0)
    League(tiny(first), engines=["random", "greedy"], seed=1)
    again = LeagueVecEnv(32, board=37, seed=0)
    League(tiny(again), engines=["random", "greedy"], seed=1)
    other = LeagueVecEnv(32, board=37, seed=0)
    League(tiny(other), engines=["random", "greedy"], seed=2)
    for env in (first, again, other):
        env.reset()
    assert first.opponents == again.opponents != other.opponents


def test_pfsp_draws_most_the_members_the_learner_loses_to() -> None:
    env = LeagueVecEnv(1, board=37, seed=0)
    league = League(
        tiny(env), engines=["random", "greedy"], latest_probability=0, draw="pfsp", seed=0
    )
    strong, weak = league._by_name["greedy"], league._by_name["random"]
    strong.losses, weak.wins = 40, 40
    drawn = Counter(m.name for m in league._draw(2000))
    assert drawn["greedy"] > 10 * drawn["random"] and "latest" not in drawn
    assert drawn["snapshot-0"] > drawn["random"]  # no games yet: in between


def test_a_failing_opponent_fails_the_step_until_a_reset() -> None:
    class Illegal:
        name = "illegal"

        def choose(self, game: Any) -> int:
            return int(np.flatnonzero(~game.legal_action_mask())[0])

    env = LeagueVecEnv(4, board=37, seed=0, first_player="P1")
    league = League(tiny(env), engines=["random"], latest_probability=0, seed=0)
    env.reset()
    league._engines[0].player = Illegal()
    with pytest.raises(ValueError, match=r"opponent 'random' answered action .* not legal"):
        for _ in range(40):
            env.step(env.sample_actions())
    with pytest.raises(RuntimeError, match="needs a reset"):
        env.step(env.sample_actions())


def test_the_settings_are_checked() -> None:
    env = LeagueVecEnv(2, board=37, seed=0)
    model = tiny(env)
    bad: list[tuple[dict[str, Any], str]] = [
        ({"pool_size": 0}, "pool_size: must be an integer of at least 1"),
        ({"snapshot_every": 0}, "snapshot_every: must be an integer of at least 1"),
        ({"latest_probability": 1.5}, r"latest_probability: must be a probability \(0 to 1\)"),
        ({"latest_probability": -0.1}, "latest_probability: must be a probability"),
        ({"draw": "elo"}, "draw must be 'uniform' or 'pfsp', not 'elo'"),
        ({"engines": ["nonsense"]}, "engines: 'nonsense': "),
        ({"engines": ["mcts:10", "MCTS: 10"]}, "engines name one player twice"),
    ]
    for kwargs, message in bad:
        with pytest.raises(ValueError, match=message):
            League(model, **kwargs)
    with pytest.raises(TypeError, match="engines must be player specs"):
        League(model, engines=[3])  # type: ignore[list-item]
    with pytest.raises(RuntimeError, match="no league yet"):
        env.reset()
    League(model, engines="greedy")  # one spec
    with pytest.raises(ValueError, match="already has its league"):
        League(model)
    with pytest.raises(ValueError, match=r"plays the opponents of a zertz\.league\.LeagueVecEnv"):
        League(tiny(VecEnv(2, board=37, opponent="random")))
    with pytest.raises(TypeError, match="must be sb3-contrib's MaskablePPO"):
        League(PPO("MlpPolicy", LeagueVecEnv(2, board=37), n_steps=16, batch_size=32))
    with pytest.raises(TypeError, match="takes no opponent"):
        LeagueVecEnv(2, board=37, opponent="greedy")


def test_the_example_runs() -> None:
    result = run_example(
        "league_ppo.py",
        *("--steps", "2000", "--envs", "8", "--games", "4", "--snapshot-every", "512"),
        *("--engines", "greedy"),
    )
    assert set(result) == {"steps", "seconds", "results", "league"}
    assert result["steps"] >= 2000 and result["seconds"] > 0
    assert [r["opponent"] for r in result["results"]] == ["random", "greedy"]
    assert all(r["wins"] + r["draws"] + r["losses"] == 4 for r in result["results"])
    league = {r["opponent"]: r for r in result["league"]}
    assert {"snapshot-0", "snapshot-1", "greedy", "latest"} <= set(league)
    assert sum(r["games"] for r in result["league"]) > 0
