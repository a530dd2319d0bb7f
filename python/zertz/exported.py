"""Exported networks: what the engine loads. :func:`export` writes a network as one TorchScript
file, :func:`export_aoti` as an AOTInductor package (``.pt2``) compiled ahead of time;
:func:`read_metadata` reads either's metadata (the engine's format, version, boards, marble
sets, network size, training step), :func:`load_exported` loads a TorchScript file back into
Python, and :func:`average_networks` averages exported networks of one size.

>>> import tempfile, zertz
>>> from zertz.nn import NetConfig, ZertzNet
>>> from zertz.exported import export, read_metadata
>>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
>>> with tempfile.TemporaryDirectory() as d:
...     read_metadata(export(net, f"{d}/m.pt"))["boards"]
[37]
"""

import copy
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from zertz._zertz import (
    ENCODING_VERSION,
    Game,
    action_space_size,
    observation_shape,
)
from zertz.files import torch_file, write_atomic
from zertz.nn import NetConfig, ZertzNet, check_finite

# The engine's: the file format and version of exported models (inputs, outputs, metadata),
# which the engine checks when it loads one.
from zertz_engine import (
    AOTI_MODEL_PREFIX,
    BUILTIN_MODEL,
    MODEL_FORMAT,
    MODEL_FORMAT_VERSION,
    builtin_model,
)


@contextmanager
def _torchscript() -> Iterator[None]:
    """torch 2.11 marks TorchScript deprecated in favour of torch.export, but TorchScript is what
    libtorch (and so the engine, through tch) loads: silence that one warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.", category=DeprecationWarning)
        yield


def metadata_of(
    model: ZertzNet,
    *,
    step: int,
    name: str,
    boards: list[int],
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The metadata an export writes (see :func:`export`); the marble sets are the model's."""
    meta = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "name": name,
        "encoding_version": ENCODING_VERSION,
        "boards": boards,
        "marbles": model.marbles,
        "action_space": {str(b): action_space_size(b) for b in boards},
        "observation": {str(b): list(observation_shape(b)[0]) for b in boards},
        "globals": observation_shape(boards[0])[1],
        "outputs": ["logits [B, A]", "value [B] for the player to move"],
        "network": json.loads(model.config_json),
        "step": step,
        "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if provenance is not None:
        meta["provenance"] = dict(provenance)
    return meta


def _export_copy(
    model: ZertzNet, path: str | os.PathLike[str], boards: list[int] | None
) -> tuple[ZertzNet, list[int]]:
    """A copy of ``model`` in eval mode for the export to ``path``, and the boards it accepts
    there (default: those it was built for); NonFiniteError for NaN or infinite weights."""
    check_finite(model, f"cannot export {path}")
    boards = sorted(set(boards if boards is not None else model.boards))
    m = copy.deepcopy(model).eval()
    m.boards = boards
    return m, boards


