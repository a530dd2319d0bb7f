"""The run folder: its lock, atomic writes, the device, and checkpoints (read with
``weights_only=True``: tensors and plain data, never objects whose unpickling could run code)."""

from __future__ import annotations

import fcntl
import io
import math
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import torch

from zertz._zertz import BOARDS
from zertz.exported import export, export_aoti
from zertz.files import read_bytes, torch_file, write_atomic
from zertz.nn import AUX_PREFIX, NetConfig, ZertzNet, marbles_of
from zertz.training.config import TrainConfig, load_config
from zertz.training.layout import LEGACY_SUFFIX, NETWORK_SUFFIX, RunLayout
from zertz_engine import devices


def atomic_save(obj: Any, path: Path) -> None:
    """``torch.save(obj)`` to ``path``, atomically (:func:`zertz.files.write_atomic`: a full
    disk is one line naming the file). Saved into memory first, so that the archive inside is
    named ``archive`` and not after a file (``.NAME.partial-PID``, which would make two
    checkpoints of the same contents, written by two processes, differ byte for byte), and so
    that Python, not libtorch, writes the file."""
    data = io.BytesIO()
    torch.save(obj, data)
    write_atomic(path, data.getvalue())


def atomic_write_text(path: Path, text: str) -> None:
    write_atomic(path, text.encode())


def atomic_copy(src: Path, dst: Path) -> None:
    """Copies the exported network ``src`` to ``dst``, atomically (read as
    :func:`zertz.files.read_bytes` reads a network)."""
    write_atomic(dst, read_bytes(src, "network"))


def lock(folder: Path) -> Any:
    """An exclusive lock on a run folder for this process's lifetime (released when it ends,
    however it ends)."""
    f = open(RunLayout(folder).lock, "a")  # held open on purpose
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise ValueError(f"{folder} is in use by another training process") from None
    return f


def device(name: str) -> torch.device:
    """The device the training runs on: the first of those ``run.device`` names (the engine's
    grammar, ``zertz_engine.devices``); ValueError for one this machine does not have."""
    try:
        return torch.device(devices(name)[0])
    except ValueError as e:
        raise ValueError(f"run.device = {name!r}: {e}") from None


def first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0].strip()}" if lines else type(e).__name__


