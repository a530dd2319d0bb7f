"""Curves of a training run for a notebook: losses, the Elo ladder and scores against baselines.

>>> import zertz
>>> fig = zertz.plot("runs/default")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from zertz.files import read_text
from zertz.training.layout import RunLayout
from zertz.training.metrics import iteration_of


def read_metrics(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The per-iteration statistics of a run (``RUN/metrics.jsonl``), one per iteration, in
    order; a line cut short by an interruption, or one that is no metrics line, is skipped.
    A resumed run keeps one line per iteration its checkpoint holds; until it resumes, the line
    of an iteration that a kill stopped before its checkpoint may be there (of two lines of an
    iteration, the last is read)."""
    path = RunLayout(Path(run_dir)).metrics
    if not path.exists():
        raise FileNotFoundError(f"{path}: no metrics yet (has the run finished an iteration?)")
    by_iteration: dict[int, dict[str, Any]] = {}
    # A regular file within its bound (OSError naming it otherwise: a link to /dev/zero).
    for line in read_text(path, "metrics", errors="replace").splitlines():
        if iteration_of(line) is not None:
            row = json.loads(line)
            by_iteration[row["iteration"]] = row
    return [by_iteration[i] for i in sorted(by_iteration)]


def plot(run_dir: str | os.PathLike[str]) -> Any:
    """A matplotlib figure with three panels: policy and value loss per iteration, the Elo ladder
    (each evaluated network against the best before it, chained; the untrained network is 0) with
    95% intervals, and the score against each baseline; a fourth with the human-move benchmark's
    top-1 and top-5 per board when the run has a [pretrain] dataset."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        if e.name != "matplotlib":
            raise
        raise ImportError(
            "zertz.plot needs matplotlib: pip install matplotlib (or 'zertz[train]')"
        ) from e

    rows = read_metrics(run_dir)
    human = [r for r in rows if r.get("human")]
    panels = 4 if human else 3
    fig, axes = plt.subplots(1, panels, figsize=(14 * panels / 3, 3.8))
    ax_loss, ax_elo, ax_score = axes[:3]

    trained = [r for r in rows if r.get("policy_loss") is not None]
    its = [r["iteration"] for r in trained]
    ax_loss.plot(its, [r["policy_loss"] for r in trained], "o-", label="policy")
    ax_loss.plot(its, [r.get("value_loss") for r in trained], "o-", label="value")
    ax_loss.set(title="training loss", xlabel="iteration")
    ax_loss.legend()

    evaluated = [r for r in rows if r.get("evaluation")]
    xs = [0] + [r["iteration"] for r in evaluated]
    elo = [0.0] + [r["elo"] for r in evaluated]
    half = [0.0] + [
        (r["evaluation"]["best"]["elo_high"] - r["evaluation"]["best"]["elo_low"]) / 2
        for r in evaluated
    ]
    ax_elo.errorbar(xs, elo, yerr=half, fmt="o-", capsize=3)
    ax_elo.set(title="Elo ladder (vs previous best, chained)", xlabel="iteration")

    opponents = sorted({k for r in evaluated for k in r["evaluation"] if k != "best"})
    for opp in opponents:
        pts = [
            (r["iteration"], r["evaluation"][opp]["score"])
            for r in evaluated
            if opp in r["evaluation"]
        ]
        ax_score.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=opp)
    ax_score.set(title="score against baselines", xlabel="iteration", ylim=(-0.05, 1.05))
    if opponents:
        ax_score.legend()
    from matplotlib.ticker import MaxNLocator

    if human:
        ax_human = axes[3]
        for board in sorted({b for r in human for b in r["human"]}):
            for key, style in (("top1", "o-"), ("top5", "s--")):
                pts = [
                    (r["iteration"], r["human"][board][key]) for r in human if board in r["human"]
                ]
                ax_human.plot(
                    [p[0] for p in pts], [p[1] for p in pts], style, label=f"{board}: {key}"
                )
        ax_human.set(title="human moves predicted", xlabel="iteration", ylim=(0, 1))
        ax_human.legend()
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    return fig
