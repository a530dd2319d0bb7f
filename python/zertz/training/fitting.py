"""Training the network on self-play data: the learning-rate schedule, random board symmetries,
the losses, and the SGD steps of an iteration."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import torch

from zertz._zertz import symmetry_tables
from zertz.data import load_shards
from zertz.nn import CAPTURES_SCALE, NonFiniteError, ZertzNet, check_finite, masked_log_softmax
from zertz.training.config import TrainSection
from zertz.training.protocols import Augment, TrainingRun


def learning_rate(train: TrainSection, iterations: int, step: int) -> float:
    """The learning rate of SGD step ``step`` of a run of ``iterations`` iterations: a function of
    the step alone, so that a resumed run follows the same schedule.

    >>> t = TrainSection(steps=10, learning_rate=1e-3, schedule="cosine", final_learning_rate=0.0)
    >>> [round(learning_rate(t, 2, s), 6) for s in (0, 10, 20)]
    [0.001, 0.0005, 0.0]
    """
    if train.schedule == "constant":
        return train.learning_rate
    progress = min(1.0, step / max(1, iterations * train.steps))
    cos = 0.5 * (1.0 + math.cos(math.pi * progress))
    return train.final_learning_rate + (train.learning_rate - train.final_learning_rate) * cos


class Augmenter:
    """Applies a random symmetry of the board to a batch of planes, masks and policies."""

    def __init__(self, board: int, device: torch.device) -> None:
        cells, actions = symmetry_tables(board)
        self.cells = torch.from_numpy(cells).to(device)
        self.actions = torch.from_numpy(actions).to(device)

    def __call__(
        self, planes: torch.Tensor, legal: torch.Tensor, policy: torch.Tensor, gen: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        b, c, h, w = planes.shape
        s = torch.randint(len(self.cells), (b,), generator=gen).to(planes.device)
        cells = self.cells[s][:, None, :].expand(b, c, h * w)
        planes = planes.flatten(2).gather(2, cells).view(b, c, h, w)
        acts = self.actions[s]
        return planes, legal.gather(1, acts), policy.gather(1, acts)


def losses(
    net: ZertzNet,
    planes: torch.Tensor,
    globals_: torch.Tensor,
    legal: torch.Tensor,
    policy: torch.Tensor,
    value: torch.Tensor,
    full: torch.Tensor,
    captures: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Policy cross-entropy (on fully searched positions only, playout-cap randomization), value
    mean squared error, and the auxiliary captures loss: the squared error of each side's final
    captures by colour (in units of ``CAPTURES_SCALE``) summed over the six, on the samples that
    have them (NaN rows, from shards of format 1, have none)."""
    logits, v, c = net.forward_train(planes, globals_)
    logp = masked_log_softmax(logits, legal)
    ce = -torch.where(policy > 0, policy * logp, torch.zeros_like(logp)).sum(1)
    weight = full.float()
    policy_loss = (ce * weight).sum() / weight.sum().clamp(min=1.0)
    value_loss = torch.mean((v - value) ** 2)
    known = ~torch.isnan(captures).any(1)
    target = torch.nan_to_num(captures) / CAPTURES_SCALE
    per_sample = ((c - target) ** 2).sum(1) * known.float()
    captures_loss = per_sample.sum() / known.float().sum().clamp(min=1.0)
    return policy_loss, value_loss, captures_loss


def batch_arrays(
    data: dict[str, npt.NDArray[np.generic]],
    value: npt.NDArray[np.generic],
    full: npt.NDArray[np.generic],
    device: torch.device,
) -> tuple[torch.Tensor, ...]:
    """The arrays of :func:`zertz.load_shards` that :func:`sgd_step` takes, on ``device`` and in
    its order, with the value target ``value`` and the full-search flags ``full``: index each
    with a batch's sample indices."""
    keys = ("planes", "globals", "legal_action_mask", "policy")
    return (
        *(torch.from_numpy(data[k]).to(device) for k in keys),
        torch.from_numpy(value).to(device),
        torch.from_numpy(full).to(device),
        torch.from_numpy(data["final_captures"]).to(device),
    )


