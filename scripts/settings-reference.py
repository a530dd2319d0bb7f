"""Writes docs/settings.md, the reference of every setting, from the settings' own declarations:
the match, self-play and search settings from Rust (each declared once there, with its
doc, default and range: ``zertz._zertz.match_settings()`` and its siblings), and the tables of a
training config from ``zertz.training.config`` (each field's ``#:`` comment, default and range).

    .venv/bin/python scripts/settings-reference.py          # exit 1 if docs/settings.md is stale
    .venv/bin/python scripts/settings-reference.py --write  # write it

python/tests/test_structure.py fails while the file is stale, as the stubs' test does.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import zertz._zertz as native
from zertz.training import config

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "settings.md"

HEADER = """# Settings reference

Every setting of the engine's jobs and of a training run: its name, type, default and what it
does, with its range. This file is generated from the settings' declarations by
`scripts/settings-reference.py --write`; a test fails while it is stale. Do not edit it by hand.

The same names serve every front: a key of a config file, a `zertz` option (`games` is
`--games`), and a keyword in Python (`zertz.match(a, b, games=10)`).
"""

#: Rust's tables: title, what reads them, and the function that lists them.
ENGINE_TABLES = [
    (
        "Matches",
        "`zertz match` (options, `configs/match.toml`), `zertz.match` (keywords)",
        native.match_settings,
    ),
    (
        "Self-play",
        "`zertz selfplay` (options, `configs/selfplay.toml`), `zertz.selfplay`, the `[selfplay]` "
        "table of a training config",
        native.selfplay_settings,
    ),
    (
        "Search",
        "the `[search]` table of self-play (`[selfplay.search]` in a training config), "
        "`zertz.MCTS` (keywords); None or absent: the preset's value",
        native.mcts_settings,
    ),
]


def _cell(text: str) -> str:
    """``text`` in one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


def _value(value: Any) -> str:
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{json.dumps(value)}`"


def engine_table(rows: list[dict[str, Any]]) -> list[str]:
    lines = ["| name | type | default | what it does |", "|---|---|---|---|"]
    for s in rows:
        lines.append(
            f"| `{s['name']}` | {_cell(s['type'])} | {_value(s['default'])} | {_cell(s['doc'])} |"
        )
    return lines


def _comments(source: list[str], tree: ast.Module, cls: type) -> dict[str, str]:
    """Each field of the dataclass ``cls`` with the ``#:`` comment above it in ``source``, whose
    syntax tree is ``tree``."""
    (node,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__]
    found: dict[str, str] = {}
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            n = item.lineno - 2
            doc: list[str] = []
            while n >= 0 and source[n].strip().startswith("#:"):
                doc.insert(0, source[n].strip().removeprefix("#:").strip())
                n -= 1
            found[item.target.id] = " ".join(doc)
    return found


def training_tables() -> list[str]:
    source = Path(config.__file__).read_text().splitlines()
    tree = ast.parse("\n".join(source))
    lines: list[str] = []
    for name, cls in config.SECTIONS.items():
        doc = " ".join((cls.__doc__ or "").split())
        lines += ["", f"### `[{name}]`", "", doc, ""]
        lines += ["| name | type | default | what it does |", "|---|---|---|---|"]
        comments = _comments(source, tree, cls)
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                default = _value(f.default)
            elif f.default_factory is not dataclasses.MISSING:
                default = _value(f.default_factory())
            else:
                default = "(required)"
            values = config.declared_range(f)
            what = comments.get(f.name, "")
            if values is not None:
                what += f" It {values.reason('int' if str(f.type) == 'int' else 'number')}."
            lines.append(f"| `{f.name}` | {_cell(str(f.type))} | {default} | {_cell(what)} |")
    return lines


def reference() -> str:
    lines = [HEADER.rstrip("\n")]
    for title, readers, listed in ENGINE_TABLES:
        lines += ["", f"## {title}", "", f"Read by {readers}.", ""]
        lines += engine_table(listed())
    lines += [
        "",
        "## Training configs",
        "",
        "The tables of `configs/train/*.toml`, read by `python -m zertz train --config FILE`. An "
        "unknown key is refused. The `[selfplay]` table also takes every self-play setting "
        "above, and `[selfplay.search]` the search settings.",
    ]
    lines += training_tables()
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = reference()
    if "--write" in argv:
        REFERENCE.write_text(text)
        print(f"settings-reference: wrote {REFERENCE.relative_to(ROOT)}")
        return 0
    if not REFERENCE.is_file() or REFERENCE.read_text() != text:
        print(
            f"settings-reference: {REFERENCE.relative_to(ROOT)} is stale: run "
            "scripts/settings-reference.py --write",
            file=sys.stderr,
        )
        return 1
    print(f"settings-reference: {REFERENCE.relative_to(ROOT)} is current")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
