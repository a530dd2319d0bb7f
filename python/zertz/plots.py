"""Curves of a training run for a notebook: losses, the Elo ladder and scores against baselines.

>>> import zertz
>>> fig = zertz.plot("runs/default")  # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def read_metrics(run_dir: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The per-iteration statistics of a run (``RUN/metrics.jsonl``), in order; a line cut short
    by an interruption is skipped."""
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no metrics yet (has the run finished an iteration?)")
    rows = []
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    # A resumed run may repeat an iteration that was not checkpointed: keep the last of each.
    by_iteration = {r["iteration"]: r for r in rows}
    return [by_iteration[i] for i in sorted(by_iteration)]


def plot(run_dir: str | os.PathLike[str]) -> Any:
    """A matplotlib figure with three panels: policy and value loss per iteration, the Elo ladder
    (each evaluated network against the best before it, chained; the untrained network is 0) with
    95% intervals, and the score against each baseline."""
    import matplotlib.pyplot as plt

    rows = read_metrics(run_dir)
    its = [r["iteration"] for r in rows]
    fig, (ax_loss, ax_elo, ax_score) = plt.subplots(1, 3, figsize=(14, 3.8))

    ax_loss.plot(its, [r.get("policy_loss") for r in rows], "o-", label="policy")
    ax_loss.plot(its, [r.get("value_loss") for r in rows], "o-", label="value")
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

    for ax in (ax_loss, ax_elo, ax_score):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    return fig
