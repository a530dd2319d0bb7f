"""Shared fixtures: the boardspace records folder, the zertz program and random playouts."""

from __future__ import annotations

import os
import random
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import zertz

REPO = Path(__file__).resolve().parents[2]

# The Ctrl-C tests send SIGINT to this process and to the programs it starts. A shell that runs the
# suite as a background job without job control (`(./scripts/test.sh &)` in a script) starts it
# with SIGINT ignored; Python then leaves it ignored, no KeyboardInterrupt ever comes, and the
# programs started from here inherit the ignoring. Python's own handler back: those programs then
# start with the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def games_dir() -> Path:
    """The folder of boardspace records: $ZERTZ_GAMES, else ../shared/games beside the repo."""
    return Path(os.environ.get("ZERTZ_GAMES", REPO.parent / "shared" / "games"))


def zertz_bin() -> Path:
    """The zertz program: ``$ZERTZ_BIN``, else the repository's ``target/release/zertz``."""
    if env := os.environ.get("ZERTZ_BIN"):
        return Path(env)
    return REPO / "target" / "release" / "zertz"


@pytest.fixture(scope="module")
def program() -> Path:
    """The zertz program (``$ZERTZ_BIN`` or target/release/zertz), for the tests of the
    program itself."""
    path = zertz_bin()
    if not path.is_file():
        pytest.skip(f"no zertz program at {path} (set ZERTZ_BIN)")
    return path


@pytest.fixture(scope="session")
def games() -> Path:
    folder = games_dir()
    if not (folder / "expected.json").is_file():
        pytest.skip(f"no game records at {folder} (set ZERTZ_GAMES)")
    return folder


def playout(game: zertz.Game, rng: random.Random, max_actions: int = 1000) -> Iterator[zertz.Game]:
    """Plays random legal single actions until the game ends; yields the game before each."""
    for _ in range(max_actions):
        if game.is_over:
            return
        yield game
        indices = game.legal_action_indices()
        game.play(int(indices[rng.randrange(len(indices))]))
    raise AssertionError("the game did not end")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The figures of the fuzz (``tests/test_fuzz.py``) when it ran: calls made, and how many
    raised, by exception type."""
    fuzz = sys.modules.get("test_fuzz") or sys.modules.get("tests.test_fuzz")
    calls: dict[str, int] = getattr(fuzz, "CALLS", {})
    if calls:
        raised = ", ".join(f"{k} {v}" for k, v in sorted(calls.items()) if k != "calls")
        terminalreporter.write_line(f"fuzz: {calls['calls']} calls ({raised or 'none raised'})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``engine`` are skipped where the engine (``zertz_engine``, with torch) is
    not installed: the environment's own tests run without it (scripts/test-core-wheel.sh)."""
    try:
        import zertz_engine  # noqa: F401
    except ImportError:
        skip = pytest.mark.skip(reason="the engine (zertz_engine, torch) is not installed")
        for item in items:
            if "engine" in item.keywords:
                item.add_marker(skip)
