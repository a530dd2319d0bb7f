"""One conformance test for every RL front end: ``zertz.VecEnv`` (Rust), the Gymnasium vector and
single-game environments and the PettingZoo environment play the same actions and must report
the same rewards, ends and forfeits, those that the rules of an episode (``zertz.episode``) give,
computed here again from ``zertz.Game`` alone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt
import pytest

import zertz
from zertz.episode import Episode

pytest.importorskip("gymnasium")
pytest.importorskip("pettingzoo")

from zertz.gymnasium import VectorEnv, ZertzEnv
from zertz.pettingzoo import PLAYERS, ZertzAEC


class Result(NamedTuple):
    """One step as a front end reports it: who acted, the mover's reward, the other's (None
    where the front end reports only the mover's), the ends, the forfeit."""

    mover: str
    reward: float
    other: float | None
    terminated: bool
    truncated: bool
    illegal: bool


class Front(Protocol):
    name: str

    def mask(self) -> npt.NDArray[np.bool_]: ...
    def to_play(self) -> str: ...
    def step(self, action: int) -> Result: ...


class VecFront:
    name = "VecEnv"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.env = zertz.VecEnv(1, board, blitz, first_player="P0", max_steps=max_steps, seed=3)
        _, self.infos = self.env.reset(3)

    def mask(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.infos["legal_mask"][0])

    def to_play(self) -> str:
        return f"P{int(self.infos['to_play'][0])}"

    def step(self, action: int) -> Result:
        mover = self.to_play()
        _, rewards, terminated, truncated, self.infos = self.env.step([action])
        m = 0 if mover == "P0" else 1
        return Result(
            mover,
            float(rewards[0, m]),
            float(rewards[0, 1 - m]),
            bool(terminated[0]),
            bool(truncated[0]),
            bool(self.infos["illegal_action"][0]),
        )


class GymVectorFront(VecFront):
    name = "gymnasium VectorEnv"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.envs = VectorEnv(
            1, board, blitz, first_player="P0", max_steps=max_steps, seed=3, opponent=None
        )
        _, self.infos = self.envs.reset(seed=3)

    def step(self, action: int) -> Result:
        mover = self.to_play()
        _, rewards, terminated, truncated, self.infos = self.envs.step(np.array([action]))
        m = 0 if mover == "P0" else 1
        both = self.infos["rewards"][0]
        assert float(rewards[0]) == float(both[m]), "the reward is the mover's"
        return Result(
            mover,
            float(rewards[0]),
            float(both[1 - m]),
            bool(terminated[0]),
            bool(truncated[0]),
            bool(self.infos["illegal_action"][0]),
        )


class GymFront:
    name = "gymnasium ZertzEnv"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.env = ZertzEnv(board, blitz, max_steps=max_steps, first_player="P0", opponent=None)
        _, self.info = self.env.reset(seed=3)

    def mask(self) -> npt.NDArray[np.bool_]:
        return np.asarray(self.info["action_mask"]).astype(bool)

    def to_play(self) -> str:
        return str(self.info["to_play"])

    def step(self, action: int) -> Result:
        mover = self.to_play()
        _, reward, terminated, truncated, self.info = self.env.step(action)
        m = 0 if mover == "P0" else 1
        both = self.info["rewards"]
        assert float(reward) == both[m], "the reward is the mover's"
        return Result(
            mover, float(reward), both[1 - m], terminated, truncated, self.info["illegal_action"]
        )


class AecFront:
    name = "pettingzoo ZertzAEC"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.env = ZertzAEC(board, blitz, max_steps=max_steps)
        self.env.reset(seed=3)

    def mask(self) -> npt.NDArray[np.bool_]:
        observation = self.env.observe(self.env.agent_selection)
        return np.asarray(observation["action_mask"]).astype(bool)

    def to_play(self) -> str:
        return PLAYERS[self.env.agent_selection]

    def step(self, action: int) -> Result:
        agent = self.env.agent_selection
        rival = "player_1" if agent == "player_0" else "player_0"
        self.env.step(action)
        return Result(
            PLAYERS[agent],
            float(self.env.rewards[agent]),
            float(self.env.rewards[rival]),
            self.env.terminations[agent],
            self.env.truncations[agent],
            bool(self.env.infos[agent].get("illegal_action", False)),
        )


class EpisodeFront:
    name = "zertz.episode"

    def __init__(self, board: int, blitz: bool, max_steps: int) -> None:
        self.episode = Episode(board, blitz, "P0", max_steps)

    def mask(self) -> npt.NDArray[np.bool_]:
        return self.episode.game.legal_action_mask()

    def to_play(self) -> str:
        return self.episode.game.to_play

    def step(self, action: int) -> Result:
        s = self.episode.step(action)
        rival: Literal["P0", "P1"] = "P1" if s.mover == "P0" else "P0"
        return Result(
            s.mover,
            s.reward(s.mover),
            s.reward(rival),
            s.terminated,
            s.truncated,
            s.illegal,
        )


FRONTS: list[Callable[[int, bool, int], Front]] = [
    VecFront,
    GymVectorFront,
    GymFront,
    AecFront,
    EpisodeFront,
]


def reference(board: int, blitz: bool, max_steps: int, actions: list[int]) -> Iterator[Result]:
    """The rules, from ``zertz.Game`` alone: what each step of ``actions`` must report."""
    game = zertz.Game(board, blitz, "P0")
    for k, action in enumerate(actions, 1):
        mover = game.to_play
        if not game.legal_action_mask()[action]:
            yield Result(mover, -1.0, 1.0, True, False, True)
            return
        game.play(action)
        if game.outcome is not None:
            won = 0.0 if game.outcome == "draw" else (1.0 if game.outcome == mover else -1.0)
            yield Result(mover, won, -won, True, False, False)
            return
        yield Result(mover, 0.0, 0.0, False, k >= max_steps, False)
        if k >= max_steps:
            return


def script(board: int, blitz: bool, seed: int, illegal_at: int | None) -> list[int]:
    """Random legal actions to the end of a game (at most 1000), one illegal at ``illegal_at``."""
    rng = np.random.default_rng(seed)
    game = zertz.Game(board, blitz, "P0")
    actions: list[int] = []
    while not game.is_over and len(actions) < 1000:
        mask = game.legal_action_mask()
        if len(actions) == illegal_at:
            actions.append(int(rng.choice(np.flatnonzero(~mask))))
            break
        action = int(rng.choice(np.flatnonzero(mask)))
        actions.append(action)
        game.play(action)
    return actions


CASES = [
    # (board, blitz, max_steps, seed, illegal_at): whole games, a truncation, forfeits.
    (37, False, 1000, 1, None),
    (48, True, 1000, 2, None),
    (61, False, 1000, 3, None),
    (37, False, 7, 4, None),
    (40, True, 1000, 5, 0),
    (37, False, 1000, 6, 5),
    (44, False, 1000, 7, 12),
]


@pytest.mark.parametrize(("board", "blitz", "max_steps", "seed", "illegal_at"), CASES)
@pytest.mark.parametrize("make", FRONTS, ids=lambda f: str(getattr(f, "name", f)))
def test_every_front_end_follows_the_rules_of_an_episode(
    make: Callable[[int, bool, int], Front],
    board: int,
    blitz: bool,
    max_steps: int,
    seed: int,
    illegal_at: int | None,
) -> None:
    actions = script(board, blitz, seed, illegal_at)
    expected = list(reference(board, blitz, max_steps, actions))
    assert expected[-1].terminated or expected[-1].truncated
    front = make(board, blitz, max_steps)
    for k, (action, want) in enumerate(zip(actions, expected, strict=False)):
        assert front.to_play() == want.mover, (front.name, k)
        legal = front.mask()
        assert bool(legal[action]) != want.illegal, (front.name, k)
        got = front.step(action)
        if got.other is None:
            want = want._replace(other=None)
        assert got == want, (front.name, k)


@pytest.mark.parametrize("make", FRONTS, ids=lambda f: str(getattr(f, "name", f)))
def test_an_index_outside_the_action_space_is_an_error_and_plays_nothing(
    make: Callable[[int, bool, int], Front],
) -> None:
    front = make(37, False, 1000)
    size = zertz.action_space_size(37)
    for bad in (size, size + 5):
        with pytest.raises(ValueError, match="out of range"):
            front.step(bad)
    assert front.to_play() == "P0"
    action = int(np.flatnonzero(front.mask())[0])
    got = front.step(action)
    assert (got.mover, got.reward, got.terminated, got.illegal) == ("P0", 0.0, False, False)


def test_the_episode_names_any_int_out_of_range_and_plays_nothing() -> None:
    # The engine's Episode takes any Python int (numpy's too) and names one that is no index of
    # the action space, or no step limit, with a ValueError: never an OverflowError.
    episode = Episode(37)
    size = zertz.action_space_size(37)
    for bad in (-1, size, 2**70, -(2**70), np.int64(2**40)):
        with pytest.raises(ValueError, match=rf"action index {int(bad)} out of range 0\.\.{size}"):
            episode.step(bad)
    assert episode.steps == 0 and not episode.is_over
    for bad in (0, -1, 2**32, 2**70):
        with pytest.raises(ValueError, match="max_steps must be at least 1"):
            Episode(37, max_steps=bad)
    assert Episode(37, max_steps=2**32 - 1).max_steps == 2**32 - 1
