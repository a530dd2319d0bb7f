"""The stub's keywords of the engine's settings types, generated from the engine's own
description of them (``_zertz.match_settings()``, ``_zertz.selfplay_settings()``): a setting
added in Rust is a keyword of ``zertz.match`` or ``zertz.selfplay`` at once, and its stub
follows by running this.

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
BEGIN = "# <generated: {name}>"
END = "# </generated: {name}>"


def parameter_lines(settings: Sequence[dict[str, Any]], shown: bool = True) -> list[str]:
    """One keyword-only parameter per setting: name, annotation, default (``...`` unless
    ``shown``: where a config's value is the default)."""
    return [
        f"    {s['name']}: {s['type']} = {repr(s['default']) if shown else '...'},"
        for s in settings
    ]


def doc_lines(settings: Sequence[dict[str, Any]]) -> list[str]:
    """One paragraph per setting for the docstring: name, default, documentation."""
    lines: list[str] = []
    for s in settings:
        text = f"``{s['name']}`` (default ``{s['default']!r}``): {s['doc']}"
        lines += textwrap.wrap(text, 96, initial_indent="    - ", subsequent_indent="      ")
    return lines


def parts() -> dict[str, list[str]]:
    """The generated parts of the stub, by name."""
    matches, selfplay = native.match_settings(), native.selfplay_settings()
    return {
        "match keywords": parameter_lines(matches),
        "match settings": doc_lines(matches),
        "selfplay keywords": parameter_lines(selfplay, shown=False),
        "selfplay settings": doc_lines(selfplay),
    }


def render(text: str, generated: dict[str, list[str]]) -> str:
    """``text`` with each generated part replaced (its markers kept)."""
    for name, lines in generated.items():
        begin, end = BEGIN.format(name=name), END.format(name=name)
        pattern = re.compile(
            rf"^(?P<indent>[ \t]*){re.escape(begin)}\n.*?^[ \t]*{re.escape(end)}$",
            re.MULTILINE | re.DOTALL,
        )
        match = pattern.search(text)
        if match is None:
            raise ValueError(f"{STUB}: no {begin!r} … {end!r} part")
        indent = match["indent"]
        body = "\n".join([f"{indent}{begin}", *lines, f"{indent}{end}"])
        text = text[: match.start()] + body + text[match.end() :]
    return text


def main(argv: Sequence[str]) -> int:
    text = STUB.read_text()
    fresh = render(text, parts())
    if fresh == text:
        return 0
    if "--write" in argv:
        STUB.write_text(fresh)
        print(f"settings_stub: rewrote {STUB}")
        return 0
    print(f"settings_stub: {STUB} is stale: run python/tests/settings_stub.py --write")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
