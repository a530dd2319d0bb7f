"""The rules of an episode, for one game: what the single-game front ends (``zertz.gymnasium``'s
``ZertzEnv``, ``zertz.pettingzoo``'s ``ZertzAEC``) are built on. ``zertz.VecEnv`` keeps the same
rules for a batch in Rust, and ``tests/test_rl_conformance.py`` holds every front end to them:

- a step is one single action of the player to move (a placement, one hop of a capture chain,
  or a pass);
- a game that ends by the rules is *terminated*: +1 to the winner, -1 to the loser, 0 each for a
  draw (by passes or third repetition);
- after ``max_steps`` actions (``zertz.DEFAULT_MAX_STEPS`` by default) a game that goes on is
  *truncated*, rewards 0;
- an action of the action space that is not legal now *forfeits* the game: it is terminated, the
  player who chose it gets -1 and the other +1, and the step says so (``illegal``). A policy that
  ignores the mask loses, as in PettingZoo's classic games, and Gymnasium's checker (which
  samples without masks) runs;
- an index outside the action space is no action: ValueError, and nothing is played.

>>> e = Episode(37)
>>> step = e.step(e.game.action_space_size - 1)  # a pass, while marbles can be placed
>>> step.rewards, step.terminated, step.illegal
((-1.0, 1.0), True, True)
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, TypeAlias

import numpy as np
import numpy.typing as npt

from zertz._zertz import DEFAULT_MAX_STEPS, Game, observation_shape

#: The observations of the Gymnasium front ends: ``"flat"``, one float32 vector ``[C*H*W + G]``
#: (the planes, row-major, then the globals), which every library's default networks take and
#: Stable-Baselines3's checker accepts; or ``"dict"``, ``{"planes": [C, H, W], "globals": [G]}``
#: for a network of its own (a CNN over the planes).
OBSERVATION_KINDS = ("flat", "dict")

#: An observation of either kind.
Observation: TypeAlias = npt.NDArray[np.float32] | dict[str, npt.NDArray[np.float32]]


def check_observation(kind: str) -> str:
    """``kind`` when it is one of :data:`OBSERVATION_KINDS`; ValueError otherwise."""
    if kind not in OBSERVATION_KINDS:
        raise ValueError(f"observation must be 'flat' or 'dict', not {kind!r}")
    return kind


def observation_size(board: int) -> int:
    """The length of a flat observation of ``board`` rings: ``C*H*W + G``."""
    (c, h, w), g = observation_shape(board)
    return c * h * w + g


def flatten(planes: npt.NDArray[np.float32], globals_: npt.NDArray[np.float32]) -> Any:
    """Flat observations from planes ``[..., C, H, W]`` and globals ``[..., G]``: float32
    ``[..., C*H*W + G]``."""
    lead = planes.shape[:-3]
    return np.concatenate([planes.reshape(*lead, -1), globals_], axis=-1)


def observe(game: Game, kind: str, player: Literal["P0", "P1"] | None = None) -> Observation:
    """The observation of ``game`` for ``player`` (None: the player to move), of ``kind``."""
    planes, globals_ = game.encode(player)
    if kind == "flat":
        out: npt.NDArray[np.float32] = flatten(planes, globals_)
        return out
    return {"planes": planes, "globals": globals_}


def check_options(render_mode: str | None, max_steps: int) -> None:
    """Refuses a render mode other than None or "ansi" and a step limit below 1 (ValueError)."""
    if render_mode not in (None, "ansi"):
        raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, not {max_steps}")


class Step(NamedTuple):
    """What one step did: the player who acted, both players' rewards (P0's, P1's), and how the
    game stands."""

    mover: Literal["P0", "P1"]
    rewards: tuple[float, float]
    terminated: bool
    truncated: bool
    illegal: bool

    def reward(self, player: Literal["P0", "P1"]) -> float:
        """The reward of ``player``."""
        return self.rewards[0 if player == "P0" else 1]


class Episode:
    """One game under the rules above: ``board`` rings (37, 40, 43, 44, 48 or 61), the blitz
    marble set or not, ``first`` to move, truncated after ``max_steps`` actions."""

    def __init__(
        self,
        board: int = 37,
        blitz: bool = False,
        first: Literal["P0", "P1"] = "P0",
        max_steps: int = DEFAULT_MAX_STEPS,
    ) -> None:
        check_options(None, max_steps)
        self.game = Game(board, blitz, first)
        self.max_steps = max_steps
        self.steps = 0
        self.forfeited = False
        self.truncated = False

    @property
    def is_over(self) -> bool:
        """Whether the episode has ended (terminated, forfeited or truncated)."""
        return self.forfeited or self.truncated or self.game.is_over

    def step(self, action: int) -> Step:
        """Plays ``action`` (an index of the action space) for the player to move."""
        size = self.game.action_space_size
        if not 0 <= action < size:
            raise ValueError(f"action {action} is out of range (the action space has {size})")
        if self.is_over:
            raise ValueError("the episode is over: reset it")
        mover: Literal["P0", "P1"] = self.game.to_play
        if not self.game.legal_action_mask()[action]:
            self.forfeited = True
            lost = (-1.0, 1.0) if mover == "P0" else (1.0, -1.0)
            return Step(mover, lost, terminated=True, truncated=False, illegal=True)
        self.game.play(action)
        self.steps += 1
        outcome = self.game.outcome
        if outcome is not None:
            p0 = 0.0 if outcome == "draw" else (1.0 if outcome == "P0" else -1.0)
            return Step(mover, (p0, -p0), terminated=True, truncated=False, illegal=False)
        self.truncated = self.steps >= self.max_steps
        return Step(mover, (0.0, 0.0), terminated=False, truncated=self.truncated, illegal=False)
