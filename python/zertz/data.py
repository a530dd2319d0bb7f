"""Reading self-play shards (``.npz`` files written by ``zertz.selfplay`` or ``zertz selfplay``).

>>> import numpy as np
>>> from zertz.data import dense_policy
>>> offsets = np.array([0, 1, 1])            # sample 0 has one entry, sample 1 none
>>> dense_policy(offsets, np.array([2], dtype=np.int32), np.array([1.0], dtype=np.float32), 3)
array([[0., 0., 1.],
       [0., 0., 0.]], dtype=float32)
"""

from __future__ import annotations

import os
import re
import stat
import warnings
from collections.abc import Iterable
from os import PathLike

import numpy as np
import numpy.typing as npt

from zertz._zertz import (
    BOARDS,
    ENCODING_VERSION,
    SHARD_FORMAT_VERSION,
    action_space_size,
    observation_shape,
    shard_schema,
)

#: The arrays of a shard by name (the engine's schema: ``zertz.shard_schema()``).
_SCHEMA = {a["name"]: a for a in shard_schema()}
#: The arrays with one entry per sample, passed on as they are.
_PER_SAMPLE = tuple(name for name, a in _SCHEMA.items() if a["shape"] == "[S]")
#: The arrays' earlier names (``formerly`` in the schema) and their names now.
_RENAMED = {a["formerly"]["name"]: name for name, a in _SCHEMA.items() if a["formerly"]}
#: The oldest shard format that ``load_shards`` reads.
OLDEST_SHARD_FORMAT = 1


