"""A PettingZoo environment (the optional extra ``zertz[pettingzoo]``): ZÈRTZ for two agents in
turn, as PettingZoo's classic board games are (AEC API).

The agents ``player_0`` and ``player_1`` are the game's P0 and P1; ``player_0`` moves first. An
agent's turn is one single action (a placement, one hop of a capture chain, or a pass), so the
same agent acts again while it continues a chain. Each agent observes from its own side::

    {"observation": float32 [C + G, H, W], "action_mask": int8 [A]}

where ``observation`` holds the ``C`` planes of ``zertz.Game.encode`` followed by its ``G`` global
features, each broadcast over the board's grid (all in 0..1), and ``action_mask`` marks the legal
actions (all zero for the agent not to move). The rules are those of every front end
(``zertz.Episode``): rewards come at the end, +1 for the winner, -1 for the loser, 0 each for a
draw; a game is truncated after ``max_steps`` actions; an illegal action forfeits the game (-1 to
the agent that chose it, +1 to the other, ``infos[agent]["illegal_action"]``); an index outside
the action space raises ValueError.

>>> from zertz.pettingzoo import env
>>> e = env(board=37)
>>> e.reset(seed=0)
>>> e.agent_selection, e.observation_space("player_0")["observation"].shape
('player_0', (28, 7, 7))
>>> observation, reward, termination, truncation, info = e.last()
>>> e.step(int(observation["action_mask"].argmax()))
>>> e.agent_selection
'player_1'
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from pettingzoo import AECEnv  # type: ignore[import-untyped]

import zertz
from zertz._zertz import Episode
from zertz.observation import check_render_mode

AGENTS = ["player_0", "player_1"]
#: The game's player of each agent.
PLAYERS: dict[str, Literal["P0", "P1"]] = {"player_0": "P0", "player_1": "P1"}
#: The agent of each player.
AGENT_OF: dict[str, str] = {"P0": "player_0", "P1": "player_1"}


def env(
    board: int = 37,
    blitz: bool = False,
    render_mode: str | None = None,
    max_steps: int = zertz.DEFAULT_MAX_STEPS,
) -> ZertzAEC:
    """A ZÈRTZ environment for two agents on ``board`` rings (one of ``zertz.BOARDS``)."""
    return ZertzAEC(board, blitz, render_mode=render_mode, max_steps=max_steps)


class ZertzAEC(AECEnv):  # type: ignore[misc]
    """Two agents taking single actions in turn (see the module docs)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "name": "zertz_v1",
        "is_parallelizable": False,
    }

    def __init__(
        self,
        board: int = 37,
        blitz: bool = False,
        *,
        render_mode: str | None = None,
        max_steps: int = zertz.DEFAULT_MAX_STEPS,
    ) -> None:
        super().__init__()
        check_render_mode(render_mode)
        self.board, self.blitz, self.max_steps = board, blitz, max_steps
        self.render_mode = render_mode
        self.episode = Episode(board, blitz, "P0", max_steps)
        (c, h, w), g = zertz.observation_shape(board)
        a = zertz.action_space_size(board)
        self._shape = (c + g, h, w)
        space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, self._shape, np.float32),
                "action_mask": spaces.Box(0, 1, (a,), np.int8),
            }
        )
        self.possible_agents = list(AGENTS)
        self.observation_spaces = dict.fromkeys(AGENTS, space)
        self.action_spaces = {agent: spaces.Discrete(a) for agent in AGENTS}

    @property
    def game(self) -> zertz.Game:
        """The game of the episode, with its moves: a copy (playing on it leaves the episode as
        it is)."""
        return self.episode.game

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def observe(self, agent: str) -> dict[str, npt.NDArray[Any]]:
        planes, globals_ = self.game.encode(PLAYERS[agent])
        _, h, w = self._shape
        broadcast = np.broadcast_to(globals_[:, None, None], (len(globals_), h, w))
        observation = np.concatenate([planes, broadcast]).astype(np.float32)
        to_move = not self.episode.is_over and PLAYERS[agent] == self.game.to_play
        if to_move:
            mask = self.game.legal_action_mask().astype(np.int8)
        else:
            mask = np.zeros(self.game.action_space_size, dtype=np.int8)
        return {"observation": observation, "action_mask": mask}

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.episode = Episode(self.board, self.blitz, "P0", self.max_steps)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in AGENTS}
        self.agent_selection = "player_0"

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            # An agent whose game is over steps once with None and leaves.
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} must act: None is only for an agent whose game is over")
        self._cumulative_rewards[agent] = 0.0
        step = self.episode.step(int(action))
        for a in self.agents:
            self.rewards[a] = step.reward(PLAYERS[a])
            self.terminations[a] = step.terminated
            self.truncations[a] = step.truncated
        if step.illegal:
            self.infos[agent] = {**self.infos[agent], "illegal_action": True}
        self._accumulate_rewards()
        if not self.episode.is_over:
            # The player to move acts next: the same agent while it continues a capture chain.
            self.agent_selection = AGENT_OF[self.game.to_play]
        else:
            self.agent_selection = self._next_done_agent(agent)

    def _next_done_agent(self, agent: str) -> str:
        """After the end, each agent steps once with None, the other one first."""
        other = "player_1" if agent == "player_0" else "player_0"
        return other if other in self.agents else agent

    def render(self) -> str | None:
        return repr(self.game) if self.render_mode == "ansi" else None

    def close(self) -> None:
        pass
