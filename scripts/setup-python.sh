#!/usr/bin/env bash
# Sets up the Python side: the virtual environment .venv at the repository root (created when
# missing), the pinned packages of python/requirements-dev.txt in it (by uv, which pip installs
# first: maturin, numpy, pytest, mypy, ruff; torch 2.11.0, whose libtorch the model crate links;
# matplotlib, tensorboard; nbclient and ipykernel for the notebook test), and the packages built
# in release mode (`maturin develop --release`): zertz from python/ (the environment, numpy
# alone) and zertz-engine from python/engine/ (exported networks, matches, self-play: libtorch).
# Safe to run again: it installs only what changed, and cargo rebuilds only what changed.
#
# Needs Python >= 3.11 with pip and venv, the Rust toolchain, and PyPI. $PYTHON picks the
# interpreter that creates .venv (default python3).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv"
requirements="$root/python/requirements-dev.txt"
stamp="$venv/.zertz-requirements"

if [ ! -x "$venv/bin/python" ]; then
    python=${PYTHON:-python3}
    if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        echo "error: $python is not Python >= 3.11 (set PYTHON to one)" >&2
        exit 1
    fi
    echo "setup-python: creating $venv with $("$python" --version 2>&1)"
    "$python" -m venv "$venv"
fi

if ! cmp -s "$requirements" "$stamp"; then
    # uv installs them (its pin is requirements-dev.txt's): it downloads and unpacks the 5 GB
    # of torch and its CUDA libraries in parallel, several times faster than pip (BENCHMARKS.md).
    uv=$(grep '^uv==' "$requirements")
    echo "setup-python: installing $uv with pip, then with it $(grep -v -e '^#' -e '^uv==' "$requirements" | tr '\n' ' ')"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$uv"
    # --compile-bytecode: the packages' .pyc files are written once, here. Python writes them
    # at first import only where it may: where PYTHONDONTWRITEBYTECODE is set (it is on this
    # project's machines), every process that imports torch, and every Ray worker, compiled
    # their sources again (docs/benchmarks-history.md, "the packages' bytecode written at install").
    "$venv/bin/uv" pip install --quiet --compile-bytecode --python "$venv/bin/python" -r "$requirements"
    cp "$requirements" "$stamp"
fi

echo "setup-python: building and installing zertz and zertz-engine (maturin develop, profile ${ZERTZ_PROFILE:-release})"
# maturin installs into the environment named by VIRTUAL_ENV. The environment's module
# (zertz._zertz) links no libtorch; the engine's (zertz_engine._engine) links the libtorch of
# .venv's torch (tch's LIBTORCH_USE_PYTORCH, found through .venv's python).
# $ZERTZ_PROFILE picks the cargo profile (default release; the test command's is ci).
profile=${ZERTZ_PROFILE:-release}
develop() {
    VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" LIBTORCH_USE_PYTORCH=1 \
        "$venv/bin/maturin" develop --profile "$profile" --locked --quiet \
        --manifest-path "$root/$1/Cargo.toml" "${@:2}"
}
# The engine's crates are compiled first, without installing the package (which needs zertz
# installed): torch-sys's C++, the longest step of the build, then runs beside the crates both
# modules share instead of alone after them. The two installs below find them compiled.
develop python/engine --skip-install
develop python
develop python/engine
"$venv/bin/python" -c 'import zertz, zertz_engine; print(f"setup-python: zertz {zertz.__version__} and its engine ready in .venv")'
