"""Makes a training run's network the engine's built-in one (``nn:builtin``): exports the run's
final network (``RUN/models/iter-N-average.safetensors`` when the run averaged its last
networks, ``train.average``, else the network of ``RUN/checkpoint.pt``) as a network file to
``model/builtin/builtin.safetensors`` with its provenance in the metadata (the run's config, the
commit that trained it, the run's final evaluation and human-move benchmark, and the figures of
FIGURES.json, such as matches against alphabeta), then rebuild (the engine and the Python module
carry the file). A run of an older zertz whose average is TorchScript (``iter-N-average.pt``)
is refused with the command that converts it.

    .venv/bin/python scripts/ship-network.py RUN --commit HASH [--figures FIGURES.json]

Whatever is wrong with the run or the files (a missing run folder, torn or non-UTF-8 metrics, a
garbage network or checkpoint, figures that are not a JSON object, a FIFO, a device or a folder
where a file should be, a symbolic link that loops) is refused with one line naming the file,
``error: ...``, and status 2. Only regular files are opened, each within the bound of its kind
(``zertz.files.LIMITS``: the metrics, the config, the figures, the networks and checkpoint), and
checkpoints are read with ``torch.load(weights_only=True)`` and networks as data: nothing is
unpickled or run. A full disk is one line naming ``--out`` and the room it needs; an ``--out``
named ``.pt`` is refused (a network file is ``.safetensors``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn

from zertz.exported import average_networks, export
from zertz.files import read_bytes
from zertz.training import export_checkpoint
from zertz.training.folder import check_network_name, first_line, printable
from zertz.training.layout import LEGACY_SUFFIX, RunLayout

FIELDS = ("games", "wins", "draws", "losses", "score", "elo", "elo_low", "elo_high", "move_time")


class Refused(Exception):
    """Why the network is not shipped, in one line that names the file."""


def why(e: OSError) -> str:
    return e.strerror or str(e)


def refusal(path: Path | str, e: OSError) -> Refused:
    """The refusal of ``path`` that the system or :mod:`zertz.files` (whose one line names it:
    a bound passed, a full disk) refused."""
    return Refused(str(e) if e.strerror is None else f"{path} cannot be read ({e.strerror})")


def message(e: BaseException) -> str:
    """The first line of what ``e`` says."""
    lines = str(e).strip().splitlines()
    return lines[0].strip() if lines else type(e).__name__


def present(path: Path) -> bool:
    """Whether ``path`` is there, as a regular file (Refused for anything else: a folder, a
    FIFO, whose opening would wait forever, a device, a link that loops)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    except OSError as e:
        raise Refused(f"{path} cannot be read ({why(e)})") from None
    if stat.S_ISDIR(mode):
        raise Refused(f"{path} is a folder, not a file")
    if not stat.S_ISREG(mode):
        raise Refused(f"{path} is not a regular file")
    return True


def regular(path: Path) -> Path:
    """``path``, checked to be a regular file before anything opens it."""
    if not present(path):
        raise Refused(f"{path} does not exist")
    return path


