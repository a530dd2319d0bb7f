"""Gymnasium environments (the optional extra ``zertz[gymnasium]``): ZÈRTZ for the single-agent and
vector APIs that RL libraries take, registered as ``zertz/Zertz-v0`` (``gymnasium.make``, and
``gymnasium.make_vec`` for the vector environment) once this module or ``zertz`` is imported.
``gymnasium.make`` gives the :class:`ZertzEnv` itself (the id is registered without
Gymnasium's default wrappers: its ``step`` before a ``reset`` raises ``ResetNeeded`` as their
``OrderEnforcing`` would), so that ``env.action_masks()`` and ``env.set_opponent`` are there;
under wrappers of your own, ``env.get_wrapper_attr("action_masks")()`` reaches them.

**Against an opponent** (the default, ``opponent="random"``): the learner plays one side and
an opponent the other, its whole turn (a capture chain included) inside ``step``. The opponent
is any of Rust's players by its spec (``zertz.PLAYER_SPECS``: ``"greedy"``,
``"mcts:200"``, ...; the vector environment's are those without a network or a program, and
:class:`ZertzEnv` takes a network's too, ``nn:MODEL`` or ``nn:builtin``, where the engine is
installed), a :class:`zertz.Bot`-like object, or in :class:`ZertzEnv` a Python
policy ``opponent(observation, mask) -> action`` (the learner's own policy makes self-play). The
reward is the learner's: +1 when it wins, -1 when it loses (by the opponent's winning move too,
or by forfeit), 0 for a draw and before the end. The learner is P0; ``first_player`` says who
moves first (``"random"``: drawn per episode, so the learner plays both sides). This is the
environment for single-agent algorithms (PPO, DQN, A2C: Stable-Baselines3, sb3-contrib's
MaskablePPO, CleanRL).

**Two players** (``opponent=None``): both players act in turn and a step's reward is the mover's
(+1 for the move that wins, -1 for one that forfeits), with both players' rewards in
``info["rewards"]`` (float32 ``[2]``: P0's and P1's, zero-sum at the end) so that a learner
playing both sides sees its losses. For algorithms that know whose turn it is (AlphaZero-style
search with ``zertz.MCTS``, or PPO with a return per player: ``examples/ppo_vector.py
--opponent self``); a single-agent algorithm that sums the rewards of both sides' steps learns
nothing here.

Both follow the rules of an episode of every front end (``zertz.Episode``: one single action a
step; truncated after ``max_steps`` actions, the opponent's included; an illegal action of the
learner forfeits the game). Observations are the mover's (the learner's, against an opponent):
``observation="flat"`` (default) a float32 vector ``[C*H*W + G]``, which every library's default
networks take and both Gymnasium's and Stable-Baselines3's checkers accept, or ``"dict"``:
``{"planes": float32 [C, H, W], "globals": float32 [G]}``. The legal actions are in
``action_masks()`` (bool, where sb3-contrib looks) and ``info["action_mask"]`` (int8,
Gymnasium's mask type, for ``action_space.sample(mask)``); ``info["to_play"]`` says who is to
move (0: P0, 1: P1, as in the vector environment's infos), ``info["illegal_action"]`` whether
the step's action forfeited the game. The info holds numbers and arrays of one shape at every
step, which vectorizers stack (Gymnasium's, TorchRL's); the opponent's actions of the last reset
or step are in ``env.opponent_actions``. ``render_mode="ansi"`` renders the board as text,
``"rgb_array"`` as an RGB image (what Stable-Baselines3 asks for when it makes the environment
from its id).

>>> import gymnasium
>>> env = gymnasium.make("zertz/Zertz-v0", board=37, opponent="greedy")
>>> obs, info = env.reset(seed=1)
>>> obs.shape, env.action_space
((412,), Discrete(4441))
>>> obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))
>>> env.action_masks().shape, info["to_play"]
((4441,), 0)
>>> envs = VectorEnv(4, board=37, seed=1, opponent="random")
>>> obs, infos = envs.reset(seed=1)
>>> obs.shape, envs.action_masks().shape
((4, 412), (4, 4441))
>>> obs, rewards, terminations, truncations, infos = envs.step(envs.sample_actions())
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, SupportsFloat, cast

import gymnasium
import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.vector.utils import batch_space
from gymnasium.vector.vector_env import AutoresetMode

from zertz._zertz import (
    DEFAULT_MAX_STEPS,
    Episode,
    Game,
    VecEnv,
    action_space_size,
    observation_shape,
    parse_first_player,
    parse_player,
)
from zertz.agents import PlayerLike, Policy, agent_answer, player
from zertz.observation import (
    Observation,
    check_observation,
    check_render_mode,
    flatten,
    observation_size,
    observe,
    rgb_array,
)

#: The id of the environments: ``gymnasium.make(ENV_ID)`` and ``gymnasium.make_vec(ENV_ID)``.
ENV_ID = "zertz/Zertz-v0"

#: What plays the other side: a player spec, a player object, a Python policy, or
#: nobody (two players).
Opponent = str | PlayerLike | Policy | None


def observation_space(board: int, observation: str = "flat") -> spaces.Space[Any]:
    """The observation space of one game of ``board`` rings: every feature is in 0..1."""
    (c, h, w), g = observation_shape(board)
    if check_observation(observation) == "flat":
        return spaces.Box(0.0, 1.0, (observation_size(board),), np.float32)
    return spaces.Dict(
        {
            "planes": spaces.Box(0.0, 1.0, (c, h, w), np.float32),
            "globals": spaces.Box(0.0, 1.0, (g,), np.float32),
        }
    )


class ZertzEnv(gymnasium.Env[Observation, np.int64]):
    """One game of ZÈRTZ against ``opponent`` (see the module docs; None: two players), on
    ``board`` rings (one of ``zertz.BOARDS``) with the blitz marble set or not, truncated after
    ``max_steps`` single actions. ``first_player`` is ``"P0"``, ``"P1"`` or ``"random"`` (drawn
    from the reset's seed); against an opponent the learner is P0. A player named by its
    spec is built again at each reset given a seed (so that its games are reproducible); a
    network's loads once. An illegal action of the learner forfeits: the episode ends with
    reward -1 and ``info["illegal_action"]``; an index outside the action space raises
    ValueError, and so does an opponent's answer that is not legal. Passes the checkers of
    Gymnasium and (with ``observation="flat"``) Stable-Baselines3."""

    # Gymnasium's class attribute. render_fps: a human's pace of reading boards, which
    # Gymnasium's checker asks for.
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 1}  # noqa: RUF012

    def __init__(
        self,
        board: int = 37,
        blitz: bool = False,
        *,
        opponent: Opponent = "random",
        observation: str = "flat",
        max_steps: int = DEFAULT_MAX_STEPS,
        first_player: str = "random",
        render_mode: str | None = None,
    ) -> None:
        check_render_mode(render_mode, self.metadata["render_modes"])
        # Rust's reading, that of every front end: "random", "P0" or "P1", in any case.
        first_player = parse_first_player(first_player)
        self.board, self.blitz, self.max_steps = board, blitz, max_steps
        self.observation = check_observation(observation)
        self.first_player = first_player
        self.render_mode = render_mode
        self.episode = Episode(board, blitz, max_steps=max_steps)
        self.observation_space = observation_space(board, observation)
        self.action_space = spaces.Discrete(action_space_size(board))
        self._opponent: PlayerLike | Policy | None = None
        self._spec: str | None = None
        self._opponent_actions: list[int] = []
        self._needs_reset = True  # (Gymnasium's OrderEnforcing, which gymnasium.make leaves out)
        self.set_opponent(opponent)
        # The registered spec with these settings, as gymnasium.make gives it (which sets its
        # own after this): what recreates the environment, and what checkers read.
        settings: dict[str, Any] = {
            "board": board,
            "blitz": blitz,
            "observation": observation,
            "max_steps": max_steps,
            "first_player": first_player,
        }
        if opponent is None or isinstance(opponent, str):
            settings["opponent"] = opponent
        self.spec = dataclasses.replace(gymnasium.spec(ENV_ID), kwargs=settings)

    @property
    def game(self) -> Game:
        """The game of the episode, with its moves: a copy (playing on it leaves the episode as
        it is)."""
        return self.episode.game

    @property
    def opponent_actions(self) -> list[int]:
        """The opponent's actions in the last reset or step: its whole turn (a placement, or
        every hop of a capture chain), empty where it did not play. (Not in the info, whose
        entries have one shape at every step, so that vectorizers stack them.)"""
        return list(self._opponent_actions)

    @property
    def opponent(self) -> PlayerLike | Policy | None:
        """What plays P1 (None: two players)."""
        return self._opponent

    def set_opponent(self, opponent: Opponent, seed: int = 0) -> None:
        """Plays the next actions of P1 with ``opponent`` (see the class docs): for self-play,
        the learner's own policy once it exists (``env.set_opponent(policy)``)."""
        if isinstance(opponent, str):
            built: PlayerLike | Policy | None = player(opponent, self.board, self.blitz, seed=seed)
        elif opponent is None or hasattr(opponent, "choose") or callable(opponent):
            built = opponent
        else:
            raise TypeError(
                f"opponent must be a player spec, a player, a callable or None, not {opponent!r}"
            )
        # The episode plays P1's turns with it (and refuses this from the opponent's own turn).
        self.episode.set_opponent(None if built is None else self._opponent_action, "P0")
        self._spec = opponent if isinstance(opponent, str) else None
        self._opponent = built

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal actions of the player to move (bool ``[A]``; all False once the episode
        is over): where sb3-contrib's ``MaskablePPO`` looks."""
        if self.episode.is_over:
            return np.zeros(self.game.action_space_size, dtype=bool)
        return self.game.legal_action_mask()

    def _observe(
        self, illegal: bool, rewards: tuple[float, float] = (0.0, 0.0)
    ) -> tuple[Observation, dict[str, Any]]:
        # Numbers and arrays of one shape at every step: what Gymnasium's vector environments
        # and TorchRL's readers of them stack (TorchRL's refuses strings and lists).
        info: dict[str, Any] = {
            "action_mask": self.action_masks().astype(np.int8),
            "to_play": 0 if self.game.to_play == "P0" else 1,
            "illegal_action": illegal,
        }
        if self._opponent is None:
            info["rewards"] = np.array(rewards, dtype=np.float32)
        return observe(self.game, self.observation), info

    def _opponent_action(self, game: Game) -> int:
        """The opponent's answer in ``game`` (a copy), for the episode, which judges it."""
        assert self._opponent is not None
        return agent_answer(self._opponent, game, self.observation, "the opponent")

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Observation, dict[str, Any]]:
        # First, what refuses a reset from the opponent's own turn (before anything changes).
        self.episode.set_opponent(None if self._opponent is None else self._opponent_action)
        super().reset(seed=seed)
        spec = self._spec
        if seed is not None and spec is not None and parse_player(spec)["model"] is None:
            self._opponent = player(spec, self.board, self.blitz, seed=seed)
        first: Literal["P0", "P1"]
        if self.first_player == "random":
            first = "P0" if self.np_random.integers(2) == 0 else "P1"
        else:
            first = "P0" if self.first_player == "P0" else "P1"
        # The episode plays the opponent's first turn where it begins; an opponent that fails
        # leaves it needing a reset.
        self._needs_reset = False  # (a failing opponent leaves the episode's own refusal)
        self._opponent_actions = list(self.episode.restart(first))
        return self._observe(False)

    def step(
        self, action: np.int64 | int
    ) -> tuple[Observation, SupportsFloat, bool, bool, dict[str, Any]]:
        if self._needs_reset:
            raise gymnasium.error.ResetNeeded("Cannot call env.step() before calling env.reset()")
        # The learner's action and the opponent's whole turn, played by Rust's episode.
        step = self.episode.step(int(action))
        self._opponent_actions = list(step.opponent_actions)
        if self._opponent is None:
            obs, info = self._observe(step.illegal, step.rewards)
            return obs, step.reward(step.mover), step.terminated, step.truncated, info
        obs, info = self._observe(step.illegal)
        return obs, step.reward("P0"), step.terminated, step.truncated, info

    def render(self) -> str | npt.NDArray[np.uint8] | None:
        """The board: its text (``render_mode="ansi"``: the game's ``repr``), an RGB image of its
        rings and marbles (``"rgb_array"``: uint8 ``[H, W, 3]``,
        ``zertz.observation.rgb_array``), or None (no render mode)."""
        if self.render_mode == "ansi":
            return repr(self.game)
        if self.render_mode == "rgb_array":
            return rgb_array(self.game)
        return None


