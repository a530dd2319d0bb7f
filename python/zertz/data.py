"""Reading self-play shards (``.npz`` files written by ``zertz.selfplay`` or ``zertz selfplay``).

>>> import numpy as np
>>> from zertz.data import dense_policy
>>> offsets = np.array([0, 1, 1])            # sample 0 has one entry, sample 1 none
>>> dense_policy(offsets, np.array([2], dtype=np.int32), np.array([1.0], dtype=np.float32), 3)
array([[0., 0., 1.],
       [0., 0., 0.]], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike

import numpy as np
import numpy.typing as npt

SHARD_FORMAT_VERSION = 1


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
    """Concatenates shards into training arrays: ``planes`` float32 ``[S, C, H, W]``, ``globals``
    float32 ``[S, G]``, ``legal_mask`` bool ``[S, A]``, ``policy`` float32 ``[S, A]``, ``value``,
    ``root_value`` float32 ``[S]``, ``full_search`` bool ``[S]``, ``game_id``, ``move_number``,
    ``to_play`` ``[S]``. ``actions`` is the action-space size of the board
    (``zertz.action_space_size(board)``). Raises ValueError for another format version."""
    parts: dict[str, list[npt.NDArray[np.generic]]] = {}
    for path in paths:
        with np.load(path) as shard:
            version = int(shard["format_version"][0])
            if version != SHARD_FORMAT_VERSION:
                raise ValueError(f"{path}: shard format {version}, expected {SHARD_FORMAT_VERSION}")
            arrays: dict[str, npt.NDArray[np.generic]] = {
                "planes": shard["planes"].astype(np.float32),
                "globals": shard["globals"],
                "legal_mask": np.unpackbits(
                    shard["legal_mask"], axis=1, count=actions, bitorder="little"
                ).astype(bool),
                "policy": dense_policy(
                    shard["policy_offsets"], shard["policy_index"], shard["policy_prob"], actions
                ),
            }
            for key in ("value", "root_value", "full_search", "game_id", "move_number", "to_play"):
                arrays[key] = shard[key]
            for key, value in arrays.items():
                parts.setdefault(key, []).append(value)
    if not parts:
        raise ValueError("no shards given")
    return {key: np.concatenate(values) for key, values in parts.items()}
