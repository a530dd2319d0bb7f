"""Stable-Baselines3 (the optional extra ``zertz[sb3]``): the Rust vectorized environment as an
SB3 ``VecEnv``, so that PPO, A2C and sb3-contrib's ``MaskablePPO`` step hundreds of games at
the batched environment's speed.

:class:`VecEnv` takes the keywords of :class:`zertz.gymnasium.VectorEnv` (``board``, ``blitz``,
``opponent``, ``observation``, ``threads``, ``max_steps``, ``first_player``, ``opening_plies``,
``seed``). Against an opponent (``"random"`` by default; the spec of a player without a
network or a program, ``zertz.PLAYER_SPECS``, played in Rust; or a batched Python policy such as
the learner's own) the rewards are the learner's; with ``opponent=None`` both players act in
turn, which single-agent algorithms cannot learn from (``zertz.gymnasium`` says why). A finished
game restarts at once, with its last observation in ``infos[i]["terminal_observation"]`` and
``infos[i]["TimeLimit.truncated"]`` where it was truncated, as SB3's own vector environments give
them. ``env_method("action_masks")`` gives every game's legal mask (what ``MaskablePPO`` asks
for). Wrap it in ``VecMonitor`` for episode statistics.

Beside it (each imported when first asked for): :class:`BoardPolicy`, MaskablePPO's policy on
the project's network (``MaskablePPO(zertz.sb3.BoardPolicy, env)``, started from a network file
such as one cloned from people's games, exported back for the engine), and
:class:`BoardFeatures`, its trunk as a features extractor for any SB3 algorithm
(:mod:`zertz.boardnet`, docs/agents.md). League self-play, on this ``VecEnv``, is
:mod:`zertz.league` (docs/league.md). :class:`Deadline` ends ``learn`` after a time: a budget
of minutes rather than of steps.

>>> from zertz.sb3 import VecEnv
>>> env = VecEnv(8, board=37, opponent="greedy", seed=1)
>>> obs = env.reset()
>>> obs.shape, len(env.env_method("action_masks"))
((8, 412), 8)
>>> obs, rewards, dones, infos = env.step(env.sample_actions())
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnv as Sb3VecEnv

from zertz.gymnasium import VectorEnv

if TYPE_CHECKING:
    from zertz._board_sb3 import BoardFeatures as BoardFeatures
    from zertz._board_sb3 import BoardPolicy as BoardPolicy


class VecEnv(Sb3VecEnv):
    """``num_envs`` games on the Rust vectorized environment, with SB3's ``VecEnv`` API (see the
    module docs)."""

    def __init__(self, num_envs: int, board: int = 37, blitz: bool = False, **kwargs: Any) -> None:
        self.envs = VectorEnv(num_envs, board, blitz, **kwargs)
        self.render_mode = None  # (nothing to draw; SB3 asks)
        super().__init__(
            num_envs, self.envs.single_observation_space, self.envs.single_action_space
        )
        self._actions: npt.NDArray[np.int64] = np.zeros(num_envs, dtype=np.int64)
        self._seed: int | None = None

    def reset(self) -> Any:
        # SB3's seed() keeps one seed per game; the batch takes the first (the games' own
        # generators are seeded from it and their index).
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        obs, _ = self.envs.reset(seed=seed)
        self._reset_seeds()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: npt.NDArray[Any]) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(
        self,
    ) -> tuple[Any, npt.NDArray[np.float32], npt.NDArray[np.bool_], list[dict[str, Any]]]:
        obs, rewards, terminated, truncated, infos = self.envs.step(self._actions)
        dones = terminated | truncated
        out: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = infos["final_obs"]
            for i in np.flatnonzero(dones):
                out[i]["terminal_observation"] = final[i]
                out[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards, dones, out

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """Every game's legal actions (bool ``[N, A]``)."""
        return self.envs.action_masks()

    def sample_actions(self) -> npt.NDArray[np.int64]:
        """A uniform random legal action for every game (drawn in Rust)."""
        return self.envs.sample_actions()

    def close(self) -> None:
        pass

    def _indices(self, indices: int | Iterable[int] | None) -> Sequence[int]:
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def get_attr(self, attr_name: str, indices: int | Iterable[int] | None = None) -> list[Any]:
        """The attribute of the batch, once per game asked for (``action_masks`` included,
        which ``MaskablePPO`` looks for)."""
        value = getattr(self, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(
        self, attr_name: str, value: Any, indices: int | Iterable[int] | None = None
    ) -> None:
        setattr(self, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: int | Iterable[int] | None = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """``action_masks``: the mask of each game asked for; any other method of the batch:
        its answer, once per game asked for."""
        chosen = self._indices(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in chosen]
        value = getattr(self, method_name)(*method_args, **method_kwargs)
        return [value for _ in chosen]

    def env_is_wrapped(
        self, wrapper_class: type, indices: int | Iterable[int] | None = None
    ) -> list[bool]:
        return [False for _ in self._indices(indices)]


#: What this module gives beside :class:`VecEnv`, and where each lives: the project's network as
#: SB3's policy and features extractor (they need torch and the engine).
_ELSEWHERE = {
    "BoardPolicy": "zertz._board_sb3",
    "BoardFeatures": "zertz._board_sb3",
}


def __getattr__(name: str) -> Any:
    # Imported when first asked for: VecEnv alone needs neither the engine nor a policy's torch.
    if name in _ELSEWHERE:
        import importlib

        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module 'zertz.sb3' has no attribute {name!r}")


class Deadline(BaseCallback):
    """Ends training once ``seconds`` have passed since it was made (a wall-clock budget:
    ``model.learn(10**12, callback=Deadline(20 * 60))`` trains for 20 minutes; SB3 finishes the
    rollout it is in; ``math.inf``: never). ValueError for a time that is not a number of seconds
    above 0."""

    def __init__(self, seconds: float) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
            raise ValueError(f"seconds must be a number above 0, not {seconds!r}")
        super().__init__()
        self.seconds = float(seconds)
        self.end = time.monotonic() + self.seconds

    def _on_step(self) -> bool:
        return time.monotonic() < self.end