def printable(text: str) -> str:
    r"""``text`` with control, invisible and undecodable characters escaped (``\x1b``,
    ``\u202e``, ``\udcff``), so that a name can neither retitle the terminal nor break the
    output's encoding (the run tools' messages; ``zertz_archive::printable`` does the same in Rust).

    >>> printable("a\x1b]0;title\x07b")
    'a\\x1b]0;title\\x07b'
    """
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _is_count(value: object) -> bool:
    """Whether ``value`` is an int of at least 0 (a bool is not one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


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
    #: Iterations played in another run folder, whose self-play is not in this one: a run
    #: carried on from another's checkpoint (``python -m zertz train --from``) starts with them.
    carried: int = 0

    @classmethod
    def read(cls, data: object, path: str | os.PathLike[str]) -> State:
        """The state of a checkpoint (its ``"state"``), checked on its own: ValueError naming
        ``path`` and the field for anything that no run writes (other types, negative counts,
        ``best`` after ``iteration``, ladder keys that are not iterations of the run so far, an
        Elo that is not a finite number, ``pretrained`` not a bool, ``carried`` past
        ``iteration``, unknown or missing fields). :meth:`check_run` checks it against the run
        folder."""
        if not isinstance(data, dict):
            raise _impossible(path, "state", data, "not a table of the run's counters")
        names = [f.name for f in fields(cls)]
        for key in data:
            if key not in names:
                raise _impossible(path, f"state.{key}", data[key], "not a field of the state")
        # Checkpoints older than the pretraining on records have no `pretrained`.
        for key in ("iteration", "step", "ladder", "best"):
            if key not in data:
                raise ValueError(
                    f"{path} is not a usable checkpoint of this run (its state has no {key})"
                )
        for key in ("iteration", "step", "best"):
            if not _is_count(data[key]):
                raise _impossible(path, f"state.{key}", data[key], "not a count (an int >= 0)")
        iteration = data["iteration"]
        if data["best"] > iteration:
            raise _impossible(path, "state.best", data["best"], f"after iteration {iteration}")
        pretrained = data.get("pretrained", False)
        if not isinstance(pretrained, bool):
            raise _impossible(path, "state.pretrained", pretrained, "not true or false")
        # Checkpoints older than carrying runs on have no `carried`.
        carried = data.get("carried", 0)
        if not _is_count(carried) or carried > iteration:
            why = f"not a count of iterations 0..{iteration}"
            raise _impossible(path, "state.carried", carried, why)
        ladder = data["ladder"]
        if not isinstance(ladder, dict) or 0 not in ladder:
            raise _impossible(path, "state.ladder", ladder, "not a table of Elo from iteration 0")
        for k, elo in ladder.items():
            if not _is_count(k) or k > iteration:
                raise _impossible(
                    path, "state.ladder", k, f"a key that is not an iteration 0..{iteration}"
                )
            if isinstance(elo, bool) or not isinstance(elo, int | float) or not math.isfinite(elo):
                raise _impossible(path, f"state.ladder[{k}]", elo, "not a finite Elo")
        return cls(
            iteration=iteration,
            step=data["step"],
            ladder={k: float(v) for k, v in ladder.items()},
            best=data["best"],
            pretrained=pretrained,
            carried=carried,
        )

    def check_run(self, path: str | os.PathLike[str], cfg: TrainConfig, folder: Path) -> None:
        """Checks the state against the run it resumes (``cfg``, the run ``folder``):
        ValueError naming ``path`` and the field for a step count its iterations cannot take,
        an iteration whose self-play is not in the folder (each iteration is trained on its
        own, ``shards/iter-N``; but for the ``carried`` ones, played in another folder), or
        pretraining done in a run without it (or not done before the iterations of a run with
        it)."""
        most = self.iteration * cfg.train.steps
        if self.step > most:
            why = f"more than {self.iteration} iteration(s) of train.steps = {cfg.train.steps} take"
            raise _impossible(path, "state.step", self.step, why)
        played_here = self.iteration > self.carried
        if played_here and not RunLayout(folder).chunks(self.iteration - 1).is_dir():
            why = f"beyond this run: {folder}/shards has no self-play of iteration {self.iteration}"
            raise _impossible(path, "state.iteration", self.iteration, why)
        if self.pretrained and not cfg.pretrain.steps:
            raise _impossible(path, "state.pretrained", True, "and this run does not pretrain")
        if not self.pretrained and cfg.pretrain.steps and self.iteration:
            why = f"after {self.iteration} iteration(s) of a run that pretrains first"
            raise _impossible(path, "state.pretrained", False, why)


def _impossible(path: str | os.PathLike[str], key: str, value: object, why: str) -> ValueError:
    """The refusal of a checkpoint whose state no run can have written."""
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
    return ValueError(
        f"{path} claims an impossible {key} = {shown} ({why}): it is not a checkpoint this run "
        "wrote; put back the run's own checkpoint.pt, or start a new run folder"
    )


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Reads a training checkpoint on the CPU, with ``torch.load(weights_only=True)``: tensors
    and plain data only, never objects, whose unpickling could run code. ValueError (naming the
    file) for anything else: other files, corrupt ones, pickles of objects (checkpoints of older
    versions of zertz, which held numpy random states, among them). OSError naming the file for
    one that is not a regular file (a FIFO, a device) or is past ``zertz.files.LIMITS
    ["checkpoint"]``, refused before it is opened."""
    # A regular file within the bound of a checkpoint (OSError naming it otherwise), read before
    # torch sees it: torch opens nothing.
    data = torch_file(path, "checkpoint")
    try:
        with warnings.catch_warnings():
            # A pickle protocol torch did not write warns; the file is refused or read anyway.
            warnings.simplefilter("ignore")
            ck = torch.load(data, map_location="cpu", weights_only=True)
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


