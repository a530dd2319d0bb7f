"""The stubs' keywords of Rust's settings types, generated from Rust's own
description of them (``_zertz.match_settings()``, ``_zertz.selfplay_settings()``,
``_zertz.mcts_settings()``): a setting added in Rust is a keyword of ``zertz.match``,
``zertz.selfplay`` or ``zertz.MCTS`` at once, and its stub follows by running this.

    python python/tests/settings_stub.py          # exit 1 if the stub is stale
    python python/tests/settings_stub.py --write  # rewrite the generated parts

``python/tests/test_package.py`` runs the check.
"""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import zertz_engine
from zertz import _zertz as native

#: The stub of ``match`` and ``selfplay``: the engine module's (their settings are described by
#: the environment's).
STUB = Path(zertz_engine.__file__).parent / "_engine.pyi"
#: The stub of ``MCTS``: the environment module's.
CORE_STUB = Path(native.__file__).parent / "_zertz.pyi"
BEGIN = "# <generated: {name}>"
END = "# </generated: {name}>"


def parameter_lines(
    settings: Sequence[dict[str, Any]], shown: bool = True, indent: int = 4
) -> list[str]:
    """One keyword-only parameter per setting: name, annotation, default (``...`` unless
    ``shown``: where a config's value is the default), ``indent`` spaces in."""
    return [
        f"{' ' * indent}{s['name']}: {s['type']} = {repr(s['default']) if shown else '...'},"
        for s in settings
    ]


def doc_lines(settings: Sequence[dict[str, Any]]) -> list[str]:
    """One paragraph per setting for the docstring: name, default, documentation."""
    lines: list[str] = []
    for s in settings:
        text = f"``{s['name']}`` (default ``{s['default']!r}``): {s['doc']}"
        lines += textwrap.wrap(text, 96, initial_indent="    - ", subsequent_indent="      ")
    return lines


def parts() -> dict[Path, dict[str, list[str]]]:
    """The generated parts of each stub, by name."""
    matches, selfplay = native.match_settings(), native.selfplay_settings()
    mcts = native.mcts_settings()
    return {
        STUB: {
            "match keywords": parameter_lines(matches),
            "match settings": doc_lines(matches),
            "selfplay keywords": parameter_lines(selfplay, shown=False),
            "selfplay settings": doc_lines(selfplay),
        },
        CORE_STUB: {
            "mcts keywords": parameter_lines(mcts, indent=8),
            "mcts settings": doc_lines(mcts),
        },
    }


def render(text: str, generated: dict[str, list[str]], stub: Path) -> str:
    """``text`` with each generated part replaced (its markers kept)."""
    for name, lines in generated.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        pattern = re.compile(
            rf"^(?P<indent>[ \t]*){re.escape(begin)}\n.*?^[ \t]*{re.escape(end)}$",
            re.MULTILINE | re.DOTALL,
        )
        match = pattern.search(text)
        if match is None:
            raise ValueError(f"{stub}: no {begin!r} … {end!r} part")
        indent = match["indent"]
        body = "\n".join([f"{indent}{begin}", *lines, f"{indent}{end}"])
        text = text[: match.start()] + body + text[match.end() :]
    return text


def main(argv: Sequence[str]) -> int:
    stale = 0
    for stub, generated in parts().items():
        text = stub.read_text()
        fresh = render(text, generated, stub)
        if fresh == text:
            continue
        if "--write" in argv:
            stub.write_text(fresh)
            print(f"settings_stub: rewrote {stub}")
        else:
            print(f"settings_stub: {stub} is stale: run python/tests/settings_stub.py --write")
            stale = 1
    return stale


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
