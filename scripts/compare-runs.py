"""Compares two training run folders, or two datasets, file by file, for what a fixed seed must
reproduce: the weights of every network (``models/*.pt``, ``checkpoint.pt``), the arrays of every
shard, the game records, the matches' moves and results, the metrics lines, every other file byte
for byte. Times and the figures made of them (keys naming seconds, time, share, effort, ETA) are
left out, and each folder's own path is read as ``RUN`` (match records name their players by
path). TensorBoard's event files, the lock and the config's copy are skipped. Prints a line per
file and exits with status 1 when any differs.

Two runs of one commit, or the same config at two commits (same machine, same thread counts):

    .venv/bin/python -m zertz train --config C.toml --run /tmp/a
    other/.venv/bin/python -m zertz train --config C.toml --run /tmp/b
    .venv/bin/python scripts/compare-runs.py /tmp/a /tmp/b
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

SKIPPED = (".lock", "config.toml")
TIMED = ("second", "time", "share", "effort", "eta")


def files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def untimed(value: Any) -> Any:
    """``value`` without the keys whose values are times or made of them."""
    if isinstance(value, dict):
        return {
            k: untimed(v) for k, v in value.items() if not any(w in k for w in TIMED)
        }
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def json_values(path: Path, folder: Path) -> list[Any]:
    """The JSON value of a ``.json`` file, or those of a ``.jsonl`` file's lines, untimed."""
    text = (
        path.read_text()
        .replace(str(folder.resolve()), "RUN")
        .replace(str(folder), "RUN")
    )
    lines = text.splitlines() if path.suffix == ".jsonl" else [text]
    return [untimed(json.loads(line)) for line in lines if line.strip()]


def weights(path: Path) -> dict[str, torch.Tensor]:
    """The weights of an exported network."""
    module: torch.jit.ScriptModule = torch.jit.load(str(path))  # type: ignore[no-untyped-call]
    return module.state_dict()


def same_tensors(x: dict[str, torch.Tensor], y: dict[str, torch.Tensor]) -> bool:
    return x.keys() == y.keys() and all(torch.equal(x[k], y[k]) for k in x)


def same(name: str, a: Path, b: Path) -> bool:
    x, y = a / name, b / name
    if name.startswith("models/") and name.endswith(".pt"):
        return same_tensors(weights(x), weights(y))
    if name == "checkpoint.pt":
        cx = torch.load(x, weights_only=False)
        cy = torch.load(y, weights_only=False)
        return bool(
            same_tensors(cx["model"], cy["model"]) and cx["state"] == cy["state"]
        )
    if name.endswith(".npz"):
        with np.load(x) as nx, np.load(y) as ny:
            return sorted(nx.files) == sorted(ny.files) and all(
                np.array_equal(nx[k], ny[k]) for k in nx.files
            )
    if name.endswith((".json", ".jsonl")):
        return json_values(x, a) == json_values(y, b)
    return x.read_bytes() == y.read_bytes()


def main(a: Path, b: Path) -> int:
    fa, fb = files(a), files(b)
    differ = 0
    for only, folder in ((fa - fb, a), (fb - fa, b)):
        for name in sorted(only):
            if not name.startswith("tb/"):
                print(f"only in {folder}: {name}")
                differ += 1
    for name in sorted(fa & fb):
        if name.startswith("tb/") or name in SKIPPED:
            continue
        ok = same(name, a, b)
        print(("same    " if ok else "DIFFERS ") + name)
        differ += not ok
    print(f"{differ} of {len(fa & fb)} files differ" if differ else "no difference")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    folders = [Path(arg) for arg in sys.argv[1:]]
    for folder in folders:
        if not folder.is_dir():
            raise SystemExit(f"error: {folder} is not a folder")
    sys.exit(main(*folders))
