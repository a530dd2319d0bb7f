#!/usr/bin/env bash
# The whole test suite: formatting, lints, every Rust test (unit, property, perft data, the 300
# boardspace records, the zertz program). Needs only the Rust toolchain.
#
# Records are read from $ZERTZ_GAMES, by default ../shared/games beside the repository.
set -euo pipefail
cd "$(dirname "$0")/.."

export ZERTZ_GAMES="${ZERTZ_GAMES:-$(cd .. && pwd)/shared/games}"
if [ ! -f "$ZERTZ_GAMES/expected.json" ]; then
    echo "error: no game records at $ZERTZ_GAMES (set ZERTZ_GAMES to the shared/games folder)" >&2
    exit 1
fi

echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings
echo "== cargo test"
cargo test --workspace --locked
