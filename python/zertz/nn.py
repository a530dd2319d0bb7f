"""The reference policy/value network and its export to the engine (TorchScript).

One set of weights works on every board shape: the trunk is fully convolutional over the axial
grid of the encoding (cells off the board are masked to zero after every layer, and pooling counts
only the board's cells), and the policy head scores each action from the features of the rings it
names, gathered with :func:`zertz.ring_cells`:

- a placement of colour ``c`` on ring ``at`` removing ``rm`` scores
  ``colour[c, at] + remove[rm] + q[at] · k[rm]`` (a low-rank interaction between the two rings;
  "no removal" has a learned bias instead of ``remove`` and no interaction);
- a hop from ``ring`` in direction ``d`` scores ``hop[ring, d]``;
- a pass scores from the pooled features.

The board is read from the input itself (plane 0 counts the board's cells, which differ for every
shape), so ``forward(planes, globals)`` takes any batch of one board. Trained weights are only
meaningful on the boards they were trained on: :func:`export` records those in the metadata, and
the engine refuses a model for another board.

>>> import torch, zertz
>>> from zertz.nn import NetConfig, ZertzNet
>>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37]).eval()
>>> planes, globals_ = zertz.Game().encode()
>>> logits, value = net(torch.from_numpy(planes)[None], torch.from_numpy(globals_)[None])
>>> logits.shape, value.shape
(torch.Size([1, 4441]), torch.Size([1]))
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from zertz._zertz import (
    BOARDS,
    ENCODING_VERSION,
    Game,
    action_space_size,
    observation_shape,
    ring_cells,
)

# The engine's: the file format and version of exported models (inputs, outputs, metadata),
# which the engine checks when it loads one.
from zertz_engine import AOTI_MODEL_PREFIX, MODEL_FORMAT, MODEL_FORMAT_VERSION


class NonFiniteError(ValueError):
    """A network (or a loss) holds NaN or infinite values: such weights are never exported or
    checkpointed (training diverged, usually from too high a learning rate)."""


def non_finite(module: nn.Module) -> list[str]:
    """The names of the parameters and buffers of ``module`` that hold NaN or infinite values."""
    tensors = [*module.named_parameters(), *module.named_buffers()]
    return [
        name
        for name, t in tensors
        if t.is_floating_point() and not bool(torch.isfinite(t.detach()).all())
    ]


def check_finite(module: nn.Module, what: str) -> None:
    """NonFiniteError (naming ``what`` and the first tensors) when ``module`` holds NaN or
    infinite parameters or buffers."""
    if bad := non_finite(module):
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise NonFiniteError(
            f"{what}: the network holds NaN or infinite values ({', '.join(bad[:3])}{more}); "
            "training diverged (lower train.learning_rate)"
        )


@dataclass(frozen=True)
class NetConfig:
    """Size of the network. Presets: ``tiny`` (trains on two CPU cores), ``small``, ``medium``,
    ``large`` (for a GPU)."""

    #: Channels of the residual trunk.
    channels: int = 32
    #: Residual blocks (each with a global-pooling bias, as in KataGo).
    blocks: int = 3
    #: Rank of the placement/removal interaction of the policy head.
    policy_rank: int = 8
    #: Channels of the value head before pooling.
    value_channels: int = 16
    #: Hidden units of the value head.
    value_hidden: int = 64

    PRESETS = ("tiny", "small", "medium", "large")

    @staticmethod
    def preset(name: str) -> "NetConfig":
        """A named size: ``tiny`` (32 channels, 3 blocks), ``small`` (64, 6), ``medium``
        (128, 10) or ``large`` (192, 15)."""
        sizes = {"tiny": (32, 3), "small": (64, 6), "medium": (128, 10), "large": (192, 15)}
        if name not in sizes:
            raise ValueError(f"unknown network preset {name!r}: choose one of {list(sizes)}")
        channels, blocks = sizes[name]
        return NetConfig(channels=channels, blocks=blocks, value_channels=max(16, channels // 4))

    @staticmethod
    def from_dict(d: dict[str, Any]) -> "NetConfig":
        """From a mapping such as a config's ``[network]`` table: ``preset`` and/or any field.
        Unknown keys raise ValueError."""
        d = dict(d)
        base = NetConfig.preset(str(d.pop("preset"))) if "preset" in d else NetConfig()
        known = {f.name for f in fields(NetConfig)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown network keys {unknown}: expected preset or {sorted(known)}")
        values = {**asdict(base), **d}
        for k, v in values.items():
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"network.{k} must be a positive integer, not {v!r}")
        return NetConfig(**values)


#: The auxiliary head's weights (``captures.weight``, ``captures.bias``): training only, absent
#: from checkpoints written before it.
AUX_PREFIX = "captures."
#: The auxiliary head predicts each side's final captures divided by this.
CAPTURES_SCALE = 5.0


def _pool(x: Tensor, mask: Tensor, count: Tensor) -> Tensor:
    """Mean and max over the board's cells: ``[B, C, H, W]`` → ``[B, 2C]``."""
    mean = (x * mask).sum(dim=(2, 3)) / count
    high = (x - (1.0 - mask) * 1e4).amax(dim=(2, 3))
    return torch.cat([mean, high], dim=1)


