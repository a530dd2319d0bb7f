"""The rules of an episode, for one game: :class:`Episode`, the engine's own (``zertz_vecenv``'s
``Episode``, which ``zertz.VecEnv`` runs for each game of its batch), is what the single-game
front ends (``zertz.gymnasium``'s ``ZertzEnv``, ``zertz.pettingzoo``'s ``ZertzAEC``) are built
on; ``tests/test_rl_conformance.py`` holds every front end to the rules; and this module adds
the observations of the Gymnasium front ends:

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

from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from zertz._zertz import Episode, Game, Step, observation_shape

__all__ = [
    "OBSERVATION_KINDS",
    "Episode",
    "Observation",
    "Step",
    "check_observation",
    "check_render_mode",
    "flatten",
    "observation_size",
    "observe",
]

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


def check_render_mode(render_mode: str | None) -> None:
    """Refuses a render mode other than None or "ansi" (ValueError)."""
    if render_mode not in (None, "ansi"):
        raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
