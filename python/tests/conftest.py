"""Shared fixtures: the boardspace records folder, the zertz program, random playouts and network
files written by safetensors' reference implementation."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import zertz

if TYPE_CHECKING:
    import torch

REPO = Path(__file__).resolve().parents[2]

#: A ``cmd:`` opponent whose program answers ``name`` (and every other command with ``=``).
ANSWERS_NAME = (
    'cmd:sh -c "while read -r line; do case \\"$line\\" in '
    "name) printf '= fake\\n\\n';; quit) exit;; *) printf '=\\n\\n';; esac; done\""
)
#: A ``cmd:`` opponent whose program exists but ends before it answers ``name``.
ENDS_AT_ONCE = 'cmd:/bin/sh -c "exit 0"'

# The Ctrl-C tests send SIGINT to this process and to the programs it starts. A shell that runs the
# suite as a background job without job control (`(./scripts/test.sh &)` in a script) starts it
# with SIGINT ignored; Python then leaves it ignored, no KeyboardInterrupt ever comes, and the
# programs started from here inherit the ignoring. Python's own handler back: those programs then
# start with the default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Stable-Baselines3 makes a log folder for every ``learn`` (``SB3-DATE`` in the system's
    temporary folder, empty unless asked to log): under pytest's temporary folder instead, for
    the examples run as programs too, so that the suite leaves nothing behind."""
    os.environ.setdefault("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3")))


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


#: The built-in network as an older zertz shipped it: TorchScript, a program (the engine plays it
#: only when trusted; ``zertz.exported.convert_network`` converts it).
BUILTIN_V1 = REPO / "model" / "tests" / "data" / "builtin-v1.pt"


def write_network_file(
    path: Path,
    tensors: Mapping[str, torch.Tensor],
    metadata: Mapping[str, Any],
    *,
    sha256: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> Path:
    """Writes ``tensors`` and ``metadata`` as a network file with safetensors' reference writer
    (``safetensors.torch.save``), not the engine's: the header's ``__metadata__`` holds
    ``zertz`` (``metadata`` as JSON) and ``sha256`` (that of the tensors' bytes, unless given),
    and ``extra`` besides."""
    from safetensors.torch import save

    def header(checksum: str) -> dict[str, str]:
        return {"zertz": json.dumps(metadata), "sha256": checksum, **(extra or {})}

    tensors = {name: t.contiguous() for name, t in tensors.items()}
    if sha256 is None:
        data = save(tensors, header("0" * 64))
        start = 8 + int.from_bytes(data[:8], "little")
        sha256 = hashlib.sha256(data[start:]).hexdigest()
    path.write_bytes(save(tensors, header(sha256)))
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


def _fuzz_calls() -> dict[str, int]:
    """The figures of the fuzz (``tests/test_fuzz.py``) in this process, if it ran here."""
    fuzz = sys.modules.get("test_fuzz") or sys.modules.get("tests.test_fuzz")
    return dict(getattr(fuzz, "CALLS", {}))


#: The fuzz figures of pytest-xdist's workers (``pytest -n 2``), sent when each one ends.
WORKERS_FUZZ: Counter[str] = Counter()


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: its figures go to the main process
        workeroutput["fuzz_calls"] = _fuzz_calls()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    WORKERS_FUZZ.update(getattr(node, "workeroutput", {}).get("fuzz_calls", {}))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The figures of the fuzz when it ran (in this process or in xdist's workers): calls made,
    and how many raised, by exception type."""
    calls = WORKERS_FUZZ + Counter(_fuzz_calls())
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


def run_example(script: str, *args: str, timeout: float = 600) -> dict[str, Any]:
    """Runs ``examples/SCRIPT`` with ``args`` and ``--json`` in this Python; the JSON line it
    printed last (a failure shows the end of its stderr)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / script), *args, "--json"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in reversed(done.stdout.splitlines()) if x.startswith("{"))
    result: dict[str, Any] = json.loads(line)
    return result
