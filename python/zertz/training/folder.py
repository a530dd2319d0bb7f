"""The run folder: its lock, atomic writes, the device, and checkpoints (read with
``weights_only=True``: tensors and plain data, never objects whose unpickling could run code)."""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from zertz._zertz import BOARDS
from zertz.nn import NetConfig, ZertzNet, atomic_path, export, export_aoti
from zertz.training.config import DEVICE


def atomic_save(obj: Any, path: Path) -> None:
    with atomic_path(path) as tmp:
        torch.save(obj, tmp)


def atomic_write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def atomic_copy(src: Path, dst: Path) -> None:
    with atomic_path(dst) as tmp:
        shutil.copyfile(src, tmp)


def lock(folder: Path) -> Any:
    """An exclusive lock on a run folder for this process's lifetime (released when it ends,
    however it ends)."""
    f = open(folder / ".lock", "a")  # held open on purpose
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise ValueError(f"{folder} is in use by another training process") from None
    return f


def trim_partial_line(path: Path) -> None:
    """Cuts a last line left unfinished by a kill, so the next append starts a line of its own."""
    if path.exists():
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            path.write_bytes(data[: data.rfind(b"\n") + 1])


def device(name: str) -> torch.device:
    """run.device as a torch device; ValueError for one this machine does not have."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if not DEVICE.match(name):
        raise ValueError(f"run.device must be auto, cpu, cuda or cuda:N, not {name!r}")
    device = torch.device(name)
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if (device.index or 0) >= count:
            raise ValueError(f"run.device = {name!r}: this machine has {count} CUDA device(s)")
    return device


def first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0].strip()}" if lines else type(e).__name__


@dataclass
class State:
    """What a checkpoint holds besides the weights."""

    iteration: int = 0
    step: int = 0
    #: Elo of the network after each evaluated iteration, chained through matches against the
    #: best network so far (iteration 0, the untrained network, is 0).
    ladder: dict[int, float] = field(default_factory=lambda: {0: 0.0})
    best: int = 0
    #: Whether the pretraining on records ([pretrain]) is done.
    pretrained: bool = False


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a training checkpoint on the CPU, with ``torch.load(weights_only=True)``: tensors
    and plain data only, never objects, whose unpickling could run code. ValueError (naming the
    file) for anything else: other files, corrupt ones, pickles of objects (checkpoints of older
    versions of zertz, which held numpy random states, among them)."""
    try:
        with warnings.catch_warnings():
            # A pickle protocol torch did not write warns; the file is refused or read anyway.
            warnings.simplefilter("ignore")
            ck = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as e:
        if found := re.search(r"GLOBAL ([\w.]+)", str(e)):
            raise ValueError(
                f"{path} is refused: it holds a {found[1]} object, and a checkpoint holds only "
                "tensors and plain data (loading objects could run code; checkpoints of older "
                "zertz versions, with numpy random states, are refused too: start a new run "
                "folder or export with that version)"
            ) from None
        raise ValueError(f"{path} is not a zertz training checkpoint ({first_line(e)})") from None
    keys = ("model", "optimizer", "state", "rng", "network", "board")
    if not isinstance(ck, dict) or not all(k in ck for k in keys):
        raise ValueError(f"{path} is not a zertz training checkpoint")
    return ck


def net_of_checkpoint(ck: Mapping[str, Any], path: str | os.PathLike[str]) -> ZertzNet:
    """The network of a checkpoint read by :func:`load_checkpoint`, with its weights; its sizes
    are checked against the tensors of the file before any memory is taken for it."""
    try:
        if not isinstance(ck["network"], dict) or not isinstance(ck["model"], dict):
            raise ValueError("no network sizes and weights")
        config = NetConfig.from_dict(ck["network"])
        board = ck["board"]
        if not isinstance(board, int) or board not in BOARDS:
            raise ValueError(f"board {board!r}")
        state: dict[str, Any] = ck["model"]
        blocks = {k.split(".")[1] for k in state if k.startswith("blocks.")}
        if len(blocks) != config.blocks or blocks != {str(b) for b in range(config.blocks)}:
            raise ValueError(f"{config.blocks} blocks in the sizes, not in the weights")
        stem = state.get("stem.weight")
        if not isinstance(stem, torch.Tensor) or stem.shape[:1] != (config.channels,):
            raise ValueError("weights that do not fit the sizes (stem.weight)")
        # Built without memory (the meta device) to compare every shape with the file's.
        with torch.device("meta"):
            shapes = {k: v.shape for k, v in ZertzNet(config, boards=[board]).state_dict().items()}
        got = {k: v.shape if isinstance(v, torch.Tensor) else None for k, v in state.items()}
        if got != shapes:
            bad = sorted(k for k in set(got) | set(shapes) if got.get(k) != shapes.get(k))
            raise ValueError(f"weights that do not fit the sizes ({', '.join(bad[:3])})")
        net = ZertzNet(config, boards=[board])
        net.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ValueError(
            f"{path} is not a usable zertz training checkpoint ({first_line(e)})"
        ) from None
    return net


def export_checkpoint(
    checkpoint: str | os.PathLike[str],
    out: str | os.PathLike[str],
    device: str = "cpu",
    precision: str = "fp32",
) -> Path:
    """Exports the network of a training checkpoint (``RUN/checkpoint.pt``) as a model file:
    TorchScript, or an AOTInductor package for ``device`` in ``precision`` when ``out`` ends in
    ``.pt2`` (:func:`zertz.nn.export_aoti`). ValueError for a file that is not one (it is read
    with ``weights_only=True``: objects, whose unpickling could run code, are refused) and for
    NaN or infinite weights."""
    ck = load_checkpoint(checkpoint)
    net = net_of_checkpoint(ck, checkpoint)
    state = ck["state"]
    step = state.get("step") if isinstance(state, dict) else None
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ValueError(f"{checkpoint} is not a zertz training checkpoint (no training step)")
    if Path(out).suffix == ".pt2":
        return export_aoti(
            net, out, step=step, boards=net.boards, device=device, precision=precision
        )
    return export(net, out, step=step, boards=net.boards)
