"""Stable-Baselines3's side of :class:`zertz.boardnet.BoardNet` (re-exported by
:mod:`zertz.sb3`): a features extractor for any SB3 algorithm, and sb3-contrib's masked
actor-critic policy whose actor and critic are the project's network."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.distributions import MaskableDistribution
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.type_aliases import PyTorchObs, Schedule
from torch import Tensor

from zertz._zertz import observation_shape
from zertz.boardnet import BoardNet, Network, board_of_actions, freeze_batch_norm
from zertz.nn import _pool


def _board_of_observations(space: spaces.Space[Any]) -> list[int]:
    """The boards whose observations ``space`` holds (40 and 44 rings share a grid, as do 43
    and 48)."""
    from zertz._zertz import BOARDS

    found = []
    for b in BOARDS:
        (c, h, w), g = observation_shape(b)
        if isinstance(space, spaces.Dict):
            planes, globals_ = space.spaces.get("planes"), space.spaces.get("globals")
            if planes is not None and globals_ is not None:
                if planes.shape == (c, h, w) and globals_.shape == (g,):
                    found.append(b)
        elif space.shape == (c * h * w + g,):
            found.append(b)
    if not found:
        raise ValueError(
            f"not an observation space of zertz (flat or dict, zertz.gymnasium): {space}"
        )
    return found


class BoardFeatures(BaseFeaturesExtractor):
    """The project's residual trunk as an SB3 features extractor, for any algorithm and any
    head (PPO and DQN of Stable-Baselines3 too): the trunk's features pooled over the board's
    rings (mean and max of each channel) beside the globals, ``2 C + G`` numbers. Keywords:
    ``network`` (:data:`zertz.boardnet.Network`: a preset, sizes, a network file or a
    ``ZertzNet``; ``"tiny"`` by default), ``board`` (default: the one the observation space
    fits; 40 and 44 rings, 43 and 48, share one and need it)."""

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        network: Network = "tiny",
        board: int | None = None,
    ) -> None:
        boards = _board_of_observations(observation_space)
        if board is None:
            if len(boards) > 1:
                raise ValueError(f"the observations fit boards {boards}: give board=")
            board = boards[0]
        elif board not in boards:
            raise ValueError(f"the observations are not those of {board} rings")
        body = BoardNet(network, board=board)
        channels = body.net.net_config().channels
        super().__init__(observation_space, features_dim=2 * channels + body.globals_size)
        self.body = body

    def forward(self, observations: Tensor | Mapping[str, Tensor]) -> Tensor:
        planes, globals_ = self.body.split(observations)
        x, mask, count = self.body.net._trunk(planes, globals_)
        return torch.cat([_pool(x, mask, count), globals_], dim=1)


class BoardPolicy(MaskableActorCriticPolicy):
    """sb3-contrib's masked actor-critic policy whose actor and critic are
    :class:`zertz.boardnet.BoardNet`: the logits of the project's network (its head scores each
    action from the rings it names, so what is learnt of a ring serves every action using it)
    and its value, one network for both. ``MaskablePPO(BoardPolicy, env)`` on any zertz
    environment (flat or dict observations, any board).

    ``policy_kwargs``: ``network`` (:data:`zertz.boardnet.Network`: a preset name for fresh
    weights, ``"tiny"`` by default; a network file to start from, such as one cloned from
    people's games or ``"builtin"``; sizes; a ``ZertzNet``). The batch norms stay in eval mode
    (:func:`zertz.boardnet.freeze_batch_norm`: PPO's ratio compares the policy of a rollout with
    the one updated on it). :meth:`export` writes the network for the engine. A saved model
    (``model.save``) is rebuilt from ``policy_kwargs`` when it loads, then given its weights:
    a ``network`` file must still be there (give the ``ZertzNet`` itself, and the model file
    holds it)."""

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        lr_schedule: Schedule,
        network: Network = "tiny",
        **kwargs: Any,
    ) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise ValueError(f"BoardPolicy needs zertz's Discrete action space, not {action_space}")
        self.board = board_of_actions(int(action_space.n))
        if self.board not in _board_of_observations(observation_space):
            raise ValueError(
                f"the observations are not those of the board of the actions ({self.board} rings)"
            )
        # Read by _build, which the base class calls (a ZertzNet is not registered: copied).
        object.__setattr__(self, "_start", network)
        # No MLP: the network is both heads.
        kwargs.setdefault("net_arch", [])
        kwargs.setdefault("ortho_init", False)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build(self, lr_schedule: Schedule) -> None:
        self.body = BoardNet(self.__dict__.pop("_start"), board=self.board)
        # The sizes: what the policy alone is rebuilt from (``BoardPolicy.load``).
        self._network = self.body.sizes()
        freeze_batch_norm(self.body)
        self.optimizer = self.optimizer_class(
            self.parameters(),
            lr=lr_schedule(1),  # type: ignore[call-arg]
            **self.optimizer_kwargs,
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["network"] = self._network
        return data

    def set_training_mode(self, mode: bool) -> None:
        super().set_training_mode(mode)
        freeze_batch_norm(self.body)

    def _answers(
        self, obs: PyTorchObs, action_masks: np.ndarray[Any, Any] | Tensor | None
    ) -> tuple[MaskableDistribution, Tensor]:
        observation = self.preprocess(obs)
        logits, value = self.body(observation)
        distribution = self.action_dist.proba_distribution(action_logits=logits)
        if action_masks is not None:
            distribution.apply_masking(action_masks)
        return distribution, value[:, None]

    def preprocess(self, obs: PyTorchObs) -> Tensor | Mapping[str, Tensor]:
        """The observation as the network takes it (float tensors)."""
        if isinstance(obs, Mapping):
            return {k: v.float() for k, v in obs.items()}
        return obs.float()

    def forward(
        self,
        obs: Tensor,
        deterministic: bool = False,
        action_masks: np.ndarray[Any, Any] | None = None,
    ) -> tuple[Tensor, Tensor, Tensor]:
        distribution, values = self._answers(obs, action_masks)
        actions = distribution.get_actions(deterministic=deterministic)
        log_prob = distribution.log_prob(actions)
        return actions.reshape((-1, *self.action_space.shape)), values, log_prob  # type: ignore[misc]

    def evaluate_actions(
        self, obs: Tensor, actions: Tensor, action_masks: Tensor | None = None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        distribution, values = self._answers(obs, action_masks)
        return values, distribution.log_prob(actions), distribution.entropy()

    def get_distribution(
        self, obs: PyTorchObs, action_masks: np.ndarray[Any, Any] | None = None
    ) -> MaskableDistribution:
        return self._answers(obs, action_masks)[0]

    def predict_values(self, obs: PyTorchObs) -> Tensor:
        return self._answers(obs, None)[1]

    def export(self, path: str | os.PathLike[str], *, step: int = 0, name: str = "agent") -> Path:
        """Writes the policy's network as a network file for the engine (``zertz match
        --player nn:PATH``, ``zertz play --model PATH``, ``zertz serve``; with search or without,
        ``nn:PATH:1``): :meth:`zertz.boardnet.BoardNet.export`."""
        return self.body.export(path, step=step, name=name)
