"""Networks that an older zertz exported as TorchScript, read as data: the weights and metadata
of such a file without running any of it. A TorchScript file is a program (its ``code/`` is run
by ``torch.jit.load``, its pickle may call methods of the file's classes while it loads), so a
file from a stranger is read here from the archive's ``data.pkl`` with an unpickler that knows
only the few names a network's pickle refers to, and from the raw bytes of its storages.

>>> import io, warnings, torch
>>> from zertz.nn import NetConfig, ZertzNet
>>> from zertz.legacy import read_torchscript_weights
>>> net = ZertzNet(NetConfig.preset("tiny"), boards=[37]).eval()
>>> net.metadata_json = '{"x": 1}'
>>> data = io.BytesIO()
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", DeprecationWarning)
...     torch.jit.save(torch.jit.script(net), data)
>>> meta, tensors = read_torchscript_weights(data.getvalue(), "m.pt")
>>> meta, tensors["blocks.0.conv1.weight"].shape, tensors["stem_bn.num_batches_tracked"].dtype
('{"x": 1}', (32, 32, 3, 3), dtype('int64'))
"""

import io
import math
import pickle
import re
import zipfile
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import numpy as np

#: The most entries an archive may have, the largest ``data.pkl`` and the most bytes of
#: storages (all of ``<archive>/data/``) read: far past a zertz network's (about 100 entries,
#: kilobytes of pickle, tens of megabytes of weights).
MAX_ENTRIES = 10_000
MAX_PICKLE_BYTES = 16 << 20
MAX_STORAGE_BYTES = 1 << 30
#: The deepest module tree walked (a zertz network's is 4 deep).
MAX_DEPTH = 64


class _DType(NamedTuple):
    """A storage's number format (``torch.FloatStorage``, ``torch.float32``): numpy's dtype of
    its bytes (``bfloat16``: as ``uint16``, widened on reading) and whether it is bfloat16.
    Immutable: shared by every file read, it is nothing a pickle's BUILD opcodes can change."""

    numpy: str
    bfloat16: bool = False


_FLOAT = _DType("f4")
_DOUBLE = _DType("f8")
_HALF = _DType("f2")
_BFLOAT16 = _DType("u2", bfloat16=True)
_LONG = _DType("i8")
_INT = _DType("i4")

#: The number formats a network's tensors may be stored in, by the names that the pickle of a
#: TorchScript archive (``torch.FloatStorage``) or of a newer one (``torch.float32``) gives.
_DTYPES = {
    "FloatStorage": _FLOAT,
    "DoubleStorage": _DOUBLE,
    "HalfStorage": _HALF,
    "BFloat16Storage": _BFLOAT16,
    "LongStorage": _LONG,
    "IntStorage": _INT,
    "float32": _FLOAT,
    "float64": _DOUBLE,
    "float16": _HALF,
    "bfloat16": _BFLOAT16,
    "int64": _LONG,
    "int32": _INT,
}


class _Storage(NamedTuple):
    """A storage of the archive: its numbers, in the format stored."""

    values: np.ndarray[Any, Any]


class _Tensor(NamedTuple):
    """A tensor built from a storage: float32 or int64, C-contiguous."""

    array: np.ndarray[Any, Any]


class _Refused(ValueError):
    """What makes the archive not a network's, in words (the caller adds the file's name)."""


class _Object:
    """An object of a class of the archive's (``__torch__.…``): only its state is kept (the
    attributes of a module), whatever the pickle calls it with; nothing of the class is run."""

    state: object = None

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __setstate__(self, state: object) -> None:
        self.state = state


def _integers(values: object, what: str) -> tuple[int, ...]:
    """``values`` as a tuple of at most 64 non-negative integers below 2**63, or _Refused."""
    if not isinstance(values, tuple | list) or len(values) > 64:
        raise _Refused(f"a tensor's {what} is not a short tuple")
    if not all(type(v) is int and 0 <= v < 1 << 63 for v in values):
        raise _Refused(f"a tensor's {what} is not of non-negative integers")
    return tuple(values)


class _Unpickler(pickle.Unpickler):
    """The unpickler of a TorchScript archive's ``data.pkl``: classes of the archive become
    :class:`_Object`, tensors numpy arrays read from the storages; any other name is refused."""

    def __init__(self, data: bytes, archive: zipfile.ZipFile, top: str, big_endian: bool) -> None:
        super().__init__(io.BytesIO(data))
        self._archive = archive
        self._top = top
        self._order: Literal["<", ">"] = ">" if big_endian else "<"
        self._classes: dict[str, type[_Object]] = {}
        self._storages: dict[str, tuple[_DType, int, _Storage]] = {}
        # Bytes of the tensors built: at most twice those of the storages (float16 widened to
        # float32 doubles them), so that a small archive, whose pickle builds many tensors of one
        # storage or expands one number (stride 0), does not take all memory.
        self._built = 0

    def find_class(self, module: str, name: str) -> Any:
        """What a name of the pickle stands for: a class of the archive's, or one of the few
        functions and types a network's pickle calls, each harmless: the functions this
        unpickler's, the types built-in ones that its BUILD opcodes cannot change. Any other
        name is refused."""
        if module == "__torch__" or module.startswith("__torch__."):
            qualified = f"{module}.{name}"
            if qualified not in self._classes:
                # A class per name, made here: one file's pickle cannot change another's.
                self._classes[qualified] = type(name, (_Object,), {"qualified": qualified})
            return self._classes[qualified]
        functions: dict[tuple[str, str], Callable[..., object]] = {
            ("torch._utils", "_rebuild_tensor_v2"): self._rebuild_tensor,
            ("torch._utils", "_rebuild_parameter"): self._rebuild_parameter,
            ("torch._utils", "_rebuild_parameter_with_state"): self._rebuild_parameter,
            ("torch.jit._pickle", "build_intlist"): self._identity,
            ("torch.jit._pickle", "build_doublelist"): self._identity,
            ("torch.jit._pickle", "build_boollist"): self._identity,
            ("torch.jit._pickle", "build_tensorlist"): self._identity,
            ("torch.jit._pickle", "restore_type_tag"): self._identity,
        }
        types: dict[tuple[str, str], type] = {
            ("collections", "OrderedDict"): dict,
            ("builtins", "set"): set,
            ("builtins", "frozenset"): frozenset,
            ("builtins", "tuple"): tuple,
            ("builtins", "list"): list,
        }
        if (module, name) in functions:
            function = functions[module, name]
            # A new function each time: what BUILD writes into one is lost with it.
            return lambda *args: function(*args)
        if (module, name) in types:
            return types[module, name]
        if module == "torch" and name in _DTYPES:
            return _DTYPES[name]
        raise _Refused(f"it refers to {module}.{name}, which a zertz network does not hold")

    def persistent_load(self, pid: Any) -> Any:
        """A storage, ``('storage', dtype, key, location, numel)``: the bytes of
        ``<archive>/data/<key>``, as many as ``numel`` numbers of ``dtype`` take."""
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise _Refused("it refers to an object outside its pickle that is not a storage")
        _, dtype, key, _, numel = pid
        if not isinstance(dtype, _DType):
            raise _Refused("a storage is of a number format that a zertz network does not hold")
        if not (isinstance(key, str) and re.fullmatch(r"[0-9]{1,9}", key)):
            raise _Refused("a storage's key is not a number")
        if type(numel) is not int or numel < 0:
            raise _Refused(f"storage {key} has no size")
        if key in self._storages:
            seen_dtype, seen_numel, storage = self._storages[key]
            if (seen_dtype, seen_numel) != (dtype, numel):
                raise _Refused(f"storage {key} is given two formats or sizes")
            return storage
        path = f"{self._top}/data/{key}"
        try:
            info = self._archive.getinfo(path)
        except KeyError:
            raise _Refused(f"it has no {path}") from None
        itemsize = np.dtype(dtype.numpy).itemsize
        if info.file_size != numel * itemsize:
            raise _Refused(f"{path} holds {info.file_size} bytes, not {numel} numbers")
        raw = self._archive.read(info)
        values = np.frombuffer(raw, dtype=np.dtype(dtype.numpy).newbyteorder(self._order))
        if dtype.bfloat16:  # bfloat16 is float32's upper half
            wide = (values.astype(np.uint32) << 16).view(np.float32)
        elif values.dtype.kind == "f":
            wide = values.astype(np.float32)
        else:
            wide = values.astype(np.int64)
        storage = _Storage(wide)
        self._storages[key] = (dtype, numel, storage)
        return storage

    def _rebuild_tensor(
        self, storage: object, offset: object, size: object, stride: object, *_: object
    ) -> _Tensor:
        """``torch._utils._rebuild_tensor_v2``: the tensor of ``size`` and ``stride`` from
        ``offset`` of ``storage`` (in numbers), copied out of it (C-contiguous)."""
        if not isinstance(storage, _Storage):
            raise _Refused("a tensor is not built from a storage")
        shape = _integers(size, "size")
        strides = _integers(stride, "stride")
        if len(shape) != len(strides) or type(offset) is not int or offset < 0:
            raise _Refused("a tensor's size, stride and offset do not agree")
        count = math.prod(shape)
        values = storage.values
        last = offset + sum((n - 1) * s for n, s in zip(shape, strides, strict=True))
        if count and last >= len(values):
            raise _Refused("a tensor reaches past the end of its storage")
        self._built += count * values.itemsize
        if self._built > 2 * MAX_STORAGE_BYTES:
            raise _Refused(f"its tensors take more than {2 * MAX_STORAGE_BYTES >> 20} MiB")
        if not count:
            return _Tensor(np.zeros(shape, dtype=values.dtype))
        view = np.lib.stride_tricks.as_strided(
            values[offset:],
            shape=shape,
            strides=tuple(s * values.itemsize for s in strides),
            writeable=False,
        )
        return _Tensor(np.array(view, order="C"))

    def _rebuild_parameter(self, data: object, *_: object) -> object:
        """``torch._utils._rebuild_parameter``: a parameter is its tensor."""
        return data

    def _identity(self, value: object, *_: object) -> object:
        """``torch.jit._pickle``'s list builders and type tags: the value itself."""
        return value


