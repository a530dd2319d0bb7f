"""The project's network over the environments' observations, for any RL library.

:class:`BoardNet` is :class:`zertz.nn.ZertzNet` (the residual trunk over the board's planes,
masked to its rings, and the head that scores each action from the rings it names) behind the
observation of :mod:`zertz.gymnasium` and :mod:`zertz.sb3`: ``forward(observation)`` takes a
batch of ``"flat"`` observations ``[B, C*H*W + G]`` or ``"dict"`` ones (``{"planes", "globals"}``)
and answers ``(logits [B, A], value [B])``: logits over the board's whole action space (mask the
illegal ones), the value in ``-1..1`` for the player to move. A plain ``torch.nn.Module``: a
CleanRL-style loop uses it as it is (``examples/ppo_vector.py --network tiny``),
:class:`zertz.sb3.BoardPolicy` wraps it for Stable-Baselines3, and its ``net`` is what
:func:`zertz.exported.export` writes for the engine (``nn:agent.safetensors`` in ``zertz
match``, ``zertz play``, ``zertz serve``).

Its weights come from a preset size (fresh), a network file (a network trained by
``python -m zertz train``, the built-in one, ``"builtin"``, or one cloned from people's games by
:func:`zertz.training.pretraining.clone`), or a :class:`~zertz.nn.ZertzNet` (copied).

>>> import torch, zertz, zertz.observation
>>> from zertz.boardnet import BoardNet
>>> net = BoardNet("tiny", board=37).eval()
>>> planes, globals_ = zertz.Game().encode()
>>> flat = torch.from_numpy(zertz.observation.flatten(planes, globals_))[None]
>>> logits, value = net(flat)
>>> logits.shape, value.shape
(torch.Size([1, 4441]), torch.Size([1]))
>>> dict_logits, _ = net({"planes": torch.from_numpy(planes)[None],
...                       "globals": torch.from_numpy(globals_)[None]})
>>> bool(torch.equal(logits, dict_logits))
True
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeAlias

from torch import Tensor, nn

from zertz._zertz import BOARDS, action_space_size, observation_shape
from zertz.nn import NetConfig, ZertzNet, check_marbles

#: What a :class:`BoardNet` is made from: a preset name (``"tiny"``, ...; fresh weights), the
#: sizes (a :class:`~zertz.nn.NetConfig` or a mapping of its fields, with ``preset`` allowed), a
#: network file's path (``.safetensors``, or ``"builtin"``: its weights), or a
#: :class:`~zertz.nn.ZertzNet` (its weights, copied).
Network: TypeAlias = str | os.PathLike[str] | NetConfig | Mapping[str, Any] | ZertzNet


def board_of_actions(actions: int) -> int:
    """The board whose action space has ``actions`` actions (every board's differs).

    >>> board_of_actions(4441)
    37
    """
    for b in BOARDS:
        if action_space_size(b) == actions:
            return b
    raise ValueError(
        f"no board has {actions} actions (the boards' action spaces: "
        f"{ {b: action_space_size(b) for b in BOARDS} })"
    )


def make_network(network: Network, board: int, marbles: list[str] | None = None) -> ZertzNet:
    """The :class:`~zertz.nn.ZertzNet` that ``network`` names (see :data:`Network`), checked to
    play ``board`` (and ``marbles``, when given: those of a fresh network, ones that a network
    read or copied must play); a copy when it is one already. ValueError names what does not
    fit, and TypeError a board that is not an int."""
    if isinstance(board, bool) or not isinstance(board, int):
        raise TypeError(f"board must be an int (rings), not {board!r}")
    if isinstance(network, ZertzNet):
        net = copy.deepcopy(network)
    elif isinstance(network, NetConfig):
        net = ZertzNet(network, boards=[board], marbles=marbles)
    elif isinstance(network, Mapping):
        net = ZertzNet(NetConfig.from_dict(dict(network)), boards=[board], marbles=marbles)
    elif isinstance(network, str) and network in NetConfig.SIZES:
        net = ZertzNet(NetConfig.preset(network), boards=[board], marbles=marbles)
    elif isinstance(network, str | os.PathLike):
        from zertz.exported import load_network
        from zertz_engine import BUILTIN_MODEL

        if str(network) != BUILTIN_MODEL and not Path(network).exists():
            raise ValueError(
                f"network {str(network)!r} is neither a preset nor a network file that "
                f"exists (the presets: {list(NetConfig.PRESETS)})"
            )
        net = load_network(network)
    else:
        raise TypeError(
            "network must be a preset name, a NetConfig or mapping of its sizes, a network "
            f"file's path or a ZertzNet, not {type(network).__name__}"
        )
    if board not in net.boards:
        raise ValueError(f"the network plays boards {net.boards}, not {board!r} rings")
    # A network read or copied keeps its marble sets: the ones asked for must be among them.
    if marbles is not None and (bad := sorted(set(check_marbles(marbles)) - set(net.marbles))):
        raise ValueError(f"the network plays marbles {net.marbles}, not {bad}")
    return net


class BoardNet(nn.Module):
    """:class:`~zertz.nn.ZertzNet` over a batch of observations of ``board`` (see the module
    docs): ``forward(observation) -> (logits [B, A], value [B])``. ``net`` is the network
    itself (what :func:`zertz.exported.export` writes)."""

    net: ZertzNet

    def __init__(
        self, network: Network = "tiny", *, board: int = 37, marbles: list[str] | None = None
    ) -> None:
        super().__init__()
        self.board = board
        self.net = make_network(network, board, marbles)
        (c, h, w), g = observation_shape(board)
        self.plane_shape = (c, h, w)
        self.globals_size = g

    def split(self, observation: Tensor | Mapping[str, Tensor]) -> tuple[Tensor, Tensor]:
        """``(planes [B, C, H, W], globals [B, G])`` of a batch of flat or dict observations;
        ValueError for another shape."""
        c, h, w = self.plane_shape
        if isinstance(observation, Mapping):
            planes, globals_ = observation["planes"], observation["globals"]
        else:
            if observation.dim() != 2 or observation.size(1) != c * h * w + self.globals_size:
                raise ValueError(
                    f"expected flat observations [B, {c * h * w + self.globals_size}] of "
                    f"{self.board} rings, not {list(observation.shape)}"
                )
            planes = observation[:, : c * h * w].reshape(-1, c, h, w)
            globals_ = observation[:, c * h * w :]
        if tuple(planes.shape[1:]) != self.plane_shape or globals_.shape[1:] != (
            self.globals_size,
        ):
            raise ValueError(
                f"expected planes [B, {c}, {h}, {w}] and globals [B, {self.globals_size}] of "
                f"{self.board} rings, not {list(planes.shape)} and {list(globals_.shape)}"
            )
        return planes.float(), globals_.float()

    def forward(self, observation: Tensor | Mapping[str, Tensor]) -> tuple[Tensor, Tensor]:
        planes, globals_ = self.split(observation)
        return self.net.evaluate(planes, globals_, self.board)

    def sizes(self) -> dict[str, int]:
        """The network's sizes (a mapping :class:`BoardNet` takes back)."""
        return asdict(self.net.net_config())

    def export(self, path: str | os.PathLike[str], *, step: int = 0, name: str = "agent") -> Path:
        """Writes the network as a network file (:func:`zertz.exported.export`) that the
        engine plays: ``zertz match --player nn:PATH``, ``zertz play``, ``zertz serve``."""
        from zertz.exported import export

        return export(self.net, path, step=step, name=name)


def freeze_batch_norm(module: nn.Module) -> None:
    """Puts every batch norm of ``module`` in eval mode (its running statistics used and kept,
    its scale and shift still trained): what policy-gradient methods need, whose ratio compares
    the policy that played a rollout with the one being updated on it (a batch norm in training
    mode would make them different functions of the same input)."""
    for m in module.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.eval()
