"""Compares two training run folders, or two datasets, file by file, for what a fixed seed must
reproduce: the weights of every network (``models/*.safetensors``), the whole of ``checkpoint.pt``
(weights, optimizer, state, random states), the arrays of every shard, the game records, the
matches' moves and results, the metrics lines, every other file byte for byte. Times and the
figures made of them (keys naming seconds, time, share, effort, ETA) are left out. TensorBoard's
event files, the lock and the config's copy are skipped. Prints a line per file and exits with
status 1 when any differs.

Paths are read as ``RUN`` where they name the run's own folder: the folder as given, and the
folders the run was trained in, as its metrics name its matches' files (``OLD/matches/...``). A
run moved or copied (``cp -a``) still names its old folder in its records and metrics, and
compares the same as the original.

Hostile folders: nothing is unpickled or run (checkpoints are read with
``torch.load(weights_only=True)``, ``zertz.training.load_checkpoint``; networks as data,
``zertz.exported.load_network``; shards without pickles; the TorchScript networks of an older
zertz's runs, ``models/*.pt``, byte for byte), symbolic links are never followed
(two links compare by their targets' text), and only regular files are opened (a FIFO or a
device is compared by its kind, never opened; a file is opened so that a FIFO put in its place
meanwhile cannot block, and the metrics, checkpoint and networks are read within the bounds of
``zertz.files.LIMITS``). A file that cannot be read (torn or non-UTF-8
JSON, a garbage network, shard or checkpoint, a checkpoint holding objects) is listed as
``ERROR`` and named in one line on stderr (``error: PATH ...``); the comparison goes on with the
other files and exits with status 2. A folder that does not exist, or is not one, is refused
with one line (status 2).

Two runs of one commit, or the same config at two commits (same machine, same thread counts):

    .venv/bin/python -m zertz train --config C.toml --run /tmp/a
    other/.venv/bin/python -m zertz train --config C.toml --run /tmp/b
    .venv/bin/python scripts/compare-runs.py /tmp/a /tmp/b
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import torch

from zertz.exported import load_network
from zertz.files import open_binary, read_bytes
from zertz.nn import AUX_PREFIX
from zertz.training.folder import first_line, load_checkpoint, printable
from zertz.training.layout import RunLayout

#: The run folder's names, relative to it.
NAMES = RunLayout(Path())
SKIPPED = {str(NAMES.lock), str(NAMES.config)}
TIMED = ("second", "time", "share", "effort", "eta")
KINDS = {
    stat.S_IFREG: "regular file",
    stat.S_IFLNK: "symlink",
    stat.S_IFIFO: "FIFO",
    stat.S_IFSOCK: "socket",
    stat.S_IFCHR: "character device",
    stat.S_IFBLK: "block device",
}
#: What may come before and after a path in a string (``nn:PATH:16``, ``PATH/models/...``).
BEFORE = r"""(?<![^\s:=,;'"(])"""
AFTER = r"""(?=[/\s:,;'")]|$)"""


class Unreadable(Exception):
    """A file that cannot be read as its kind: the message names it and says why (one line)."""


@dataclass
class Entries:
    """What a folder holds below it, without following links: kinds by relative name, and the
    folders that could not be listed."""

    kinds: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def entries(folder: Path) -> Entries:
    """Every file under ``folder`` but TensorBoard's (``tb/``), by kind; symbolic links are
    entries, never followed (a link that loops is one entry like any other)."""
    found = Entries()
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                listed = list(it)
        except OSError as e:
            found.errors.append(f"{current} cannot be listed ({e.strerror or e})")
            continue
        for entry in listed:
            path = Path(entry.path)
            name = str(path.relative_to(folder))
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError as e:
                found.errors.append(f"{path} cannot be read ({e.strerror or e})")
                continue
            if stat.S_ISDIR(mode):
                if Path(name) != NAMES.tensorboard:
                    stack.append(path)
            else:
                found.kinds[name] = KINDS.get(stat.S_IFMT(mode), "special file")
    return found


def regular(path: Path) -> Path:
    """``path``, checked to be a regular file before anything opens it (opening a FIFO waits
    forever)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError as e:
        raise Unreadable(f"{path} cannot be read ({e.strerror or e})") from None
    if not stat.S_ISREG(mode):
        raise Unreadable(f"{path} is not a regular file")
    return path


def unreadable(path: Path, e: OSError) -> Unreadable:
    """The refusal of ``path`` that the system or :mod:`zertz.files` (whose one line names it)
    refused."""
    return Unreadable(str(e) if e.strerror is None else f"{path} cannot be read ({e.strerror})")


def json_values(path: Path) -> list[Any]:
    """The JSON value of a ``.json`` file, or those of a ``.jsonl`` file's lines (the metrics
    within their bound)."""
    try:
        data = read_bytes(regular(path), "metrics") if path.name == NAMES.metrics.name else None
        text = (contents(path) if data is None else data).decode()
    except UnicodeDecodeError as e:
        raise Unreadable(f"{path} is not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise unreadable(path, e) from None
    lines = text.split("\n") if path.suffix == ".jsonl" else [text]
    values = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except (ValueError, RecursionError) as e:
            where = f"line {number}" if path.suffix == ".jsonl" else "it"
            raise Unreadable(f"{path} is not JSON: {where} is not ({first_line(e)})") from None
    return values


def untimed(value: Any) -> Any:
    """``value`` without the keys whose values are times or made of them."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not any(w in k for w in TIMED)}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def recorded_roots(folder: Path) -> set[str]:
    """The folders the run was trained in, as its metrics name its matches' files
    (``OLD/matches/iter-N-TAG.jsonl``): a run moved or copied names its old folder. Lines that
    cannot be read are passed over here (the comparison of the file names them)."""
    path = RunLayout(folder).metrics
    try:
        text = read_bytes(regular(path), "metrics").decode(errors="surrogateescape")
    except (Unreadable, OSError):
        return set()
    roots = set()
    for line in text.split("\n"):
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            continue
        results = value.get("evaluation") if isinstance(value, dict) else None
        for result in results.values() if isinstance(results, dict) else ():
            out = result.get("out") if isinstance(result, dict) else None
            if not isinstance(out, str):
                continue
            layout = RunLayout.of_match_games(out)
            if layout is not None:
                roots.add(str(layout.root))
    return roots


@dataclass(frozen=True)
class Run:
    """A folder being compared, and the paths of it that its files may name."""

    folder: Path
    roots: tuple[str, ...]

    @classmethod
    def of(cls, folder: Path) -> Run:
        given = {str(folder), os.path.abspath(folder), str(folder.resolve())}
        roots = (given | recorded_roots(folder)) - {".", "", "/"}
        return cls(folder, tuple(sorted(roots, key=len, reverse=True)))

    def unrooted(self, value: Any) -> Any:
        """``value`` (JSON) with the paths of the run's folder read as ``RUN``."""
        if isinstance(value, str):
            for root in self.roots:
                value = re.sub(BEFORE + re.escape(root) + AFTER, "RUN", value)
            return value
        if isinstance(value, dict):
            return {self.unrooted(k): self.unrooted(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.unrooted(v) for v in value]
        return value


def same_value(x: Any, y: Any) -> bool:
    """Whether two values read from files are the same: tensors and arrays element for element
    (NaN the same as NaN), containers item for item, anything else by type and ``==``."""
    if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor):
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        equal = x == y
        if x.is_floating_point() or x.is_complex():
            equal |= x.isnan() & y.isnan()
        return bool(equal.all())
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        nan = x.dtype.kind in "fc" and y.dtype.kind in "fc"
        return x.dtype == y.dtype and bool(np.array_equal(x, y, equal_nan=nan))
    if type(x) is not type(y):
        return False
    if isinstance(x, dict):
        return x.keys() == y.keys() and all(same_value(x[k], y[k]) for k in x)
    if isinstance(x, list | tuple):
        return len(x) == len(y) and all(same_value(u, v) for u, v in zip(x, y, strict=True))
    if isinstance(x, float) and x != x:
        return bool(y != y)
    return bool(x == y)


def weights(path: Path) -> dict[str, torch.Tensor]:
    """The weights of a network file: those it holds (not the training-only head, which
    :func:`load_network` makes afresh, nor the batch norms' step counts)."""
    try:
        state = load_network(regular(path)).state_dict()
        return {
            k: v
            for k, v in state.items()
            if not k.startswith(AUX_PREFIX) and not k.endswith("num_batches_tracked")
        }
    except OSError as e:
        raise unreadable(path, e) from None
    except (ValueError, RuntimeError) as e:
        raise Unreadable(f"{path} is not an exported network ({first_line(e)})") from None


def checkpoint(path: Path) -> dict[str, Any]:
    """A training checkpoint, read without unpickling objects."""
    try:
        return load_checkpoint(regular(path))
    except (OSError, ValueError) as e:
        raise Unreadable(first_line(e).removeprefix("ValueError: ")) from None


def arrays(path: Path) -> dict[str, Any]:
    """The arrays of a ``.npz`` file (pickled objects refused)."""
    try:
        with open_binary(regular(path)) as f, np.load(f, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except Unreadable:
        raise
    except OSError as e:
        raise unreadable(path, e) from None
    except Exception as e:  # a corrupt zip or array raises what its reader raises
        raise Unreadable(f"{path} is not a readable .npz file ({first_line(e)})") from None


def contents(path: Path) -> bytes:
    """The bytes of a regular file (opened as :func:`zertz.files.open_binary` opens it)."""
    try:
        with open_binary(regular(path)) as f:
            return f.read()
    except OSError as e:
        raise unreadable(path, e) from None


def reader(name: str, run: Run) -> Callable[[Path], Any]:
    """How the file ``name`` of a folder is read for the comparison."""
    path = Path(name)
    if path == NAMES.checkpoint:
        return checkpoint
    if NAMES.is_network(path):
        return weights
    if path.suffix == ".npz":
        return arrays
    if path.suffix in (".json", ".jsonl"):
        return lambda p: [run.unrooted(untimed(v)) for v in json_values(p)]
    return contents


def compare(name: str, kind: str, a: Run, b: Run) -> bool:
    """Whether the entries ``name`` of both folders, both of ``kind``, are the same: files by
    their contents, symbolic links by their targets' text (a path of the run read as ``RUN``),
    anything else by its kind alone (never opened)."""
    x, y = a.folder / name, b.folder / name
    if kind == "symlink":
        try:
            return bool(a.unrooted(os.readlink(x)) == b.unrooted(os.readlink(y)))
        except OSError as e:
            raise Unreadable(f"{e.filename} cannot be read ({e.strerror or e})") from None
    if kind != "regular file":
        return True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.load's protocol notes
        return same_value(reader(name, a)(x), reader(name, b)(y))


def error(message: str) -> None:
    print(f"error: {printable(message)}", file=sys.stderr, flush=True)


def main(a: Path, b: Path) -> int:
    ea, eb = entries(a), entries(b)
    for message in ea.errors + eb.errors:
        error(message)
    ra, rb = Run.of(a), Run.of(b)
    fa, fb = ea.kinds, eb.kinds
    differ = 0
    unreadable = len(ea.errors) + len(eb.errors)
    for only, folder in ((fa.keys() - fb.keys(), a), (fb.keys() - fa.keys(), b)):
        for name in sorted(only):
            print(f"only in {printable(str(folder))}: {printable(name)}")
            differ += 1
    both = sorted(name for name in fa.keys() & fb.keys() if name not in SKIPPED)
    for name in both:
        shown = printable(name)
        if fa[name] != fb[name]:
            where = f"a {fa[name]} in {printable(str(a))}, a {fb[name]} in {printable(str(b))}"
            print(f"DIFFERS {shown} ({where})")
            differ += 1
            continue
        note = "" if fa[name] == "regular file" else f" (a {fa[name]}, not followed or opened)"
        try:
            ok = compare(name, fa[name], ra, rb)
        except Exception as e:  # Unreadable, or values no run writes that do not compare
            print(f"ERROR   {shown}")
            uncompared = f"{a / name} and {b / name} cannot be compared ({first_line(e)})"
            error(str(e) if isinstance(e, Unreadable) else uncompared)
            unreadable += 1
            continue
        print(("same    " if ok else "DIFFERS ") + shown + note)
        differ += not ok
    summary = f"{differ} of {len(both)} files differ" if differ else "no difference"
    if unreadable:
        summary += f"; {unreadable} could not be read (error lines on stderr)"
    print(summary)
    return 2 if unreadable else 1 if differ else 0


class Parser(argparse.ArgumentParser):
    """Refuses wrong arguments with one line (``error: ...``, status 2)."""

    def error(self, message: str) -> NoReturn:
        error(f"{message} (usage: compare-runs.py A B)")
        sys.exit(2)


def folder_error(folder: Path) -> str | None:
    """Why ``folder`` cannot be compared, or None."""
    try:
        mode = os.stat(folder).st_mode
    except FileNotFoundError:
        return f"{folder} does not exist"
    except OSError as e:
        return f"{folder} cannot be read ({e.strerror or e})"
    return None if stat.S_ISDIR(mode) else f"{folder} is not a folder"


def cli(argv: list[str] | None = None) -> int:
    parser = Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("a", type=Path, help="a run folder or dataset")
    parser.add_argument("b", type=Path, help="the other")
    args = parser.parse_args(argv)
    for folder in (args.a, args.b):
        if why := folder_error(folder):
            error(why)
            return 2
    return main(args.a, args.b)


if __name__ == "__main__":
    sys.exit(cli())