def _named_tensors(
    module: _Object, prefix: str, depth: int, seen: set[int], out: dict[str, np.ndarray[Any, Any]]
) -> None:
    """The tensors of ``module`` and of its submodules into ``out``, by state-dict name
    (``blocks.0.bn1.running_mean``: a ModuleList's attributes are its indices). Other attributes
    (strings, numbers, objects without a module's attributes) hold no weights."""
    if depth > MAX_DEPTH:
        raise _Refused(f"its modules nest deeper than {MAX_DEPTH}")
    if id(module) in seen:
        raise _Refused(f"it holds one module twice (the second at {prefix.rstrip('.')})")
    seen.add(id(module))
    if not isinstance(module.state, dict):
        return
    for attribute, value in module.state.items():
        if not isinstance(attribute, str):
            raise _Refused("an attribute's name is not a string")
        name = prefix + attribute
        if isinstance(value, _Tensor):
            if name in out:
                raise _Refused(f"it holds two tensors named {name}")
            out[name] = value.array
        elif isinstance(value, _Object):
            _named_tensors(value, name + ".", depth + 1, seen, out)


def _top_folder(archive: zipfile.ZipFile) -> str:
    """The folder that an archive's entries are under (``<archive>/data.pkl``); _Refused when
    it is too big, holds one name twice, or has not exactly one pickle of a module."""
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise _Refused(f"it has more than {MAX_ENTRIES} entries")
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        raise _Refused("it holds an entry twice")
    pickles = [n for n in names if n.count("/") == 1 and n.endswith("/data.pkl")]
    if len(pickles) != 1:
        raise _Refused("it has no data.pkl" if not pickles else "it has more than one data.pkl")
    top = pickles[0].split("/")[0]
    stored = sum(i.file_size for i in infos if i.filename.startswith(f"{top}/data/"))
    if stored > MAX_STORAGE_BYTES:
        raise _Refused(f"its storages are past {MAX_STORAGE_BYTES >> 20} MiB")
    if archive.getinfo(pickles[0]).file_size > MAX_PICKLE_BYTES:
        raise _Refused(f"its data.pkl is past {MAX_PICKLE_BYTES >> 20} MiB")
    return top


def _read(data: bytes) -> tuple[str, dict[str, np.ndarray[Any, Any]]]:
    """:func:`read_torchscript_weights` but for the file's name: _Refused, or whatever a
    malformed archive or pickle raises."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        top = _top_folder(archive)
        # An archive without it is little-endian, as torch.load takes one to be.
        big_endian = False
        if f"{top}/byteorder" in archive.namelist():
            info = archive.getinfo(f"{top}/byteorder")
            order = archive.read(info) if info.file_size <= 6 else b""
            if order not in (b"little", b"big"):
                raise _Refused("its byte order is neither little nor big")
            big_endian = order == b"big"
        unpickler = _Unpickler(archive.read(f"{top}/data.pkl"), archive, top, big_endian)
        root = unpickler.load()
    if not isinstance(root, _Object) or not isinstance(root.state, dict):
        raise _Refused("its pickle is not of a module")
    metadata = root.state.get("metadata_json")
    if not isinstance(metadata, str):
        raise _Refused("it has no metadata_json")
    tensors: dict[str, np.ndarray[Any, Any]] = {}
    _named_tensors(root, "", 0, set(), tensors)
    # The network's cells: a non-persistent buffer, which TorchScript saves all the same.
    tensors.pop("cells", None)
    return metadata, tensors


def read_torchscript_weights(data: bytes, name: str) -> tuple[str, dict[str, np.ndarray[Any, Any]]]:
    """The metadata JSON string and the tensors (by state-dict name) of a network that an older
    zertz exported as TorchScript, read from the zip archive's data.pkl with a restricted
    unpickler and the archive's raw storages: nothing in the file is executed. ValueError (one
    line naming ``name``, the file's name) when the bytes are not such an archive.

    Float tensors come as float32 (bfloat16 and float16 widened), integer ones (BatchNorm's
    ``num_batches_tracked``) as int64, all C-contiguous. Every tensor attribute of the module
    tree is there, ``captures.*`` included, except the network's non-persistent ``cells``:
    the caller keeps those its network has. Bounded: at most :data:`MAX_ENTRIES` entries, a
    ``data.pkl`` of :data:`MAX_PICKLE_BYTES`, :data:`MAX_STORAGE_BYTES` of storages, modules
    :data:`MAX_DEPTH` deep; an entry whose CRC is wrong is refused."""
    try:
        return _read(data)
    except _Refused as e:
        reason = str(e)
    except Exception as e:  # a malformed archive or pickle: zipfile's, pickle's, numpy's
        said = str(e).strip().splitlines()
        reason = f"{type(e).__name__}: {said[0]}" if said else type(e).__name__
    raise ValueError(f"{name} is not a network exported as TorchScript: {reason}")
