"""Networks exported as TorchScript by an older zertz, read as data (zertz.legacy): the weights
and metadata come out bitwise, nothing of the file runs, and what is not such a file is one
ValueError naming it."""

from __future__ import annotations

import copy
import io
import json
import pickle
import struct
import sys
import types
import warnings
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from zertz import legacy
from zertz.legacy import read_torchscript_weights
from zertz.nn import NetConfig, ZertzNet

pytestmark = pytest.mark.engine

TINY = NetConfig.preset("tiny")


def old_export(module: nn.Module) -> bytes:
    """``module`` as the older zertz.exported.export wrote it: TorchScript, in memory."""
    data = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(module), data)
    return data.getvalue()


def trained(seed: int = 0) -> ZertzNet:
    """A tiny network with random weights and BatchNorm statistics, as after training."""
    torch.manual_seed(seed)
    net = ZertzNet(TINY, boards=[37])
    with torch.no_grad():
        for p in net.parameters():
            p.normal_()
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                assert m.running_mean is not None and m.running_var is not None
                assert m.num_batches_tracked is not None
                m.running_mean.normal_()
                m.running_var.uniform_(0.5, 2.0)
                m.num_batches_tracked.fill_(int(torch.randint(1, 10_000, ())))
    return net


def archive(entries: dict[str, bytes]) -> bytes:
    """A zip of ``entries``, stored as TorchScript's are."""
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w") as z:
        for name, body in entries.items():
            z.writestr(name, body)
    return data.getvalue()


def assert_same(tensors: dict[str, np.ndarray], state: dict[str, Tensor]) -> None:
    """``tensors`` are ``state``, name for name and bit for bit."""
    assert set(tensors) == set(state)
    for k, t in state.items():
        a, b = tensors[k], t.detach().numpy()
        assert a.flags.c_contiguous, k
        assert (a.dtype, a.shape) == (b.dtype, b.shape), k
        assert a.tobytes() == np.ascontiguousarray(b).tobytes(), k


def test_weights_and_metadata_of_an_old_export() -> None:
    net = trained()
    m = copy.deepcopy(net).eval()
    meta = json.dumps({"format": "zertz", "boards": [37], "step": 12})
    m.metadata_json = meta
    got_meta, tensors = read_torchscript_weights(old_export(m), "old.pt")
    assert got_meta == meta
    state = {k: v for k, v in net.state_dict().items() if k != "cells"}
    assert "captures.weight" in tensors and "blocks.2.bn2.num_batches_tracked" in tensors
    assert_same(tensors, state)
    assert {a.dtype for a in tensors.values()} == {np.dtype(np.float32), np.dtype(np.int64)}


