"""Gymnasium environments (the optional extra ``zertz[gymnasium]``): ZÈRTZ for the single-agent and
vector APIs that RL libraries take.

Both players act in turn, under the rules of an episode of every front end (``zertz.episode``:
one single action of the player to move a step; terminated by the rules, truncated after
``max_steps`` actions; an illegal action forfeits the game). Observations are those of the player
to move: ``{"planes": float32 [C, H, W], "globals": float32 [G]}`` (``zertz.Game.encode``). The
reward of a step is the one of the player who acted (+1 for the move that wins, -1 for one that
loses or forfeits, 0 otherwise; a draw is 0), which is what one policy playing both sides learns
from. The legal actions are in ``info["action_mask"]`` (int8, Gymnasium's mask type, for
``action_space.sample(mask)``), ``info["to_play"]`` says who is to move, and
``info["illegal_action"]`` whether the step's action forfeited the game.

- :class:`ZertzEnv` is one game (``gymnasium.Env``); it passes ``gymnasium.utils.env_checker``.
- :class:`VectorEnv` is a batch of games on the Rust vectorized environment
  (``gymnasium.vector.VectorEnv``, autoreset in the same step): finished games restart at once,
  and their last observations are in ``infos["final_obs"]`` (with ``infos["_final_obs"]``).

>>> from zertz.gymnasium import VectorEnv
>>> envs = VectorEnv(4, board=37, seed=1)
>>> obs, infos = envs.reset(seed=1)
>>> obs["planes"].shape, envs.single_action_space
((4, 8, 7, 7), Discrete(4441))
>>> obs, rewards, terminations, truncations, infos = envs.step(envs.sample_actions())
>>> rewards.shape, infos["action_mask"].dtype
((4,), dtype('int8'))
"""

from __future__ import annotations

from typing import Any, Literal, SupportsFloat

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from gymnasium.vector.vector_env import AutoresetMode

import zertz
from zertz.episode import Episode, check_options

Observation = dict[str, npt.NDArray[np.float32]]


def observation_space(board: int) -> spaces.Dict:
    """The observation space of one game of ``board`` rings: every feature is in 0..1."""
    (c, h, w), g = zertz.observation_shape(board)
    return spaces.Dict(
        {
            "planes": spaces.Box(0.0, 1.0, (c, h, w), np.float32),
            "globals": spaces.Box(0.0, 1.0, (g,), np.float32),
        }
    )


class ZertzEnv(gymnasium.Env[Observation, np.int64]):
    """One game of ZÈRTZ: ``board`` rings (37, 40, 43, 44, 48 or 61), the blitz marble set or not,
    truncated after ``max_steps`` single actions, on ``zertz.episode.Episode``. The first player is
    ``first_player`` (``"P0"``, ``"P1"``, or ``"random"``: drawn from the reset's seed). An
    illegal action forfeits: the episode ends with reward -1 and ``info["illegal_action"]`` (as
    PettingZoo's classic games end one); an index outside the action space raises ValueError."""

    metadata = {"render_modes": ["ansi"]}  # noqa: RUF012 (Gymnasium's class attribute)

    def __init__(
        self,
        board: int = 37,
        blitz: bool = False,
        *,
        max_steps: int = zertz.DEFAULT_MAX_STEPS,
        first_player: str = "random",
        render_mode: str | None = None,
    ) -> None:
        check_options(render_mode, max_steps)
        if first_player not in ("P0", "P1", "random"):
            raise ValueError(f"first_player must be 'P0', 'P1' or 'random', not {first_player!r}")
        self.board, self.blitz, self.max_steps = board, blitz, max_steps
        self.first_player = first_player
        self.render_mode = render_mode
        self.episode = Episode(board, blitz, max_steps=max_steps)
        self.observation_space = observation_space(board)  # type: ignore[assignment]
        self.action_space = spaces.Discrete(zertz.action_space_size(board))

    @property
    def game(self) -> zertz.Game:
        """The game of the episode."""
        return self.episode.game

    def _observe(self, illegal: bool = False) -> tuple[Observation, dict[str, Any]]:
        planes, globals_ = self.game.encode()
        mask = self.game.legal_action_mask().astype(np.int8)
        info = {"action_mask": mask, "to_play": self.game.to_play, "illegal_action": illegal}
        return {"planes": planes, "globals": globals_}, info

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        first: Literal["P0", "P1"]
        if self.first_player == "random":
            first = "P0" if self.np_random.integers(2) == 0 else "P1"
        else:
            first = "P0" if self.first_player == "P0" else "P1"
        self.episode = Episode(self.board, self.blitz, first, self.max_steps)
        return self._observe()

    def step(
        self, action: np.int64 | int
    ) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        step = self.episode.step(int(action))
        obs, info = self._observe(step.illegal)
        return obs, step.reward(step.mover), step.terminated, step.truncated, info

    def render(self) -> str | None:
        return repr(self.game) if self.render_mode == "ansi" else None


class VectorEnv(gymnasium.vector.VectorEnv[Observation, npt.NDArray[np.int64], npt.NDArray[Any]]):
    """``num_envs`` games of ZÈRTZ stepped together on the Rust vectorized environment
    (``zertz.VecEnv``, whose keywords it takes: ``threads``, ``max_steps``, ``first_player``,
    ``opening_plies``, ``seed``), under the same rules (an illegal action forfeits its game alone:
    ``infos["illegal_action"]``). A finished game restarts in the same step; its last observation
    is in ``infos["final_obs"]`` (an object array, None for the games that go on) with
    ``infos["_final_obs"]``. ``infos["rewards"]`` keeps the rewards of both players (float32
    [N, 2]: P0's and P1's)."""

    metadata = {  # noqa: RUF012 (Gymnasium's class attribute)
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int,
        board: int = 37,
        blitz: bool = False,
        **kwargs: Any,
    ) -> None:
        self.env = zertz.VecEnv(num_envs, board, blitz, **kwargs)
        self.num_envs = num_envs
        self.single_observation_space = observation_space(board)
        self.single_action_space = spaces.Discrete(self.env.action_space_size)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._to_play: npt.NDArray[Any] = np.zeros(num_envs, dtype=np.uint8)
        self._rows = np.arange(num_envs)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        obs, infos = self.env.reset(seed)
        self._to_play = infos["to_play"]
        return obs, infos

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[
        Observation,
        npt.NDArray[np.float32],
        npt.NDArray[np.bool_],
        npt.NDArray[np.bool_],
        dict[str, Any],
    ]:
        obs, both, terminations, truncations, infos = self.env.step(actions)
        rewards = both[self._rows, self._to_play]
        infos["rewards"] = both
        done = terminations | truncations
        if done.any():
            indices, final = self.env.final_observations()
            final_obs = np.full(self.num_envs, None, dtype=object)
            for k, i in enumerate(indices):
                final_obs[i] = {"planes": final["planes"][k], "globals": final["globals"][k]}
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
        self._to_play = infos["to_play"]
        return obs, rewards, terminations, truncations, infos

    def sample_actions(self) -> npt.NDArray[np.int64]:
        """A uniform random legal action for every game (faster than ``action_space.sample``
        with masks: drawn in Rust)."""
        return self.env.sample_actions()
