"""What the steps of an iteration use of a run (:class:`TrainingRun`): self-play
(:mod:`~zertz.training.selfplay`), the SGD steps (:mod:`~zertz.training.fitting`), the
evaluation (:mod:`~zertz.training.evaluation`) and the pretraining
(:mod:`~zertz.training.pretraining`) take a run typed by it, and :class:`zertz.training.Run`
(:mod:`~zertz.training.loop`), which calls them, is one. So the steps import no loop, and the
loop imports the steps.

Nothing here is imported at run time but ``typing``: the evaluation's table reads a run folder
without torch and the engine (``python -m zertz table``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    import torch

    from zertz.nn import ZertzNet
    from zertz.training.config import TrainConfig
    from zertz.training.folder import State
    from zertz.training.layout import RunLayout


class Augment(Protocol):
    """A random symmetry of the board applied to a batch of planes, legal masks and policies
    (:class:`~zertz.training.fitting.Augmenter`)."""

    def __call__(
        self, planes: torch.Tensor, legal: torch.Tensor, policy: torch.Tensor, gen: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]: ...


class TrainingRun(Protocol):
    """A run folder being trained, as the steps of an iteration see it (read-only here: the
    steps change the network, the optimizer and the :class:`~zertz.training.folder.State` in
    place)."""

    @property
    def cfg(self) -> TrainConfig:
        """The run's settings."""
        ...

    @property
    def layout(self) -> RunLayout:
        """Every path of the run folder."""
        ...

    @property
    def board(self) -> int:
        """The run's board (``run.board``)."""
        ...

    @property
    def actions(self) -> int:
        """The size of the board's action space."""
        ...

    @property
    def device(self) -> torch.device:
        """Where the network trains."""
        ...

    @property
    def net(self) -> ZertzNet:
        """The network."""
        ...

    @property
    def opt(self) -> torch.optim.Optimizer:
        """The network's optimizer."""
        ...

    @property
    def gen(self) -> torch.Generator:
        """The run's generator, which the training's own draws use."""
        ...

    @property
    def state(self) -> State:
        """The counters the checkpoint saves (step, iteration, best network, ladder)."""
        ...

    @property
    def augment(self) -> Augment:
        """The random symmetries of the run's board."""
        ...

    @property
    def selfplay_settings(self) -> dict[str, Any]:
        """Rust's self-play settings (checked)."""
        ...

    @property
    def warmup_settings(self) -> dict[str, Any]:
        """Rust's self-play settings of the warm-up (checked)."""
        ...

    def model_path(self, iteration: int) -> Path:
        """The network after ``iteration`` iterations, as exported."""
        ...