def test_half_precision_is_widened_and_views_are_copied() -> None:
    """bfloat16 and float16 come as float32 of the same values; tensors that are views of one
    storage (transposed, a row of another) come as their own C-contiguous arrays."""

    class Views(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.metadata_json = "{}"
            self.f16 = nn.Parameter(torch.randn(3, 5).half())
            self.bf16 = nn.Parameter(torch.randn(4, 2).bfloat16())
            self.ints = nn.Parameter(torch.arange(6, dtype=torch.int32), requires_grad=False)
            base = torch.randn(3, 4)
            self.register_buffer("t", base.t())
            self.register_buffer("row", base[1])
            self.register_buffer("empty", torch.zeros(0, 3))

        def forward(self, x: Tensor) -> Tensor:
            return x

    m = Views()
    _, tensors = read_torchscript_weights(old_export(m), "views.pt")
    want = {k: v.float() if v.is_floating_point() else v.long() for k, v in m.state_dict().items()}
    assert_same(tensors, want)


def test_nothing_of_the_file_runs(tmp_path: Path) -> None:
    """A module whose ``__setstate__`` (which torch.jit.load runs) writes a file: reading the
    weights writes nothing."""
    target = tmp_path / "written"

    class Payload(nn.Module):
        def __init__(self, path: str) -> None:
            super().__init__()
            self.path = path
            self.w = nn.Parameter(torch.ones(2))
            self.mark = torch.zeros(4, dtype=torch.uint8)

        def forward(self, x: Tensor) -> Tensor:
            return x * self.w

        @torch.jit.export
        def __getstate__(self) -> tuple[str, Tensor, bool]:
            return (self.path, self.w, self.training)

        @torch.jit.export
        def __setstate__(self, state: tuple[str, Tensor, bool]) -> None:
            self.path, self.w, self.training = state  # type: ignore[assignment]
            self.mark = torch.from_file(self.path, shared=True, size=4, dtype=torch.uint8)
            self.mark.fill_(65)

    class Root(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.metadata_json = '{"x": 1}'
            self.lin = nn.Linear(2, 2)
            self.payload = Payload(str(target))

        def forward(self, x: Tensor) -> Tensor:
            out: Tensor = self.payload(self.lin(x))
            return out

    m = Root()
    data = old_export(m)
    assert not target.exists()
    meta, tensors = read_torchscript_weights(data, "payload.pt")
    assert not target.exists()
    assert meta == '{"x": 1}'
    # The payload module's attributes are its __getstate__'s tuple: no module's, no weights.
    assert_same(tensors, {"lin.weight": m.lin.weight, "lin.bias": m.lin.bias})
    # What torch.jit.load does with the same bytes: the payload is real.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.load(io.BytesIO(data))  # type: ignore[no-untyped-call]
    assert target.read_bytes() == b"AAAA"


def test_a_pickle_that_calls_a_function_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "ran"
    command = f"touch {target}".encode()
    # os.system(command), as pickle writes it: GLOBAL, its argument, REDUCE.
    payload = b"\x80\x02cos\nsystem\nq\x00X" + struct.pack("<I", len(command)) + command
    payload += b"\x85R."
    data = archive({"archive/data.pkl": payload, "archive/version": b"3\n"})
    with pytest.raises(ValueError, match=r"^evil\.pt .*refers to os\.system, which a zertz"):
        read_torchscript_weights(data, "evil.pt")
    assert not target.exists()

    class Reduce:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            import subprocess

            return subprocess.call, (f"touch {target}",)

    nested = pickle.dumps({"metadata_json": "{}", "x": [Reduce()]}, protocol=4)
    with pytest.raises(ValueError, match=r"refers to subprocess\.call"):
        read_torchscript_weights(archive({"a/data.pkl": nested}), "nested.pt")
    assert not target.exists()


class Mod:
    """A module of a handmade archive: pickled as ``__torch__.Mod`` (NEWOBJ, then BUILD of its
    attributes), as TorchScript pickles its modules."""

    def __init__(self, **attributes: object) -> None:
        self.__dict__.update(attributes)


class FakeTensor:
    """A float tensor of a handmade archive: ``size`` and ``stride`` from the start of storage
    ``0``, which holds ``numel`` numbers."""

    def __init__(self, size: tuple[int, ...], stride: tuple[int, ...], numel: int) -> None:
        self.size, self.stride, self.numel = size, stride, numel


class _Storage:
    """Storage ``0`` of a handmade archive, pickled as TorchScript's persistent id."""

    def __init__(self, numel: int) -> None:
        self.numel = numel


class _Pickler(pickle.Pickler):
    """The pickler of handmade archives: :class:`FakeTensor` as ``_rebuild_tensor_v2``."""

    def persistent_id(self, obj: object) -> object:
        if isinstance(obj, _Storage):
            return ("storage", torch.FloatStorage, "0", "cpu", obj.numel)
        return None

    def reducer_override(self, obj: object) -> Any:
        if isinstance(obj, FakeTensor):
            args: tuple[object, ...] = (
                _Storage(obj.numel),
                0,
                obj.size,
                obj.stride,
                False,
                OrderedDict(),
            )
            return torch._utils._rebuild_tensor_v2, args
        return NotImplemented


@pytest.fixture
def handmade(monkeypatch: pytest.MonkeyPatch) -> Callable[..., bytes]:
    """An archive whose data.pkl is the pickle of a :class:`Mod` (tree), and whose storage 0
    holds ``storage``."""
    fake = types.ModuleType("__torch__")
    monkeypatch.setattr(Mod, "__module__", "__torch__")
    fake.Mod = Mod  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "__torch__", fake)

    def make(root: Mod, storage: bytes = b"") -> bytes:
        out = io.BytesIO()
        _Pickler(out, protocol=2).dump(root)
        return archive({"archive/data.pkl": out.getvalue(), "archive/data/0": storage})

    return make


def test_module_trees(handmade: Callable[..., bytes]) -> None:
    """Module trees too deep or holding themselves, and a root without metadata: refused, in
    one line. A module made by REDUCE (called, then BUILD) is read as one made by NEWOBJ."""
    leaf = Mod(metadata_json="{}")
    root = leaf
    for _ in range(70):
        root = Mod(metadata_json="{}", m=root)
    with pytest.raises(ValueError, match=r"^deep\.pt .*nest deeper than 64$"):
        read_torchscript_weights(handmade(root), "deep.pt")
    cycle = Mod(metadata_json="{}")
    cycle.__dict__["inner"] = Mod(outer=cycle)
    with pytest.raises(
        ValueError, match=r"^cycle\.pt .*one module twice \(the second at inner\.outer\)$"
    ):
        read_torchscript_weights(handmade(cycle), "cycle.pt")
    _, tensors = read_torchscript_weights(handmade(Mod(metadata_json="{}", m=leaf)), "ok.pt")
    assert tensors == {}
    with pytest.raises(ValueError, match=r"^meta\.pt .*no metadata_json$"):
        read_torchscript_weights(handmade(Mod(metadata_json=3)), "meta.pt")
    called = b"\x80\x02c__torch__\nMod\n)R}X\r\x00\x00\x00metadata_jsonX\x02\x00\x00\x00{}sb."
    assert read_torchscript_weights(archive({"a/data.pkl": called}), "r.pt") == ("{}", {})


def test_tensors_bounded_by_their_storage(
    handmade: Callable[..., bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tensor is read with its offset and strides; one reaching past its storage, a storage of
    another size than said, and tensors taking more than twice the storages' bound (here one
    number expanded by stride 0): refused."""
    stored = np.arange(4, dtype="<f4").tobytes()

    def read(size: tuple[int, ...], stride: tuple[int, ...], numel: int = 4) -> np.ndarray:
        root = Mod(metadata_json="{}", w=FakeTensor(size, stride, numel))
        return read_torchscript_weights(handmade(root, stored), "t.pt")[1]["w"]

    got = read((2, 2), (1, 2))
    assert got.tolist() == [[0, 2], [1, 3]] and got.flags.c_contiguous
    with pytest.raises(ValueError, match="past the end of its storage"):
        read((5,), (1,))
    assert read((1000,), (0,)).tolist() == [0.0] * 1000
    monkeypatch.setattr(legacy, "MAX_STORAGE_BYTES", 1000)
    with pytest.raises(ValueError, match="tensors take more than"):
        read((1000,), (0,))
    with pytest.raises(ValueError, match=r"holds 16 bytes, not 5 numbers"):
        read((4,), (1,), numel=5)


def storage_offset(data: bytes, name: str) -> int:
    """Where the bytes of entry ``name`` of a stored (uncompressed) zip start."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    header = data[info.header_offset : info.header_offset + 30]
    name_len, extra_len = struct.unpack("<HH", header[26:30])
    return int(info.header_offset + 30 + name_len + extra_len)


def test_what_is_not_an_archive_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    m = trained().eval()
    m.metadata_json = "{}"
    good = old_export(m)
    flipped = bytearray(good)
    flipped[storage_offset(good, "archive/data/1") + 3] ^= 0x01
    cases = {
        "random": np.random.default_rng(0).bytes(4096),
        "truncated": good[: len(good) // 2],
        "empty": b"",
        "no data.pkl": archive({"archive/version": b"3\n"}),
        "flipped": bytes(flipped),
        "a dict": archive({"archive/data.pkl": pickle.dumps({"metadata_json": "{}"})}),
    }
    for what, data in cases.items():
        with pytest.raises(ValueError) as e:
            read_torchscript_weights(data, f"{what}.pt")
        said = str(e.value)
        assert said.startswith(f"{what}.pt is not a network exported as TorchScript"), said
        assert "\n" not in said
    with pytest.raises(ValueError, match="Bad CRC-32"):
        read_torchscript_weights(bytes(flipped), "flipped.pt")

    # The bounds, made small here.
    monkeypatch.setattr(legacy, "MAX_ENTRIES", 50)
    with pytest.raises(ValueError, match="more than 50 entries"):
        read_torchscript_weights(good, "many.pt")
    monkeypatch.setattr(legacy, "MAX_ENTRIES", 10_000)
    monkeypatch.setattr(legacy, "MAX_PICKLE_BYTES", 1000)
    with pytest.raises(ValueError, match=r"data\.pkl is past"):
        read_torchscript_weights(good, "pickle.pt")
    monkeypatch.setattr(legacy, "MAX_PICKLE_BYTES", 16 << 20)
    monkeypatch.setattr(legacy, "MAX_STORAGE_BYTES", 100_000)
    with pytest.raises(ValueError, match="storages are past"):
        read_torchscript_weights(good, "storage.pt")