def read_state(run_dir: str | os.PathLike[str]) -> State | None:
    """The state of a run folder's checkpoint (``RUN/checkpoint.pt``, checked by
    :meth:`State.read`), or None before its first checkpoint."""
    path = RunLayout(Path(run_dir)).checkpoint
    if not path.exists():
        return None
    return State.read(load_checkpoint(path)["state"], path)


def _marbles_of_checkpoint(ck: Mapping[str, Any], path: str | os.PathLike[str]) -> list[str]:
    """The marble sets of a checkpoint's network. One written before they were saved is of its
    run's set: the ``run.blitz`` of the run's ``config.toml`` beside it, else (a checkpoint
    without its run folder) the standard one, as the engine reads an older export."""
    if "marbles" in ck:
        marbles: list[str] = ck["marbles"]
        return marbles
    config = RunLayout.of_checkpoint(path).config
    return marbles_of(load_config(config).run.blitz if config.is_file() else False)


def net_of_checkpoint(ck: Mapping[str, Any], path: str | os.PathLike[str]) -> ZertzNet:
    """The network of a checkpoint read by :func:`load_checkpoint`, with its weights; its sizes
    are checked against the tensors of the file before any memory is taken for it."""
    marbles = _marbles_of_checkpoint(ck, path)
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
        if not any(k.startswith(AUX_PREFIX) for k in got):  # written before the auxiliary head
            shapes = {k: v for k, v in shapes.items() if not k.startswith(AUX_PREFIX)}
        if got != shapes:
            bad = sorted(k for k in set(got) | set(shapes) if got.get(k) != shapes.get(k))
            raise ValueError(f"weights that do not fit the sizes ({', '.join(bad[:3])})")
        net = ZertzNet(config, boards=[board], marbles=marbles)
        net.load_weights(state)
    except (KeyError, TypeError, ValueError, RuntimeError) as e:
        raise ValueError(
            f"{path} is not a usable zertz training checkpoint ({first_line(e)})"
        ) from None
    return net


def check_network_name(out: str | os.PathLike[str]) -> None:
    """Refuses to write a network file under a ``.pt`` name (ValueError): such names are taken
    for pickles and TorchScript programs (as checkpoints and the networks of older zertz are),
    and a network file is data (``.safetensors``).

    >>> check_network_name("m.safetensors")
    >>> check_network_name("m.pt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: m.pt: a network file is named .safetensors, not .pt ...: write m.safetensors, ...
    """
    path = Path(out)
    if path.suffix == LEGACY_SUFFIX:
        raise ValueError(
            f"{out}: a network file is named .safetensors, not .pt (the name of pickles and "
            f"TorchScript programs): write {path.with_suffix(NETWORK_SUFFIX)}, or "
            f"{path.with_suffix('.pt2')} for an AOTInductor package"
        )


def export_checkpoint(
    checkpoint: str | os.PathLike[str],
    out: str | os.PathLike[str],
    device: str = "cpu",
    precision: str = "fp32",
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Exports the network of a training checkpoint (``RUN/checkpoint.pt``) as a network file
    (:func:`zertz.exported.export`, with ``provenance`` in its metadata), or as an AOTInductor
    package for ``device`` in ``precision`` when ``out`` ends in ``.pt2``
    (:func:`zertz.exported.export_aoti`: a program, which the engine runs only with
    ``--trust-code``). ValueError for a checkpoint that is not one (it is read with
    ``weights_only=True``: objects, whose unpickling could run code, are refused), for NaN or
    infinite weights, for ``provenance`` with a package, and for an ``out`` named ``.pt``
    (:func:`check_network_name`)."""
    check_network_name(out)
    ck = load_checkpoint(checkpoint)
    net = net_of_checkpoint(ck, checkpoint)
    state = ck["state"]
    step = state.get("step") if isinstance(state, dict) else None
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise ValueError(f"{checkpoint} is not a zertz training checkpoint (no training step)")
    if Path(out).suffix == ".pt2":
        if provenance is not None:
            raise ValueError("provenance is written into network files only, not .pt2 packages")
        return export_aoti(
            net, out, step=step, boards=net.boards, device=device, precision=precision
        )
    return export(net, out, step=step, boards=net.boards, provenance=provenance)
