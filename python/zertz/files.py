"""The files users name, read and written in one way: every reader and writer of the package's
training side (configs, checkpoints, metrics, exported networks, a run's records) comes here.

Reading: a regular file only (a FIFO, a device or a link to one is refused before it is opened:
opening a FIFO waits for a writer forever, and ``/dev/zero`` never ends), read within the bound
of its kind (:data:`LIMITS`, Rust's constants, ``zertz_env::files``), which the error of a
file past it states. Every refusal is an OSError of one line that names the file::

    cannot read runs/a/metrics.jsonl: not a regular file (a device)
    cannot read big.toml: 3 MiB is more than the 1 MiB that a config file may have

Writing: :func:`write_atomic` writes the whole file beside its name (``.NAME.partial-PID``,
Rust's name of a partial output) and renames it into place; a full disk is an OSError of one
line that names the file and the room it needs, and leaves no partial file.
:func:`remove_leftovers` removes what killed writers left.
"""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
from pathlib import Path
from typing import Any, BinaryIO, Literal

from zertz._zertz import (
    file_limits,
    open_regular,
    partial_owner,
    partial_path,
    process_runs,
    read_bounded,
    size_text,
)

#: The most bytes of each kind of file (Rust's constants: ``MAX_CONFIG_BYTES``,
#: ``MAX_JSON_BYTES``, ``MAX_METRICS_BYTES``, ``MAX_NETWORK_BYTES``, ``MAX_CHECKPOINT_BYTES``
#: of ``zertz_env::files``).
LIMITS: dict[str, int] = file_limits()

__all__ = [
    "LIMITS",
    "append_text",
    "leftovers",
    "open_binary",
    "read_bytes",
    "read_json",
    "read_text",
    "remove_leftovers",
    "size_text",
    "torch_file",
    "write_atomic",
]


def read_bytes(path: str | os.PathLike[str], kind: str) -> bytes:
    """The bytes of the file ``path`` of kind ``kind`` (a key of :data:`LIMITS`; ValueError for
    another): a regular file within its kind's bound (OSError naming the file otherwise;
    FileNotFoundError for a missing one).

    >>> read_bytes("/dev/null", "config")
    Traceback (most recent call last):
    ...
    OSError: cannot read /dev/null: not a regular file (a device)
    """
    return read_bounded(path, kind)


def read_text(
    path: str | os.PathLike[str], kind: str, errors: Literal["strict", "replace"] = "strict"
) -> str:
    """The text of :func:`read_bytes`, UTF-8; ValueError naming the file for other bytes (with
    ``errors="strict"``; ``"replace"`` puts U+FFFD in their place)."""
    data = read_bytes(path, kind)
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text ({e.reason} at byte {e.start})") from None


def read_json(path: str | os.PathLike[str], kind: str = "json") -> Any:
    """The JSON value of the file ``path`` (:func:`read_text`); ValueError naming the file for
    one that is not JSON."""
    try:
        return json.loads(read_text(path, kind))
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError):
            raise ValueError(f"{path} is not JSON ({e})") from None
        raise


def torch_file(path: str | os.PathLike[str], kind: str) -> io.BytesIO:
    """The file ``path`` in memory, for ``torch.load`` and ``torch.jit.load``
    (:func:`read_bytes`): torch then opens nothing itself."""
    return io.BytesIO(read_bytes(path, kind))


def open_binary(path: str | os.PathLike[str]) -> BinaryIO:
    """The file ``path`` opened for reading in binary, of any size (a file read a line at a
    time): a regular file, refused before it is opened otherwise, as :func:`read_bytes`."""
    return os.fdopen(open_regular(path), "rb")


def _disk_full(path: Path, need: int) -> OSError:
    """The one-line error of a write of ``need`` bytes to ``path`` that the disk has no room
    for."""
    folder = path.parent
    try:
        st = os.statvfs(folder)
        free = f"{size_text(st.f_bavail * st.f_frsize)} free"
    except OSError:
        free = "less free"
    e = OSError(
        f"cannot write {path}: the disk is full ({size_text(need)} needed, {free} in "
        f"{folder}): make room and run the same command again"
    )
    e.errno = errno.ENOSPC
    return e


#: The errors of a write that ran out of room: a full disk, a quota.
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Writes ``data`` as the file ``path``, atomically: beside it first (``.NAME.partial-PID``,
    which a failure removes), then renamed into place, so that a reader never sees part of it.
    A disk without room for it (checked first, and any write that fails for want of it) is an
    OSError of one line naming the file and the room needed; other errors are the system's."""
    path = Path(path)
    try:
        st = os.statvfs(path.parent)
    except OSError:
        st = None
    # The room of the disk, the blocks of root's reserve included: a write that cannot fit
    # even there is refused before anything is written.
    if st is not None and len(data) > st.f_bfree * st.f_frsize:
        raise _disk_full(path, len(data))
    tmp = partial_path(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        if e.errno in _NO_ROOM:
            raise _disk_full(path, len(data)) from None
        raise
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Appends ``text`` to the file ``path`` and syncs it to the disk; a disk without room for
    it is an OSError of one line naming the file and the room needed (as :func:`write_atomic`'s;
    a line cut short by it is the reader's to skip)."""
    data = text.encode()
    try:
        with open(path, "ab") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError as e:
        if e.errno in _NO_ROOM:
            raise _disk_full(Path(path), len(data)) from None
        raise


def leftovers(folder: str | os.PathLike[str], name: str | None = None) -> list[Path]:
    """The partial outputs in ``folder`` (``.NAME.partial-PID``, of ``name`` alone where it is
    given) that earlier writes left: this process's, and those of processes that no longer run
    (one whose process runs is left to it). Sorted."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    found = []
    for entry in folder.iterdir():
        owner = partial_owner(entry.name)
        if owner is None or name not in (None, owner[0]):
            continue
        pid = owner[1]
        if pid == os.getpid() or not process_runs(pid):
            found.append(entry)
    return sorted(found)


def remove_leftovers(folder: str | os.PathLike[str]) -> list[Path]:
    """Removes the :func:`leftovers` in ``folder`` (files or folders), and returns them."""
    removed = []
    for entry in leftovers(folder):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed
