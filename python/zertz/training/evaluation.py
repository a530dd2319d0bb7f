"""Evaluation of a training run: matches of the new network in the engine in this process
(``zertz.match``) against the best one before it (an Elo ladder) and the baselines."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zertz.training.layout import leftovers, opponent_tag
from zertz.training.protocols import TrainingRun

# The engine and torch (zertz_engine, zertz.training.folder) are imported where the matches are
# played: final_table reads a run folder without them (python -m zertz table).


def match(
    run: TrainingRun,
    iteration: int,
    model: Path,
    opponent: str,
    games: int,
    sims: int,
    tag: str,
    opening: int = 0,
) -> dict[str, Any]:
    """The network ``model`` (``sims`` simulations per move) against ``opponent``, its games
    written to ``RUN/matches/iter-N-TAG.jsonl``; the engine's summary. The games go to a
    partial file first (``.iter-N-TAG.jsonl.partial-PID``: the engine never replaces a file),
    renamed once the match is over: an iteration that is played again after a kill plays its
    matches again, after removing what the killed one left (and the ``iter-N-TAG.jsonl.partial``
    of the versions before)."""
    from zertz_engine import match as engine_match

    out = run.layout.match_games(iteration, tag)
    for old in [*leftovers(out), out.with_name(out.name + ".partial")]:
        old.unlink(missing_ok=True)
    partial = run.layout.partial_match_games(iteration, tag)
    r: dict[str, Any] = engine_match(
        f"nn:{model}:{sims}",
        opponent,
        games=games,
        board=run.board,
        blitz=run.cfg.run.blitz,
        seed=run.cfg.run.seed + iteration,
        device=run.cfg.run.device,
        cuda_graphs=run.cfg.run.cuda_graphs_flag,
        out=partial,
        opening_actions=opening,
        # One thread a search whatever the machine's cores: the games (and so which network is
        # the best) are the same on every machine.
        search_threads=1,
    )
    os.replace(partial, out)
    r["out"] = str(out)
    return r


def evaluate(
    run: TrainingRun,
    iteration: int,
    final: bool,
    log: Callable[[str], None],
    model: Path | None = None,
) -> dict[str, Any]:
    """The network after ``iteration`` iterations (``model``, by default that iteration's
    export) against the best one and the baselines; it becomes the best
    (``models/best.safetensors``) unless gating keeps the one before."""
    from zertz.training.folder import atomic_copy

    e = run.cfg.evaluate
    model = model or run.model_path(iteration)
    games = e.final_games if final else e.games
    opponents = e.final_opponents if final else e.opponents
    sims = e.final_simulations if final else e.simulations
    results: dict[str, Any] = {}
    # The ladder chains through rated networks: the newest rated one at or before the best.
    anchor = max(k for k in run.state.ladder if k <= run.state.best)
    r = match(
        run,
        iteration,
        model,
        f"nn:{run.model_path(anchor)}:{e.simulations}",
        e.games,
        e.simulations,
        "previous",
        opening=e.opening_actions,
    )
    results["best"] = r
    run.state.ladder[iteration] = run.state.ladder[anchor] + r["elo"]
    log(
        f"  vs iteration {anchor}: {r['wins']}-{r['draws']}-{r['losses']} "
        f"(Elo {r['elo']:+.0f} ± {(r['elo_high'] - r['elo_low']) / 2:.0f})"
    )
    if not e.gating or r["score"] >= e.gating_score:
        run.state.best = iteration
        atomic_copy(model, run.layout.best)
    for opp in opponents:
        r = match(run, iteration, model, opp, games, sims, opponent_tag(opp))
        results[opp] = r
        log(
            f"  vs {opp}: {r['wins']}-{r['draws']}-{r['losses']} (score {r['score']:.2f}, "
            f"Elo {r['elo']:+.0f} ± {(r['elo_high'] - r['elo_low']) / 2:.0f})"
        )
    return results


def final_table(run_dir: str | os.PathLike[str]) -> str:
    """The last evaluation of a run as a text table."""
    from zertz.plots import read_metrics

    evaluated = [x for x in read_metrics(run_dir) if x.get("evaluation")]
    if not evaluated:
        return "no evaluation yet"
    last = evaluated[-1]
    rows = [
        f"network after iteration {last['iteration']} (step {last['step']}):",
        f"{'opponent':<28} {'W':>4} {'D':>4} {'L':>4} {'score':>6} {'Elo':>14}",
    ]
    for opp, r in last["evaluation"].items():
        name = "previous best" if opp == "best" else opp
        half = (r["elo_high"] - r["elo_low"]) / 2
        rows.append(
            f"{name:<28} {r['wins']:>4} {r['draws']:>4} {r['losses']:>4} "
            f"{r['score']:>6.2f} {r['elo']:>+7.0f} ± {half:<4.0f}"
        )
    if last.get("human"):
        rows.append("human moves (validation games of [pretrain] dataset):")
        for board, h in last["human"].items():
            rows.append(
                f"  {board} rings: top-1 {h['top1']:.1%}, top-5 {h['top5']:.1%}, value "
                f"predicts the winner {h['value']:.1%} ({h['decisions']} decisions, "
                f"{h['games']} games)"
            )
    return "\n".join(rows)