@dataclass(frozen=True)
class Learner:
    """What an SGD step changes and weighs: the network, its optimizer, the generator of the
    random symmetries, and the weights of the value and captures losses beside the policy's (a
    run's: :meth:`of`)."""

    net: ZertzNet
    opt: torch.optim.Optimizer
    gen: torch.Generator
    value_weight: float
    captures_weight: float

    @staticmethod
    def of(run: TrainingRun) -> Learner:
        """The learner of a run: its network, optimizer and generator, ``[train]``'s weights."""
        t = run.cfg.train
        return Learner(run.net, run.opt, run.gen, t.value_weight, t.captures_weight)


def sgd_step(
    learner: Learner,
    lr: float,
    augment: Augment | None,
    batch: tuple[torch.Tensor, ...],
    diverged: Callable[[float, float, float], str],
) -> tuple[float, float, float]:
    """One optimizer step of the learner's network at learning rate ``lr`` on ``batch``
    (planes, globals, legal masks, policies, values, full-search flags, final captures), under a
    random symmetry of the board when ``augment`` is given; returns the policy, value and
    captures losses. A loss that is not finite raises NonFiniteError with ``diverged(loss,
    policy_loss, value_loss)`` before the weights change."""
    planes, globals_, legal, policy, value, full, captures = batch
    for group in learner.opt.param_groups:
        group["lr"] = lr
    if augment is not None:
        planes, legal, policy = augment(planes, legal, policy, learner.gen)
    pl, vl, cl = losses(learner.net, planes, globals_, legal, policy, value, full, captures)
    loss = pl + learner.value_weight * vl + learner.captures_weight * cl
    pl_f, vl_f, cl_f, loss_f = torch.stack(
        [pl.detach(), vl.detach(), cl.detach(), loss.detach()]
    ).tolist()
    if not math.isfinite(loss_f):
        raise NonFiniteError(diverged(loss_f, pl_f, vl_f))
    learner.opt.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    learner.opt.step()
    return pl_f, vl_f, cl_f


def fit(run: TrainingRun, shards: list[Path]) -> dict[str, float]:
    """``train.steps`` SGD steps on batches drawn from ``shards``."""
    t = run.cfg.train
    data = load_shards(shards, run.actions)
    n = len(data["value"])
    if n == 0 or t.steps == 0:
        nan = math.nan
        return {
            "samples": float(n),
            "policy_loss": nan,
            "value_loss": nan,
            "captures_loss": nan,
            "train_seconds": 0.0,
        }
    q = t.q_weight
    target = (1 - q) * data["value"].astype(np.float32) + q * data["root_value"].astype(np.float32)
    arrays = batch_arrays(data, target, data["full_search"], run.device)
    run.net.train()
    learner = Learner.of(run)
    sums = {"policy_loss": 0.0, "value_loss": 0.0, "captures_loss": 0.0}
    started = time.perf_counter()
    for _ in range(t.steps):
        lr = learning_rate(run.cfg.train, run.cfg.run.iterations, run.state.step)
        idx = torch.randint(n, (min(t.batch_size, n),), generator=run.gen).to(run.device)
        batch = tuple(a[idx] for a in arrays)

        def diverged(loss: float, pl: float, vl: float, lr: float = lr) -> str:
            return (
                f"training diverged at step {run.state.step}: the loss is {loss} (policy "
                f"{pl}, value {vl}) at learning rate {lr:g}; iteration "
                f"{run.state.iteration + 1} was not saved: lower train.learning_rate (in a "
                "new run folder)"
            )

        pl_f, vl_f, cl_f = sgd_step(
            learner, lr, run.augment if t.augment else None, batch, diverged
        )
        run.state.step += 1
        sums["policy_loss"] += pl_f
        sums["value_loss"] += vl_f
        sums["captures_loss"] += cl_f
    run.net.eval()
    check_finite(run.net, f"after training step {run.state.step}")
    stats = {k: v / t.steps for k, v in sums.items()}
    stats["learning_rate"] = learning_rate(run.cfg.train, run.cfg.run.iterations, run.state.step)
    stats["samples"] = float(n)
    stats["train_seconds"] = time.perf_counter() - started
    return stats
