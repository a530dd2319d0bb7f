#!/usr/bin/env bash
# The whole test suite. First scripts/setup-python.sh makes .venv (pinned packages from PyPI, torch
# among them: the model crate links its libtorch) and builds the zertz package into it, while
# scripts/setup-browser.sh installs Debian's chromium when it is missing (root); then the zertz
# wheel is installed without torch into a fresh virtual environment, with the environment's
# tests there (scripts/test-core-wheel.sh). Then formatting, lints and every Rust test (unit,
# property, perft data, the 300 boardspace records, exported models, the zertz program), built
# once in profile ci (release without fat LTO, with debug assertions) by clippy's driver, which
# lints them in the same build; then the Python checks: pytest (unit tests, doctests, training
# runs, the notebook, the web board in chromium) and, beside it, mypy's stubtest and --strict
# check, ruff, and scripts/check-structure.py (no import circle, no long file without its
# reason).
# Needs the Rust toolchain and Python >= 3.11 with pip.
#
# Records are read from $ZERTZ_GAMES, by default ../shared/games beside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

export ZERTZ_GAMES="${ZERTZ_GAMES:-$(cd .. && pwd)/shared/games}"
if [ ! -f "$ZERTZ_GAMES/expected.json" ]; then
    echo "error: no game records at $ZERTZ_GAMES (set ZERTZ_GAMES to the shared/games folder)" >&2
    exit 1
fi

# The release builds of the tests use the ci profile (release without fat LTO: the same code,
# compiled in a fraction of the time); see Cargo.toml.
export ZERTZ_PROFILE=ci
# One build from scratch: incremental state would only take disk (1.3 GB in CI, whose disk once
# filled).
export CARGO_INCREMENTAL=0
# Every build below compiles the workspace's crates with clippy's driver (scripts/clippy-rustc:
# rustc with clippy's lints, warnings as errors), so that the Python modules' builds, the
# torch-free wheel's and the test build share them: each crate is linted and compiled once.
export RUSTC_WORKSPACE_WRAPPER="$(pwd)/scripts/clippy-rustc"

# Chromium comes from Debian's packages (network and disk, while the builds take the CPUs); it is
# waited for before pytest.
mkdir -p target
./scripts/setup-browser.sh > target/setup-browser.log 2>&1 &
browser=$!
echo "== python: scripts/setup-python.sh"
./scripts/setup-python.sh
. scripts/env.sh
# Here, while the modules' build is the last one: the torch-free wheel shares it (the test build
# compiles pyo3 for tests that link libpython, not for an extension module).
echo "== the environment without torch: scripts/test-core-wheel.sh"
./scripts/test-core-wheel.sh

echo "== cargo fmt --check"
cargo fmt --all --check
# Clippy and the test build are one build, in profile ci, whose dependencies and workspace crates
# the Python modules above have already compiled (python/common turns on the features that the
# whole workspace's build does, so that they match): every target of every crate, as `cargo
# clippy --workspace --all-targets -- -D warnings` checks them. The same build makes the zertz
# program (target/ci/zertz), which the Python tests compare the in-process engine with.
# pyo3 is configured as maturin configured it for the modules (an extension module, from the
# interpreter file maturin wrote), so that pyo3 and the crates on it are not compiled again: no
# test links them (the Python crates are tested from Python).
pyo3_config=(target/maturin/pyo3-config-*.txt)
if [ -f "${pyo3_config[0]}" ]; then
    export PYO3_BUILD_EXTENSION_MODULE=1 PYO3_CONFIG_FILE="$(pwd)/${pyo3_config[0]}"
fi
echo "== cargo clippy and the test build (cargo test --no-run --all-targets, profile ci, compiled by clippy-driver)"
cargo test --workspace --all-targets --locked --profile ci --no-run
echo "== cargo test (profile ci: optimised, with debug assertions and overflow checks)"
cargo test --workspace --locked --profile ci
export ZERTZ_BIN="$(pwd)/target/ci/zertz"
echo "== browser: scripts/setup-browser.sh (chromium for the web board's tests)"
if ! wait "$browser"; then
    cat target/setup-browser.log >&2
    exit 1
fi
cat target/setup-browser.log

py="$(pwd)/.venv/bin/python"
lints="$(pwd)/target/lints.log"
(
    cd python
    # The lints run beside pytest (one process): pytest's two processes leave part of the two
    # cores idle, and both together end sooner than one after the other (BENCHMARKS.md). Their
    # output follows pytest's; either failing fails the command.
    (
        echo "== stubtest zertz zertz_engine"
        "$py" -m mypy.stubtest --allowlist stubtest-allowlist.txt zertz zertz_engine
        echo "== mypy --strict python/zertz python/engine/zertz_engine python/tests examples"
        "$py" -m mypy --strict zertz tests engine/zertz_engine ../examples
        echo "== ruff (python/, examples/, scripts/)"
        "$py" -m ruff check --quiet . ../examples ../scripts
        "$py" -m ruff format --check --quiet . ../examples ../scripts
        echo "== the tree's structure: scripts/check-structure.py (import circles, long files)"
        "$py" ../scripts/check-structure.py
    ) > "$lints" 2>&1 &
    linting=$!
    # Two processes, one per core: many tests wait on programs, clusters and browsers
    # (BENCHMARKS.md has the figures); the Ray tests stay together, on one cluster.
    echo "== pytest (python/tests, doctests; two processes)"
    status=0
    "$py" -m pytest -q -n 2 --dist loadgroup || status=$?
    wait "$linting" || status=1
    cat "$lints"
    exit "$status"
)