class _Block(nn.Module):
    """A residual block whose first convolution gets a per-channel bias from global pooling."""

    def __init__(self, c: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.pool = nn.Linear(2 * c, c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)

    def forward(self, x: Tensor, mask: Tensor, count: Tensor) -> Tensor:
        y = F.relu(self.bn1(self.conv1(x))) * mask
        y = y + self.pool(_pool(y, mask, count))[:, :, None, None]
        y = self.bn2(self.conv2(y))
        return F.relu(x + y) * mask


class ZertzNet(nn.Module):
    """Residual policy/value network: ``forward(planes [B, 8, H, W], globals [B, 20])`` →
    ``(logits [B, A], value [B])``; logits over the board's whole action space (the engine and
    the losses mask illegal actions), value in ``-1..1`` for the player to move."""

    boards: list[int]
    cells: Tensor
    config_json: str
    metadata_json: str

    def __init__(self, config: NetConfig, boards: list[int]) -> None:
        super().__init__()
        bad = [b for b in boards if b not in BOARDS]
        if not boards or bad:
            raise ValueError(f"boards must be a non-empty list of {BOARDS}, not {boards}")
        (planes, _, _), globals_ = observation_shape(boards[0])
        c = config.channels
        self.config_json = json.dumps(asdict(config), sort_keys=True)
        self.boards = sorted(set(boards))
        # cells[R, :R] is the grid cell of every ring of the R-ring board.
        cells = torch.zeros(max(BOARDS) + 1, max(BOARDS), dtype=torch.long)
        for b in BOARDS:
            cells[b, :b] = torch.from_numpy(ring_cells(b))
        self.register_buffer("cells", cells, persistent=False)
        self.metadata_json = "{}"

        self.stem = nn.Conv2d(planes, c, 3, padding=1, bias=False)
        self.stem_globals = nn.Linear(globals_, c)
        self.stem_bn = nn.BatchNorm2d(c)
        self.blocks = nn.ModuleList([_Block(c) for _ in range(config.blocks)])

        self.ring = nn.Linear(c, c)
        self.colour = nn.Linear(c, 3)
        self.remove = nn.Linear(c, 1)
        self.no_removal = nn.Parameter(torch.zeros(1))
        self.query = nn.Linear(c, config.policy_rank)
        self.key = nn.Linear(c, config.policy_rank)
        self.hop = nn.Linear(c, 6)
        self.pass_ = nn.Linear(2 * c, 1)
        self.rank_scale = 1.0 / float(config.policy_rank) ** 0.5

        self.value_conv = nn.Conv2d(c, config.value_channels, 1, bias=False)
        self.value_bn = nn.BatchNorm2d(config.value_channels)
        self.value_fc1 = nn.Linear(2 * config.value_channels + globals_, config.value_hidden)
        self.value_fc2 = nn.Linear(config.value_hidden, 1)
        # Auxiliary (training only): each side's captures by colour at the game's end.
        self.captures = nn.Linear(config.value_hidden, 6)

    def forward(self, planes: Tensor, globals_: Tensor) -> tuple[Tensor, Tensor]:
        return self.evaluate(planes, globals_, self._rings(planes, globals_))

    def forward_train(self, planes: Tensor, globals_: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """:meth:`forward` and the auxiliary head that training alone uses: the marbles each
        side will hold at the game's end ``[B, 6]`` (white, grey, black; the mover's first), in
        units of :data:`CAPTURES_SCALE`. Not part of an exported network."""
        logits, value, hidden = self._heads(planes, globals_, self._rings(planes, globals_))
        return logits, value, self.captures(hidden)

    def _rings(self, planes: Tensor, globals_: Tensor) -> int:
        """The board of a batch, checked: one board the network accepts."""
        if planes.dim() != 4 or globals_.dim() != 2 or planes.size(0) != globals_.size(0):
            raise ValueError("expected planes [B, C, H, W] and globals [B, G] with the same B")
        if planes.size(0) == 0:
            raise ValueError("empty batch")
        mask = planes[:, 0:1]
        rings = int(mask[0].sum().round())
        if rings not in self.boards:
            raise ValueError(
                "this network accepts boards " + str(self.boards) + ", not " + str(rings) + " rings"
            )
        count = mask.sum(dim=(2, 3)).clamp(min=1.0)
        # 40 and 44 rings (43 and 48) share a grid, so a batch could mix them.
        if bool((count != count[0]).any()):
            raise ValueError("a batch must hold positions of one board")
        return rings

    def evaluate(self, planes: Tensor, globals_: Tensor, rings: int) -> tuple[Tensor, Tensor]:
        """:meth:`forward` for a batch of the ``rings``-ring board, without the checks that read
        the input (what :func:`export_aoti` compiles, one board at a time)."""
        logits, value, _ = self._heads(planes, globals_, rings)
        return logits, value

    def _heads(self, planes: Tensor, globals_: Tensor, rings: int) -> tuple[Tensor, Tensor, Tensor]:
        """Logits, value and the value head's hidden layer (which the auxiliary head reads)."""
        x, mask, count = self._trunk(planes, globals_)
        hidden = self._value_hidden(x, mask, count, globals_)
        value = torch.tanh(self.value_fc2(hidden)).squeeze(1)
        return self._policy(x, mask, count, rings), value, hidden

    def _trunk(self, planes: Tensor, globals_: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The residual trunk's features ``[B, C, H, W]``, the board's mask and its cell count."""
        mask = planes[:, 0:1]
        count = mask.sum(dim=(2, 3)).clamp(min=1.0)
        x = self.stem(planes) + self.stem_globals(globals_)[:, :, None, None]
        x = F.relu(self.stem_bn(x)) * mask
        for block in self.blocks:
            x = block(x, mask, count)
        return x, mask, count

    def _policy(self, x: Tensor, mask: Tensor, count: Tensor, rings: int) -> Tensor:
        """The logits over the board's whole action space."""
        b = x.size(0)
        # Policy: per-ring features gathered from the grid.
        # An integer again after an engine converts every buffer to bf16 or fp16 (exact below 256).
        idx = self.cells[rings, :rings].long()
        f = x.flatten(2).index_select(2, idx).transpose(1, 2)  # [B, R, C]
        f = F.relu(self.ring(f))
        colour = self.colour(f).transpose(1, 2)  # [B, 3, R]
        remove = torch.cat(
            [self.remove(f).squeeze(2), self.no_removal.expand(b, 1)], dim=1
        )  # [B, R + 1]
        inter = torch.bmm(self.query(f), self.key(f).transpose(1, 2)) * self.rank_scale
        inter = F.pad(inter, (0, 1))  # [B, R, R + 1]: no interaction with "no removal"
        place = colour[:, :, :, None] + remove[:, None, None, :] + inter[:, None, :, :]
        hops = self.hop(f)  # [B, R, 6]
        pooled = _pool(x, mask, count)
        return torch.cat([place.flatten(1), hops.flatten(1), self.pass_(pooled)], dim=1)

    def _value_hidden(self, x: Tensor, mask: Tensor, count: Tensor, globals_: Tensor) -> Tensor:
        """The value head's hidden layer, which the value and the auxiliary head read."""
        v = F.relu(self.value_bn(self.value_conv(x))) * mask
        v = torch.cat([_pool(v, mask, count), globals_], dim=1)
        return F.relu(self.value_fc1(v))

    def load_weights(self, state: Mapping[str, Any]) -> bool:
        """Loads a state dict of this network's sizes. One saved before the auxiliary head
        existed (a checkpoint of an older zertz) lacks ``captures.*`` and leaves this network's
        fresh head; anything else missing or unexpected raises RuntimeError. Returns whether the
        head was missing."""
        own = self.state_dict()
        missing = sorted(set(own) - set(state))
        unexpected = sorted(set(state) - set(own))
        older = bool(missing) and all(k.startswith(AUX_PREFIX) for k in missing)
        if unexpected or (missing and not older):
            raise RuntimeError(
                f"weights that do not fit the network (missing {missing[:3]}, unexpected "
                f"{unexpected[:3]})"
            )
        self.load_state_dict(state, strict=not older)
        return older

    @torch.jit.export
    def metadata(self) -> str:
        """The metadata JSON of an exported model (``{}`` before export)."""
        return self.metadata_json

    def net_config(self) -> NetConfig:
        """The size this network was built with."""
        return NetConfig(**json.loads(self.config_json))


@contextmanager
def atomic_path(path: Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A temporary path beside ``path`` (ending in ``suffix``) to write; it replaces ``path``
    when the block ends without an error, and is removed otherwise, so a reader never sees a
    partial file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextmanager
def _torchscript() -> Iterator[None]:
    """torch 2.11 marks TorchScript deprecated in favour of torch.export, but TorchScript is what
    libtorch (and so the engine, through tch) loads: silence that one warning."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.", category=DeprecationWarning)
        yield


def masked_log_softmax(logits: Tensor, legal: Tensor) -> Tensor:
    """Log-probabilities over the legal actions (``-inf`` elsewhere)."""
    return torch.log_softmax(logits.masked_fill(~legal, float("-inf")), dim=1)


def metadata_of(
    model: ZertzNet,
    *,
    step: int,
    name: str,
    boards: list[int],
    provenance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The metadata an export writes (see :func:`export`)."""
    meta = {
        "format": MODEL_FORMAT,
        "format_version": MODEL_FORMAT_VERSION,
        "name": name,
        "encoding_version": ENCODING_VERSION,
        "boards": boards,
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
    it accepts (default: those it was built for) with their action-space sizes, training step,
    and ``provenance`` when given (where the weights come from: the training config, the commit,
    figures; JSON values, as the engine's built-in network has them).

    >>> import tempfile, torch, zertz
    >>> from zertz.nn import NetConfig, ZertzNet, export, read_metadata
    >>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     meta = read_metadata(export(net, f"{d}/m.pt", step=7))
    >>> meta["boards"], meta["step"], meta["action_space"]
    ([37], 7, {'37': 4441})

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
    with atomic_path(path) as tmp, _torchscript():
        torch.jit.save(scripted, str(tmp))
    return path


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
            "state": m.state_dict(),
            "device": device,
            "precision": precision,
            "options": options,
        }
        torch.save(job, Path(folder) / "job.pt")
        code = "import sys; from zertz.nn import _compile_board_in_child as c; c(*sys.argv[1:])"
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
    m = ZertzNet(NetConfig(**json.loads(job["config"])), boards=job["boards"])
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
    with atomic_path(path, suffix=".pt2") as tmp:
        package_aoti(str(tmp), files)
    return path


def load_exported(path: str | os.PathLike[str], device: str = "cpu") -> torch.jit.ScriptModule:
    """Loads an exported model (a TorchScript module) for inference in Python. An AOTInductor
    package (``.pt2``) is for the engine: ValueError."""
    if Path(path).suffix == ".pt2":
        raise ValueError(
            f"{path} is an AOTInductor package, which the engine runs; in Python, load the "
            "TorchScript export (.pt) of the same network"
        )
    with _torchscript():
        module: torch.jit.ScriptModule = torch.jit.load(  # type: ignore[no-untyped-call]
            str(path), map_location=device
        )
    module.eval()
    return module


def average_networks(paths: Sequence[str | os.PathLike[str]]) -> tuple[ZertzNet, dict[str, Any]]:
    """The network whose weights are the mean of those of exported networks of one size and
    boards (stochastic weight averaging, as KataGo's released networks: snapshots a few training
    steps apart average into a network stronger than each), BatchNorm statistics included; and
    the last one's metadata. Networks of different sizes or boards raise ValueError.

    >>> import tempfile, torch
    >>> from zertz.nn import NetConfig, ZertzNet, average_networks, export
    >>> nets = [ZertzNet(NetConfig.preset("tiny"), boards=[37]) for _ in range(2)]
    >>> with tempfile.TemporaryDirectory() as d:
    ...     net, meta = average_networks([export(n, f"{d}/{i}.pt") for i, n in enumerate(nets)])
    >>> mean = (nets[0].stem.weight + nets[1].stem.weight) / 2
    >>> bool(torch.allclose(net.stem.weight, mean)), meta["boards"]
    (True, [37])
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
    net = ZertzNet(NetConfig(**meta["network"]), boards=meta["boards"])
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
    package); ValueError when it is not one."""
    try:
        if Path(path).suffix == ".pt2":
            from torch._inductor.package.package import load_package

            first = f"{AOTI_MODEL_PREFIX}{_aoti_boards(path)[0]}"
            meta = json.loads(load_package(str(path), first).get_metadata()["zertz"])
        else:
            with _torchscript():
                module = torch.jit.load(str(path), map_location="cpu")  # type: ignore[no-untyped-call]
            meta = json.loads(module.metadata())
    except Exception as e:
        raise ValueError(f"{path} is not an exported zertz model: {e}") from e
    if not isinstance(meta, dict) or meta.get("format") != MODEL_FORMAT:
        raise ValueError(f"{path} is not an exported zertz model (no zertz metadata)")
    return meta


def _aoti_boards(path: str | os.PathLike[str]) -> list[int]:
    """The boards of the models of an AOTInductor package (from the names of its entries)."""
    import zipfile

    marker = f"/data/aotinductor/{AOTI_MODEL_PREFIX}"
    boards = set()
    with zipfile.ZipFile(path) as z:
        for entry in z.namelist():
            if marker in entry:
                rest = entry.split(marker, 1)[1].split("/", 1)[0]
                if rest.isdigit():
                    boards.add(int(rest))
    if not boards:
        raise ValueError("no zertz models in this AOTInductor package")
    return sorted(boards)