def export(
    model: ZertzNet,
    path: str | os.PathLike[str],
    *,
    step: int = 0,
    name: str = "zertz-resnet",
    boards: list[int] | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Writes ``model`` as one TorchScript file (atomically) that the engine loads
    (``zertz play --model``, ``nn:PATH`` players, ``zertz selfplay --model``). Its ``metadata()``
    method returns JSON: format and version, network name and size, encoding version, the boards
    it accepts (default: those it was built for) with their action-space sizes, the marble sets
    it was trained for (``marbles``: the network's, ``["standard"]`` by default), training step,
    and ``provenance`` when given (where the weights come from: the training config, the commit,
    figures; JSON values, as the engine's built-in network has them).

    >>> import tempfile, torch, zertz
    >>> from zertz.nn import NetConfig, ZertzNet
    >>> from zertz.exported import export, read_metadata
    >>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     meta = read_metadata(export(net, f"{d}/m.pt", step=7))
    >>> meta["boards"], meta["marbles"], meta["step"], meta["action_space"]
    ([37], ['standard'], 7, {'37': 4441})

    A network with NaN or infinite weights is refused (:class:`NonFiniteError`); nothing is
    written.
    """
    m, boards = _export_copy(model, path, boards)
    m = m.cpu()
    meta = metadata_of(m, step=step, name=name, boards=boards, provenance=provenance)
    m.metadata_json = json.dumps(meta)
    with _torchscript():
        scripted = torch.jit.script(m)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written whole in memory, then by Python: a full disk is then one line naming the file
    # (zertz.files.write_atomic), where libtorch's own writer aborted the process.
    data = io.BytesIO()
    with _torchscript():
        torch.jit.save(scripted, data)
    return write_atomic(path, data.getvalue())


#: The number formats :func:`export_aoti` compiles a network in (``auto`` is for the engine).
AOTI_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


class _OneBoard(nn.Module):
    """A network fixed to one board: what AOTInductor compiles (no input-dependent branches)."""

    def __init__(self, net: ZertzNet, rings: int) -> None:
        super().__init__()
        self.net = net
        self.rings = rings

    def forward(self, planes: Tensor, globals_: Tensor) -> tuple[Tensor, Tensor]:
        return self.net.evaluate(planes, globals_, self.rings)


def _compile_board(
    m: ZertzNet, board: int, device: str, dtype: torch.dtype, options: dict[str, Any]
) -> list[str]:
    """One board of :func:`export_aoti` compiled: the files AOTInductor wrote for it (in its
    cache folder), which the package is made of."""
    import torch._inductor

    m = m.to(device=device, dtype=dtype)
    # One dimension object for both inputs: their batch sizes are the same.
    batch = torch.export.Dim("batch", min=1, max=1 << 16)
    planes, globals_ = Game(board=board).encode()
    # Two positions, so that the batch size is not specialised to 1.
    example = (
        torch.from_numpy(planes)[None].repeat(2, 1, 1, 1).to(device=device, dtype=dtype),
        torch.from_numpy(globals_)[None].repeat(2, 1).to(device=device, dtype=dtype),
    )
    with torch.no_grad():
        program = torch.export.export(
            _OneBoard(m, board), example, dynamic_shapes=({0: batch}, {0: batch})
        )
        files = torch._inductor.aot_compile(program.module(), example, options=options)
    # With `aot_inductor.package`, the paths of the files written.
    return [str(f) for f in files]  # type: ignore[union-attr]


def _compile_boards_side_by_side(
    m: ZertzNet, boards: list[int], device: str, precision: str, options: dict[str, Any]
) -> dict[int, list[str]]:
    """The boards of :func:`export_aoti` compiled in child processes, up to one per core (the
    compiler runs on one): each a new interpreter started by the program, so that neither
    forking torch's threads nor re-running the caller's ``__main__`` (multiprocessing's spawn)
    comes into it. Their files, by board."""
    jobs = max(1, min(len(boards), os.cpu_count() or 1))
    compiled: dict[int, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="zertz-aoti-") as folder:
        job = {
            "config": m.config_json,
            "boards": boards,
            "marbles": m.marbles,
            "state": m.state_dict(),
            "device": device,
            "precision": precision,
            "options": options,
        }
        torch.save(job, Path(folder) / "job.pt")
        code = (
            "import sys; from zertz.exported import _compile_board_in_child as c; c(*sys.argv[1:])"
        )
        for start in range(0, len(boards), jobs):
            running = []
            try:
                for b in boards[start : start + jobs]:
                    log = (Path(folder) / f"board{b}.log").open("w")
                    command = [sys.executable, "-c", code, folder, str(b)]
                    running.append((b, subprocess.Popen(command, stdout=log, stderr=log), log))
                for b, child, _ in running:
                    status = child.wait()
                    if status != 0:
                        text = (Path(folder) / f"board{b}.log").read_text(errors="replace")
                        tail = "\n".join(text.splitlines()[-20:])
                        raise RuntimeError(f"compiling board {b} failed (status {status}):\n{tail}")
                    compiled[b] = json.loads((Path(folder) / f"board{b}.json").read_text())
            finally:
                # After a failure or Ctrl-C: no child outlives the call.
                for _, child, log in running:
                    if child.poll() is None:
                        child.kill()
                        child.wait()
                    log.close()
    return compiled


def _compile_board_in_child(folder: str, board: str) -> None:
    """A child of :func:`_compile_boards_side_by_side`: compiles ``board`` of the network in
    ``folder/job.pt`` and writes the list of its files to ``folder/board<N>.json``."""
    job = torch.load(Path(folder) / "job.pt", weights_only=True)
    m = ZertzNet(
        NetConfig(**json.loads(job["config"])), boards=job["boards"], marbles=job["marbles"]
    )
    m.load_state_dict(job["state"])
    m.eval()
    dtype = AOTI_DTYPES[job["precision"]]
    files = _compile_board(m, int(board), job["device"], dtype, job["options"])
    (Path(folder) / f"board{board}.json").write_text(json.dumps(files))


def export_aoti(
    model: ZertzNet,
    path: str | os.PathLike[str],
    *,
    step: int = 0,
    name: str = "zertz-resnet",
    boards: list[int] | None = None,
    device: str = "cpu",
    precision: str = "fp32",
) -> Path:
    """Writes ``model`` as an AOTInductor package (a ``.pt2`` file, atomically) that the engine
    loads wherever it loads a TorchScript file: the network compiled ahead of time into native
    code, one model per board (named ``board37``, ``board48``, ...) for batches of any size,
    for one device type (``cpu`` or ``cuda``: a package runs only there) and one number format
    (``fp32``, ``bf16`` or ``fp16``: the engine runs it in that one). The metadata is
    :func:`export`'s, with ``backend``, ``device`` and ``precision`` added.

    Compiling takes a C++ compiler and about half a minute per board on a CPU core; the boards
    are compiled side by side, one process each, up to one per core
    (``python -m zertz export CHECKPOINT OUT.pt2``); BENCHMARKS.md says where it is faster than
    TorchScript. A network with NaN or infinite weights is refused (:class:`NonFiniteError`).
    """
    from torch._inductor.package.package import package_aoti

    path = Path(path)
    if path.suffix != ".pt2":
        raise ValueError(f"an AOTInductor package is a .pt2 file, not {path.name}")
    if precision not in AOTI_DTYPES:
        raise ValueError(f"precision must be one of {list(AOTI_DTYPES)}, not {precision!r}")
    kind = torch.device(device).type
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"device must be cpu or cuda, not {device!r}")
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError("cannot compile for cuda: torch sees no CUDA device here")
    dtype = AOTI_DTYPES[precision]
    m, boards = _export_copy(model, path, boards)
    meta = metadata_of(m, step=step, name=name, boards=boards)
    meta.update(backend="aoti", device=kind, precision=precision)
    options = {"aot_inductor.package": True, "aot_inductor.metadata": {"zertz": json.dumps(meta)}}
    if len(boards) == 1:
        compiled = {boards[0]: _compile_board(m, boards[0], device, dtype, options)}
    else:
        compiled = _compile_boards_side_by_side(m, boards, device, precision, options)
    files: dict[str, Any] = {f"{AOTI_MODEL_PREFIX}{b}": compiled[b] for b in boards}
    path.parent.mkdir(parents=True, exist_ok=True)
    # Into a buffer (torch wants a file name that ends in .pt2, or a buffer), then written by
    # Python, as export's.
    data = io.BytesIO()
    package_aoti(data, files)
    return write_atomic(path, data.getvalue())


def load_exported(path: str | os.PathLike[str], device: str = "cpu") -> torch.jit.ScriptModule:
    """Loads an exported model (a TorchScript module) for inference in Python. An AOTInductor
    package (``.pt2``) is for the engine: ValueError; so is a file that libtorch cannot load,
    in one line naming it. The file is read as :func:`zertz.files.read_bytes` reads a network
    (OSError naming it: not a regular file, or past ``LIMITS["network"]``)."""
    if Path(path).suffix == ".pt2":
        raise ValueError(
            f"{path} is an AOTInductor package, which the engine runs; in Python, load the "
            "TorchScript export (.pt) of the same network"
        )
    data = torch_file(path, "network")
    try:
        with _torchscript():
            module: torch.jit.ScriptModule = torch.jit.load(  # type: ignore[no-untyped-call]
                data, map_location=device
            )
    except RuntimeError as e:  # libtorch's message, C++ frames and all: its first line
        said = str(e).strip().splitlines()
        raise ValueError(
            f"{path} cannot be loaded ({said[0] if said else 'RuntimeError'})"
        ) from None
    module.eval()
    return module


def average_networks(paths: Sequence[str | os.PathLike[str]]) -> tuple[ZertzNet, dict[str, Any]]:
    """The network whose weights are the mean of those of exported networks of one size, boards
    and marble sets (stochastic weight averaging, as KataGo's released networks: snapshots a few
    training steps apart average into a network stronger than each), BatchNorm statistics
    included; and the last one's metadata. Networks of different sizes, boards or marble sets
    raise ValueError.

    >>> import tempfile, torch
    >>> from zertz.nn import NetConfig, ZertzNet
    >>> from zertz.exported import average_networks, export
    >>> nets = [ZertzNet(NetConfig.preset("tiny"), boards=[37]) for _ in range(2)]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     net, meta = average_networks([export(n, f"{d}/{i}.pt") for i, n in enumerate(nets)])
    >>> mean = (nets[0].stem.weight + nets[1].stem.weight) / 2
    >>> bool(torch.allclose(net.stem.weight, mean)), meta["boards"], net.marbles
    (True, [37], ['standard'])
    """
    if not paths:
        raise ValueError("no networks to average")
    metas = [read_metadata(p) for p in paths]
    meta = metas[-1]
    for p, m in zip(paths, metas, strict=True):
        if (m["network"], m["boards"]) != (meta["network"], meta["boards"]):
            raise ValueError(
                f"{p} is not of the size and boards of {paths[-1]}: only networks of one size "
                "average"
            )
        if m["marbles"] != meta["marbles"]:
            raise ValueError(
                f"{p} is trained for the marble sets {m['marbles']} and {paths[-1]} for "
                f"{meta['marbles']}: only networks of one marble set average"
            )
    net = ZertzNet(NetConfig(**meta["network"]), boards=meta["boards"], marbles=meta["marbles"])
    states = [load_exported(p).state_dict() for p in paths]
    mean: dict[str, Tensor] = {}
    # What the network saves (an exported one holds its non-persistent buffers too).
    for key in (k for k in net.state_dict() if all(k in s for s in states)):
        values = [s[key] for s in states]
        last = values[-1]
        # Integer buffers (BatchNorm's step counts) are the last network's.
        mean[key] = torch.stack(values).mean(0) if last.is_floating_point() else last
    net.load_weights(mean)
    return net.eval(), meta


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The metadata of an exported model file (TorchScript, or an AOTInductor ``.pt2``
    package), or of the built-in network (``"builtin"``, as ``nn:builtin`` names it); ValueError
    when it is not one. ``marbles`` is ``["standard"]`` in a file exported before it was written
    (as the engine reads it: the built-in network is one). The file is read as
    :func:`zertz.files.read_bytes` reads a network (OSError naming it: not a regular file, or
    past ``LIMITS["network"]``)."""
    builtin = str(path) == BUILTIN_MODEL
    data = io.BytesIO(builtin_model()) if builtin else torch_file(path, "network")
    try:
        if not builtin and Path(path).suffix == ".pt2":
            from torch._inductor.package.package import load_package

            first = f"{AOTI_MODEL_PREFIX}{_aoti_boards(data)[0]}"
            data.seek(0)
            meta = json.loads(load_package(data, first).get_metadata()["zertz"])
        else:
            with _torchscript():
                module = torch.jit.load(data, map_location="cpu")  # type: ignore[no-untyped-call]
            meta = json.loads(module.metadata())
    except Exception as e:
        raise ValueError(f"{path} is not an exported zertz model: {e}") from e
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise ValueError(f"{path} is not an exported zertz model (no zertz metadata)")
    meta.setdefault("marbles", ["standard"])
    return meta


def _aoti_boards(data: io.BytesIO) -> list[int]:
    """The boards of the models of an AOTInductor package in memory (from the names of its
    entries)."""
    import zipfile

    marker = f"/data/aotinductor/{AOTI_MODEL_PREFIX}"
    boards = set()
    with zipfile.ZipFile(data) as z:
        for entry in z.namelist():
            if marker in entry:
                rest = entry.split(marker, 1)[1].split("/", 1)[0]
                if rest.isdigit():
                    boards.add(int(rest))
    if not boards:
        raise ValueError("no zertz models in this AOTInductor package")
    return sorted(boards)