class VectorEnv(gymnasium.vector.VectorEnv[Any, npt.NDArray[np.int64], npt.NDArray[Any]]):
    """``num_envs`` games of ZÈRTZ stepped together on the Rust vectorized environment
    (``zertz.VecEnv``, whose keywords it takes: ``threads``, ``max_steps``, ``first_player``,
    ``opening_plies``, ``seed``, ``max_bytes``), under the same rules (an illegal action
    forfeits its game alone: ``infos["illegal_action"]``), against ``opponent`` (the module
    docs): one of Rust's players without a network or a program, by its spec
    (``zertz.PLAYER_SPECS``), a list of such specs (game ``i`` plays the ``i % len``-th: a mix
    of opponents), or a batched Python policy ``opponent(observations, masks) ->
    actions`` (observations and bool masks of the games where it is to move, one action each:
    the learner's own policy makes self-play at the vector environment's speed), both played by
    the Rust environment inside the step; None: two players. A finished game restarts in the
    same step (with the opponent's first turn where it begins); its last observation is in
    ``infos["final_obs"]`` (an object array, None for the games that go on) with
    ``infos["_final_obs"]``. ``infos["rewards"]`` keeps the rewards of both players (float32
    [N, 2]: P0's and P1's); the rewards returned are the mover's (the learner's). An opponent
    that raises or answers an action that is not legal fails the step (its exception, or
    ValueError), and the next step raises RuntimeError until ``reset``."""

    metadata = {  # noqa: RUF012 (Gymnasium's class attribute)
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int,
        board: int = 37,
        blitz: bool = False,
        *,
        opponent: str | list[str] | tuple[str, ...] | Policy | None = "random",
        observation: str = "flat",
        **kwargs: Any,
    ) -> None:
        specs = isinstance(opponent, str) or (
            isinstance(opponent, list | tuple) and all(isinstance(s, str) for s in opponent)
        )
        if opponent is not None and not specs and not callable(opponent):
            raise TypeError(
                "the vector environment's opponent is an engine player's spec (played in "
                "Rust), a list of specs (one for each game in turn), a batched Python policy "
                f"or None, not {opponent!r}"
            )
        self.observation = check_observation(observation)
        # A Python policy is given the observations of this environment's kind.
        self._policy = None if specs else cast("Policy | None", opponent)
        rust_opponent = self._policy_answer if self._policy is not None else opponent
        self.env = VecEnv(num_envs, board, blitz, opponent=rust_opponent, **kwargs)
        self.num_envs = num_envs
        # (What Gymnasium's own vector environments carry, and TorchRL's GymWrapper reads.)
        self.autoreset_mode = AutoresetMode.SAME_STEP
        self.single_observation_space = observation_space(board, observation)
        self.single_action_space = spaces.Discrete(self.env.action_space_size)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._to_play: npt.NDArray[Any] = np.zeros(num_envs, dtype=np.uint8)
        self._rows = np.arange(num_envs)
        self._mask = np.zeros((num_envs, self.env.action_space_size), dtype=bool)

    def _obs(self, obs: dict[str, npt.NDArray[np.float32]]) -> Any:
        if self.observation == "flat":
            return flatten(obs["planes"], obs["globals"])
        return obs

    def _policy_answer(
        self, obs: dict[str, npt.NDArray[np.float32]], masks: npt.NDArray[np.bool_]
    ) -> Any:
        """The Python opponent's actions for the games the Rust environment asks about."""
        assert self._policy is not None
        return self._policy(self._obs(obs), masks)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        obs, infos = self.env.reset(seed)
        self._to_play = infos["to_play"]
        self._mask = infos["legal_action_mask"]
        return self._obs(obs), infos

    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[
        Any,
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
            final_obs = np.full(self.num_envs, None, dtype=object)
            indices, final = self.env.final_observations()
            for k, i in enumerate(indices):
                final_obs[i] = self._obs(
                    {"planes": final["planes"][k], "globals": final["globals"][k]}
                )
            infos["final_obs"] = final_obs
            infos["_final_obs"] = done
        self._to_play = infos["to_play"]
        self._mask = infos["legal_action_mask"]
        return self._obs(obs), rewards, terminations, truncations, infos

    def action_masks(self) -> npt.NDArray[np.bool_]:
        """The legal actions of every game's player to move (bool ``[N, A]``)."""
        return self._mask

    def sample_actions(self) -> npt.NDArray[np.int64]:
        """A uniform random legal action for every game (faster than ``action_space.sample``
        with masks: drawn in Rust)."""
        return self.env.sample_actions()


def register() -> None:
    """Registers :data:`ENV_ID` with Gymnasium (once; ``import zertz`` calls it where Gymnasium
    is already imported, and importing this module does)."""
    if ENV_ID not in gymnasium.registry:
        # Without Gymnasium's two default wrappers, so that gymnasium.make gives the ZertzEnv
        # itself, whose methods (action_masks, set_opponent) are then the environment's: its
        # step refuses to come before a reset as OrderEnforcing would (ResetNeeded), and the
        # tests hold it to Gymnasium's full checker, of which PassiveEnvChecker runs a part.
        gymnasium.register(
            ENV_ID,
            entry_point="zertz.gymnasium:ZertzEnv",
            vector_entry_point="zertz.gymnasium:VectorEnv",
            order_enforce=False,
            disable_env_checker=True,
        )


register()
