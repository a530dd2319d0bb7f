"""The package's optional half: the engine with exported networks (``zertz_engine``, installed
with ``zertz[train]``, which links libtorch), imported on first use, and the one wording of the
error where it (or torch) is missing. Every module of the package that needs the engine asks
here (``zertz`` re-exports these names)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: What every such error says after the name of what needs the engine: zertz[train] is not on
#: PyPI, and the engine (python/engine, zertz-engine) builds from a checkout against the
#: installed torch (its libtorch, found through LIBTORCH_USE_PYTORCH=1, hence no build
#: isolation). docs/rl-libraries.md ("Installing from a checkout") gives the same commands.
INSTALL_ENGINE = (
    "needs the engine, which links torch, and it is not installed: zertz[train] from a checkout: "
    "pip install torch==2.11.0 maturin==1.16.0, then LIBTORCH_USE_PYTORCH=1 pip install "
    "--no-build-isolation './python[train]' ./python/engine (docs/rl-libraries.md; "
    "scripts/setup-python.sh does it in .venv)"
)


def missing_engine(what: str, error: ImportError) -> ImportError | None:
    """Where ``error`` is the import of the engine (``zertz_engine``) or torch failing, an
    ImportError saying, in one line, that ``what`` needs them and what to install (else None):
    the one wording of every such error (``zertz.match``, ``zertz.train``, ``zertz.export``,
    ``zertz.training``, ``python -m zertz``). It keeps the missing module's ``name``, so that a
    caller further out may name its own ``what`` instead."""
    if (error.name or "").partition(".")[0] not in ("zertz_engine", "torch"):
        return None
    return ImportError(f"{what} {INSTALL_ENGINE}", name=error.name)


@contextmanager
def needs_engine(what: str) -> Iterator[None]:
    """The block's import of the engine or torch failing raises :func:`missing_engine`'s
    ImportError."""
    try:
        yield
    except ImportError as e:
        worded = missing_engine(what, e)
        if worded is None:
            raise
        raise worded from e


def engine() -> Any:
    """The engine module ``zertz_engine`` (exported networks, matches, self-play), imported on
    first use; ImportError saying what to install where it is missing."""
    with needs_engine("zertz.match, zertz.selfplay or a network"):
        import zertz_engine
    return zertz_engine
