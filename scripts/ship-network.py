"""Makes a training run's network the engine's built-in one (``nn:builtin``): exports the run's
final network (``RUN/models/iter-N-average.pt`` when the run averaged its last networks,
``train.average``, else the network of ``RUN/checkpoint.pt``) to ``model/builtin/builtin.pt``
with its provenance in the metadata (the run's config, the commit that trained it, the run's
final evaluation and human-move benchmark, and the figures of FIGURES.json, such as matches
against alphabeta), then rebuild (the engine and the Python module carry the file).

    .venv/bin/python scripts/ship-network.py RUN --commit HASH [--figures FIGURES.json]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from zertz.exported import average_networks, export
from zertz.training import export_checkpoint

FIELDS = ("games", "wins", "draws", "losses", "score", "elo", "elo_low", "elo_high", "move_time")


def provenance(run: Path, commit: str, figures: dict[str, Any]) -> dict[str, Any]:
    """What the built-in network's metadata says of where it comes from."""
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise SystemExit(f"--commit must be a full commit hash, not {commit!r}")
    lines = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    final = [m for m in lines if m.get("final")]
    if not final:
        raise SystemExit(f"{run} has not finished (no final evaluation in metrics.jsonl)")
    last = final[-1]
    evaluation = {
        name: {"player": r["a"], "opponent": r["b"], **{k: r[k] for k in FIELDS if k in r}}
        for name, r in last["evaluation"].items()
        if name != "best"
    }
    return {
        "config": (run / "config.toml").read_text(),
        "commit": commit,
        "step": last["step"],
        "iterations": last["iteration"],
        "figures": {"final_evaluation": evaluation, "human": last.get("human"), **figures},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--commit", required=True, help="the commit that trained the run")
    parser.add_argument("--figures", type=Path, help="a JSON object of more figures")
    parser.add_argument("--out", type=Path, default=Path("model/builtin/builtin.pt"))
    args = parser.parse_args()
    figures = json.loads(args.figures.read_text()) if args.figures else {}
    meta = provenance(args.run, args.commit, figures)
    # The network the final evaluation played: the mean of the last ones when the run made it.
    average = args.run / "models" / f"iter-{meta['iterations']:04d}-average.pt"
    if average.exists():
        net, exported = average_networks([average])
        print(export(net, args.out, step=exported["step"], provenance=meta))
    else:
        print(export_checkpoint(args.run / "checkpoint.pt", args.out, provenance=meta))


if __name__ == "__main__":
    main()
