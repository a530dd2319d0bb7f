"""Network files: what the engine loads, and what people share. :func:`export` writes a
network as a network file (``.safetensors``: its weights and metadata, which are data; the
engine runs its own architecture on them and never code from the file), :func:`load_network`
reads one back into a PyTorch :class:`~zertz.nn.ZertzNet` (for fine-tuning and notebooks;
without pickle and without TorchScript), :func:`read_metadata` reads its metadata (the engine's
format and version, architecture and sizes, boards, marble sets, training step, provenance),
:func:`convert_network` turns a TorchScript file of an older zertz into a network file without
running it, and :func:`average_networks` averages networks of one size. :func:`export_aoti`
compiles a network into an AOTInductor package (``.pt2``), a program, which the engine runs
only when told to trust it (``--trust-code``).

>>> import tempfile, zertz
>>> from zertz.nn import NetConfig, ZertzNet
>>> from zertz.exported import export, read_metadata
>>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
>>> with tempfile.TemporaryDirectory() as d:
...     read_metadata(export(net, f"{d}/m.safetensors"))["boards"]
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
from collections.abc import Mapping, Sequence
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
from zertz.files import read_bytes, torch_file, write_atomic
from zertz.nn import AUX_PREFIX, NetConfig, ZertzNet, check_finite

# The engine's: the file format and version of network files (and of the programs it runs when
# trusted), the architecture it runs, and the reading and writing of network files, which
# check them as the engine does before it plays one.
from zertz_engine import (
    AOTI_MODEL_PREFIX,
    ARCHITECTURE,
    BUILTIN_MODEL,
    CODE_FORMAT_VERSION,
    MODEL_FORMAT,
    MODEL_FORMAT_VERSION,
    builtin_model,
    compiled_network_path,
    decode_network,
    encode_network,
    read_network,
)

#: The suffix of network files.
NETWORK_SUFFIX = ".safetensors"


def metadata_of(
    model: ZertzNet,
    *,
    step: int,
    name: str,
    boards: list[int],
    provenance: Mapping[str, Any] | None = None,
    format_version: int = MODEL_FORMAT_VERSION,
) -> dict[str, Any]:
    """The metadata an export writes (see :func:`export`); the marble sets are the model's."""
    meta = {
        "format": MODEL_FORMAT,
        "format_version": format_version,
        "architecture": ARCHITECTURE,
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


def network_tensors(model: ZertzNet) -> list[tuple[str, list[int], bytes]]:
    """The tensors of ``model`` that a network file holds, as :func:`zertz_engine.encode_network`
    takes them (name, shape, little-endian float32 bytes): every weight and batch-norm statistic
    of the engine's architecture, without the training-only head and the batch norms' step
    counts."""
    state = model.state_dict()
    return [
        (
            name,
            list(t.shape),
            t.detach()
            .to(device="cpu", dtype=torch.float32)
            .contiguous()
            .numpy()
            .astype("<f4")
            .tobytes(),
        )
        for name, t in sorted(state.items())
        if not name.startswith(AUX_PREFIX) and not name.endswith("num_batches_tracked")
    ]


def encode(
    model: ZertzNet,
    *,
    step: int = 0,
    name: str = "zertz-resnet",
    boards: list[int] | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> bytes:
    """The bytes of the network file :func:`export` writes (for Ray's object store, or a test).
    NonFiniteError for NaN or infinite weights."""
    m, boards = _export_copy(model, "the network", boards)
    meta = metadata_of(m, step=step, name=name, boards=boards, provenance=provenance)
    return encode_network(json.dumps(meta), network_tensors(m))


def export(
    model: ZertzNet,
    path: str | os.PathLike[str],
    *,
    step: int = 0,
    name: str = "zertz-resnet",
    boards: list[int] | None = None,
    provenance: Mapping[str, Any] | None = None,
) -> Path:
    """Writes ``model`` as a network file (atomically) that the engine loads (``zertz play
    --model``, ``nn:PATH`` players, ``zertz selfplay --model``) and :func:`load_network` reads
    back: a safetensors file of its weights (``.safetensors`` by convention) whose header holds
    the SHA-256 of the weights and the metadata (JSON): format and version, the architecture
    (``ZertzNet``) and its sizes (``network``), encoding version, the boards it accepts
    (default: those it was built for) with their action-space sizes, the marble sets it was
    trained for (``marbles``: the network's, ``["standard"]`` by default), training step, and
    ``provenance`` when given (where the weights come from: the training config, the commit,
    figures; JSON values, as the engine's built-in network has them). The file is data: the
    engine runs its own architecture on the weights.

    >>> import tempfile, torch, zertz
    >>> from zertz.nn import NetConfig, ZertzNet
    >>> from zertz.exported import export, read_metadata
    >>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     meta = read_metadata(export(net, f"{d}/m.safetensors", step=7))
    >>> meta["boards"], meta["marbles"], meta["step"], meta["action_space"]
    ([37], ['standard'], 7, {'37': 4441})

    A network with NaN or infinite weights is refused (:class:`NonFiniteError`); nothing is
    written.
    """
    # The error names the file (encode's does not know it).
    check_finite(model, f"cannot export {path}")
    data = encode(model, step=step, name=name, boards=boards, provenance=provenance)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Written by Python: a full disk is then one line naming the file (zertz.files.write_atomic).
    return write_atomic(path, data)


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
    source_sha256: str | None = None,
) -> Path:
    """Writes ``model`` as an AOTInductor package (a ``.pt2`` file, atomically): the network
    compiled on this machine ahead of time into native
    code, one model per board (named ``board37``, ``board48``, ...) for batches of any size,
    for one device type (``cpu`` or ``cuda``: a package runs only there) and one number format
    (``fp32``, ``bf16`` or ``fp16``: the engine runs it in that one). A package is a program:
    the engine runs it only when told to trust it (``--trust-code``, ``trust_code=True``), for
    packages compiled on the machine that runs them, never for one from somebody else (send
    the network file). The metadata is :func:`export`'s, with ``backend``, ``device`` and
    ``precision`` added.

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
    meta = metadata_of(m, step=step, name=name, boards=boards, format_version=CODE_FORMAT_VERSION)
    meta.update(backend="aoti", device=kind, precision=precision)
    if source_sha256 is not None:
        meta["source_sha256"] = source_sha256
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


def _network_of(meta_json: str, tensors: list[tuple[str, list[int], bytes]]) -> ZertzNet:
    """The PyTorch network of a network file read by the engine (its metadata and tensors)."""
    meta = json.loads(meta_json)
    # A file that names no marble sets (exported before the field) plays the standard ones.
    marbles = meta.get("marbles", ["standard"])
    # Made without drawing from torch's random numbers (its layers' initial weights are
    # replaced at once): reading a network leaves a training run's random state as it was.
    with torch.random.fork_rng(devices=[]):
        net = ZertzNet(NetConfig(**meta["network"]), boards=meta["boards"], marbles=marbles)
    state = net.state_dict()
    for name, shape, data in tensors:
        state[name] = torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(shape)
    # The file holds neither the training-only head (kept fresh) nor the step counts.
    net.load_state_dict(state)
    return net.eval()


def compile_network(
    path: str | os.PathLike[str], *, device: str = "cpu", precision: str = "fp32"
) -> Path:
    """The AOTInductor package of the network file ``path`` (or ``"builtin"``) for ``device``
    (``cpu`` or ``cuda``) in ``precision``, compiled here, on the machine that runs it, and kept
    in the cache under the SHA-256 of its weights
    (:func:`zertz_engine.compiled_network_path`): compiled once, then found. The engine runs it
    for that network file with ``--compiled``: the package is code that this machine made from
    data, never one that came with a network (``python -m zertz compile-network``). ValueError
    without a cache folder (set ``ZERTZ_CACHE``)."""
    meta = read_metadata(path)
    kind = torch.device(device).type
    target = compiled_network_path(meta["sha256"], kind, precision)
    if target is None:
        raise ValueError("no cache folder for compiled networks: set ZERTZ_CACHE (or HOME)")
    target = Path(target)
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        export_aoti(
            load_network(path),
            target,
            step=int(meta.get("step", 0)),
            name=str(meta.get("name", "zertz-resnet")),
            boards=list(meta["boards"]),
            device=device,
            precision=precision,
            source_sha256=meta["sha256"],
        )
    return target


def load_network(path: str | os.PathLike[str], device: str | torch.device = "cpu") -> ZertzNet:
    """The PyTorch :class:`~zertz.nn.ZertzNet` of a network file (or of the built-in network,
    ``"builtin"``) in eval mode on ``device``, for fine-tuning, analysis or a notebook: the file
    is read and checked by the engine as before it plays one (its header against the
    architecture and bounds before any weight, the checksum, finite weights), and no pickle or
    TorchScript is involved. Its training-only head is freshly made. ValueError says what is
    wrong with a file that is not a network file (a TorchScript file of an older zertz:
    :func:`convert_network` converts it); OSError for one that cannot be read.

    >>> import tempfile, torch, zertz
    >>> from zertz.nn import NetConfig, ZertzNet
    >>> from zertz.exported import export, load_network
    >>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     back = load_network(export(net, f"{d}/m.safetensors"))
    >>> bool(torch.equal(back.stem.weight, net.stem.weight)), back.boards
    (True, [37])
    """
    if str(path) == BUILTIN_MODEL:
        meta, _, tensors = decode_network(builtin_model(), BUILTIN_MODEL)
    else:
        meta, _, tensors = read_network(os.fspath(path))
    return _network_of(meta, tensors).to(device)


def convert_network(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> Path:
    """Converts a network that an older zertz exported as TorchScript (``.pt``) into a network
    file (atomically): its weights and metadata are read from the archive as data
    (:func:`zertz.legacy.read_torchscript_weights`: nothing of the file runs) and written as
    :func:`export` writes them, checked by the engine (the tensors must be exactly those of the
    architecture its metadata names). The network plays as before: the engine's architecture
    is the one the file was exported from. ValueError for a file that is not such a network
    (``python -m zertz convert-network SRC DST``)."""
    from zertz.legacy import read_torchscript_weights

    meta_json, tensors = read_torchscript_weights(read_bytes(src, "network"), str(src))
    try:
        meta = json.loads(meta_json)
    except ValueError:
        raise ValueError(f"{src}: its metadata is not JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise ValueError(f"{src} is not a network exported by zertz (no zertz metadata)")
    meta.update(format_version=MODEL_FORMAT_VERSION, architecture=ARCHITECTURE)
    meta.setdefault("marbles", ["standard"])
    meta.pop("backend", None)
    kept = [
        (name, list(t.shape), t.astype("<f4").tobytes())
        for name, t in sorted(tensors.items())
        if not name.startswith(AUX_PREFIX) and not name.endswith("num_batches_tracked")
    ]
    data = encode_network(json.dumps(meta), kept)
    return write_atomic(Path(dst), data)


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
    ...     paths = [export(n, f"{d}/{i}.safetensors") for i, n in enumerate(nets)]
    ...     net, meta = average_networks(paths)
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
    states = [load_network(p).state_dict() for p in paths]
    mean: dict[str, Tensor] = {}
    for key, last in states[-1].items():
        values = [s[key] for s in states]
        # Integer buffers (BatchNorm's step counts, which files do not hold) are the last's.
        mean[key] = torch.stack(values).mean(0) if last.is_floating_point() else last
    net.load_weights(mean)
    return net.eval(), meta


def read_metadata(path: str | os.PathLike[str], *, trust_code: bool = False) -> dict[str, Any]:
    """The metadata of a network file, or of the built-in network (``"builtin"``, as
    ``nn:builtin`` names it), as the engine reads it (checked: ValueError says what is wrong
    with a file that is not one), with ``sha256``, the checksum of its weights. An AOTInductor
    package (``.pt2``) is a program, which this loads to ask it: only with ``trust_code``, for a
    package you compiled yourself. A TorchScript file of an older zertz is refused with the
    command that converts it."""
    if str(path) == BUILTIN_MODEL:
        meta_json, sha256, _ = decode_network(builtin_model(), BUILTIN_MODEL)
    elif trust_code and Path(path).suffix == ".pt2":
        data = torch_file(path, "network")
        try:
            from torch._inductor.package.package import load_package

            first = f"{AOTI_MODEL_PREFIX}{_aoti_boards(data)[0]}"
            data.seek(0)
            meta = json.loads(load_package(data, first).get_metadata()["zertz"])
        except Exception as e:
            raise ValueError(f"{path} is not an AOTInductor package of zertz: {e}") from e
        if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
            raise ValueError(f"{path} is not an exported zertz model (no zertz metadata)")
        meta.setdefault("marbles", ["standard"])
        return meta
    else:
        meta_json, sha256, _ = read_network(os.fspath(path))
    meta = json.loads(meta_json)
    meta.setdefault("marbles", ["standard"])
    meta["sha256"] = sha256
    return dict(meta)


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