def _dimension(text: str, sizes: dict[str, int]) -> int:
    """One dimension of a shape of the schema, in its letters (``sizes``): ``S``, ``S + 1``,
    ``ceil(A / 8)``, ``6``.

    >>> _dimension("ceil(A / 8)", {"A": 4441}), _dimension("S + 1", {"S": 3})
    (556, 4)
    """
    if text.isdigit():
        return int(text)
    if text in sizes:
        return sizes[text]
    if m := re.fullmatch(r"(\w) \+ (\d+)", text):
        return sizes[m[1]] + int(m[2])
    if m := re.fullmatch(r"ceil\((\w) / (\d+)\)", text):
        return -(-sizes[m[1]] // int(m[2]))
    raise ValueError(f"the shard schema has a dimension this reader does not know: {text!r}")


def _shape(name: str, sizes: dict[str, int]) -> tuple[int, ...]:
    """The shape the schema gives array ``name`` (``[S, C, H, W]``) for ``sizes``."""
    dims = _SCHEMA[name]["shape"].strip("[]").split(", ")
    return tuple(_dimension(d, sizes) for d in dims)


def dense_policy(
    offsets: npt.NDArray[np.int64],
    index: npt.NDArray[np.int32],
    prob: npt.NDArray[np.float32],
    actions: int,
) -> npt.NDArray[np.float32]:
    """Visit distributions as a dense float32 array ``[S, actions]`` from the sparse arrays of a
    shard (``policy_offsets`` ``[S + 1]``, ``policy_index`` and ``policy_prob`` ``[K]``)."""
    samples = len(offsets) - 1
    out = np.zeros((samples, actions), dtype=np.float32)
    rows = np.repeat(np.arange(samples), np.diff(offsets))
    out[rows, index] = prob
    return out


def load_shards(
    paths: Iterable[str | PathLike[str]], actions: int
) -> dict[str, npt.NDArray[np.generic]]:
    """Concatenates shards into training arrays: ``planes`` float32 ``[S, C, H, W]``,
    ``globals`` float32 ``[S, G]``, ``legal_action_mask`` bool ``[S, A]``, ``policy`` float32
    ``[S, A]``, ``value``, ``root_value`` float32 ``[S]``, ``full_search`` bool ``[S]``,
    ``game_id``, ``move_number``, ``to_play`` ``[S]``, ``final_captures`` float32 ``[S, 6]``
    (the marbles each side holds at the game's end, white, grey, black, the mover's first; NaN
    in shards of format 1, which predate it). ``actions`` is the action-space size of the board
    (``zertz.action_space_size(board)``).

    Every shard is checked before it is used: a file that is not a shard, another format or
    encoding version, a board whose action space is not ``actions``, or arrays whose shapes or
    indices do not agree raise ValueError naming the file (a missing file: FileNotFoundError).
    Shards hold no pickled objects and are read with ``allow_pickle=False``. The key
    ``legal_mask`` (the mask's name before shard format 3) still reads, with a
    DeprecationWarning, for one release."""
    if isinstance(actions, bool) or not isinstance(actions, int | np.integer) or actions <= 0:
        raise ValueError(f"actions must be a positive int (an action-space size), not {actions!r}")
    actions = int(actions)
    parts: dict[str, list[npt.NDArray[np.generic]]] = {}
    for path in paths:
        for key, value in _read_shard(path, actions).items():
            parts.setdefault(key, []).append(value)
    if not parts:
        raise ValueError("no shards given")
    return _Arrays((key, np.concatenate(values)) for key, values in parts.items())


class _Arrays(dict[str, npt.NDArray[np.generic]]):
    """The arrays of ``load_shards``; an array's name before a shard format renamed it still
    reads, with a DeprecationWarning (for one release)."""

    def __missing__(self, key: str) -> npt.NDArray[np.generic]:
        if key in _RENAMED:
            warnings.warn(
                f"load_shards' {key!r} is now {_RENAMED[key]!r}; the old key goes in the next "
                "release",
                DeprecationWarning,
                stacklevel=2,
            )
            return self[_RENAMED[key]]
        raise KeyError(key)


def _read_shard(path: str | PathLike[str], actions: int) -> dict[str, npt.NDArray[np.generic]]:
    """One shard's training arrays, checked (see ``load_shards``)."""
    if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block, a folder is no shard
        raise ValueError(f"{path}: not a regular file")
    try:
        with np.load(path, allow_pickle=False) as shard:
            if not isinstance(shard, np.lib.npyio.NpzFile):
                raise ValueError("not an .npz archive")
            raw = {key: shard[key] for key in shard.files}
    except OSError:
        raise
    except Exception as e:  # a zip, npy header or pickle error: the file is not a shard
        raise ValueError(f"{path}: not a self-play shard ({type(e).__name__}: {e})") from e

    def bad(what: str) -> ValueError:
        return ValueError(f"{path}: {what}")

    def scalar(key: str) -> int:
        a = raw.get(key)
        if a is None or a.shape != (1,) or a.dtype.kind not in "iu":
            raise bad(f"no {key} (not a self-play shard)")
        return int(a[0])

    version = scalar("format_version")
    if not OLDEST_SHARD_FORMAT <= version <= SHARD_FORMAT_VERSION:
        raise bad(
            f"shard format {version}, expected {OLDEST_SHARD_FORMAT} to {SHARD_FORMAT_VERSION}"
        )
    encoding = scalar("encoding_version")
    if encoding != ENCODING_VERSION:
        raise bad(f"encoding version {encoding}, this zertz encodes version {ENCODING_VERSION}")
    board = scalar("board")
    if board not in BOARDS:
        raise bad(f"board {board} is not one of {BOARDS}")
    if action_space_size(board) != actions:
        raise bad(
            f"a shard of the {board}-ring board has {action_space_size(board)} actions, "
            f"not {actions} (load shards of one board with zertz.action_space_size(board))"
        )
    for name, a in _SCHEMA.items():  # the names of older formats, read as today's
        if a["formerly"] and version < a["formerly"]["until"] and a["formerly"]["name"] in raw:
            raw[name] = raw.pop(a["formerly"]["name"])
    present = [k for k, a in _SCHEMA.items() if a["since"] <= version]
    missing = set(present) - raw.keys()
    if missing:
        raise bad(f"arrays {sorted(missing)} are missing")
    (c, h, w), g = observation_shape(board)
    planes, offsets, index = raw["planes"], raw["policy_offsets"], raw["policy_index"]
    samples = planes.shape[0] if planes.ndim == 4 else -1
    sizes = {"S": samples, "C": c, "H": h, "W": w, "G": g, "A": actions, "K": len(index)}
    expected = {key: _shape(key, sizes) for key in present if _SCHEMA[key]["shape"] != "[1]"}
    for key, shape in expected.items():
        if samples < 0 or raw[key].shape != shape or raw[key].dtype.kind not in "iufb":
            raise bad(f"{key} has shape {raw[key].shape} and dtype {raw[key].dtype}")
    # Bounds first, then int64: unsigned differences would wrap instead of going negative.
    if (
        offsets.dtype.kind not in "iu"
        or index.dtype.kind not in "iu"
        or offsets.min() < 0
        or offsets.max() > len(index)
    ):
        raise bad("policy_offsets do not index policy_index")
    offsets = offsets.astype(np.int64)
    if offsets[0] != 0 or offsets[-1] != len(index) or np.any(np.diff(offsets) < 0):
        raise bad("policy_offsets do not index policy_index")
    if len(index) and (index.min() < 0 or index.max() >= actions):
        raise bad(f"policy_index holds actions outside 0..{actions}")
    index = index.astype(np.int64)
    if raw["legal_action_mask"].dtype != np.uint8:
        raise bad(f"legal_action_mask has dtype {raw['legal_action_mask'].dtype}, expected uint8")
    arrays: dict[str, npt.NDArray[np.generic]] = {
        "planes": planes.astype(np.float32),
        "globals": raw["globals"],
        "legal_action_mask": np.unpackbits(
            raw["legal_action_mask"], axis=1, count=actions, bitorder="little"
        ).astype(bool),
        "policy": dense_policy(offsets, index, raw["policy_prob"], actions),
    }
    for key in _PER_SAMPLE:
        arrays[key] = raw[key]
    if "final_captures" in present:
        if raw["final_captures"].dtype != np.uint8:
            raise bad(f"final_captures has dtype {raw['final_captures'].dtype}, expected uint8")
        arrays["final_captures"] = raw["final_captures"].astype(np.float32)
    else:
        unknown = _shape("final_captures", {"S": max(samples, 0)})
        arrays["final_captures"] = np.full(unknown, np.nan, dtype=np.float32)
    return arrays