def read_text(path: Path, kind: str) -> str:
    """The text of ``path``, a file of ``kind`` (``zertz.files.LIMITS``: its bound)."""
    try:
        return read_bytes(regular(path), kind).decode()
    except UnicodeDecodeError as e:
        raise Refused(f"{path} is not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise refusal(path, e) from None


def finite(value: Any) -> bool:
    """Whether a JSON value holds no NaN or infinite number (which JSON cannot write)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, list):
        return all(finite(v) for v in value)
    return True


def parse_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:
        raise Refused(f"{where} is not JSON ({message(e)})") from None


def read_figures(path: Path) -> dict[str, Any]:
    """The JSON object of ``--figures``."""
    figures = parse_json(read_text(path, "json"), str(path))
    if not isinstance(figures, dict):
        raise Refused(f"{path} is not a JSON object of figures (it is a {type(figures).__name__})")
    if not finite(figures):
        raise Refused(f"{path} holds a NaN or infinite number")
    return figures


def count(line: dict[str, Any], key: str, where: str) -> int:
    value = line.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise Refused(f"{where} has no {key} count (an int >= 0) but {value!r:.40}")
    return value


def final_line(path: Path) -> tuple[int, dict[str, Any]]:
    """The last line of the metrics ``path`` with the final evaluation, and its number."""
    final: tuple[int, dict[str, Any]] | None = None
    for number, text in enumerate(read_text(path, "metrics").split("\n"), 1):
        if not text.strip():
            continue
        line = parse_json(text, f"{path}: line {number}")
        if not isinstance(line, dict):
            raise Refused(f"{path}: line {number} is not a JSON object")
        if line.get("final"):
            final = number, line
    if final is None:
        raise Refused(f"{path.parent} has not finished (no final evaluation in {path.name})")
    return final


def provenance(run: Path, commit: str, figures: dict[str, Any]) -> dict[str, Any]:
    """What the built-in network's metadata says of where it comes from."""
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise Refused(f"--commit must be a full commit hash (40 hex digits), not {commit!r}")
    layout = RunLayout(run)
    number, last = final_line(layout.metrics)
    where = f"{layout.metrics}: line {number}"
    results = last.get("evaluation")
    if not isinstance(results, dict):
        raise Refused(f"{where} has no evaluation (a JSON object of matches)")
    evaluation = {}
    for name, r in results.items():
        if name == "best":
            continue
        if not isinstance(r, dict) or not isinstance(r.get("a"), str) or "b" not in r:
            raise Refused(f"{where}: evaluation {name!r:.40} is not a match's summary")
        evaluation[name] = {
            "player": r["a"],
            "opponent": r["b"],
            **{k: r[k] for k in FIELDS if k in r},
        }
    meta = {
        "config": read_text(layout.config, "config"),
        "commit": commit,
        "step": count(last, "step", where),
        "iterations": count(last, "iteration", where),
        "figures": {"final_evaluation": evaluation, "human": last.get("human"), **figures},
    }
    if not finite(meta):
        raise Refused(f"{where}: the final evaluation holds a NaN or infinite number")
    return meta


def ship(run: Path, out: Path, meta: dict[str, Any]) -> Path:
    """Exports the network the final evaluation played to ``out``: the mean of the last ones
    when the run made it, else the checkpoint's."""
    layout = RunLayout(run)
    average = layout.average(meta["iterations"])
    legacy = average.with_suffix(LEGACY_SUFFIX)
    if not present(average) and present(legacy):
        raise Refused(
            f"{legacy} is a network of an older zertz (TorchScript): convert it first "
            f"(python -m zertz convert-network {legacy} {average}), then ship the run"
        )
    source = average if present(average) else regular(layout.checkpoint)
    if os.path.lexists(out) and not stat.S_ISREG(os.lstat(out).st_mode):
        raise Refused(f"--out {out} exists and is not a regular file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch.load's notes
            if source == average:
                net, exported = average_networks([average])
                return export(net, out, step=exported["step"], provenance=meta)
            return export_checkpoint(source, out, provenance=meta)
    except OSError as e:
        if e.strerror is None:  # zertz.files's one line, which names the file
            raise Refused(str(e)) from None
        raise Refused(f"{e.filename or out} cannot be read or written ({why(e)})") from None
    except ValueError as e:  # the readers' refusals name the file; a NaN weight names --out
        said = message(e)
        raise Refused(said if str(source) in said else f"{source}: {said}") from None
    except (RuntimeError, KeyError, TypeError) as e:
        raise Refused(f"{source} is not a usable network ({first_line(e)})") from None


class Parser(argparse.ArgumentParser):
    """Refuses wrong arguments with one line (``error: ...``, status 2)."""

    def error(self, message: str) -> NoReturn:
        fail(f"{message} (usage: ship-network.py RUN --commit HASH [--figures FIGURES.json])")


def fail(message: str) -> NoReturn:
    print(f"error: {printable(message)}", file=sys.stderr)
    sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    parser = Parser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--commit", required=True, help="the commit that trained the run")
    parser.add_argument("--figures", type=Path, help="a JSON object of more figures")
    parser.add_argument("--out", type=Path, default=Path("model/builtin/builtin.safetensors"))
    args = parser.parse_args(argv)
    try:
        try:
            if not stat.S_ISDIR(os.stat(args.run).st_mode):
                raise Refused(f"{args.run} is not a folder")
        except FileNotFoundError:
            raise Refused(f"{args.run} does not exist") from None
        except OSError as e:
            raise Refused(f"{args.run} cannot be read ({why(e)})") from None
        try:
            check_network_name(args.out)
        except ValueError as e:
            raise Refused(f"--out {e}") from None
        figures = read_figures(args.figures) if args.figures else {}
        meta = provenance(args.run, args.commit, figures)
        print(ship(args.run, args.out, meta))
    except Refused as e:
        fail(str(e))


if __name__ == "__main__":
    main()
