#!/usr/bin/env bash
# The main job: set everything up (scripts/setup-python.sh: .venv with the pinned packages, torch
# among them, and the zertz package; then the zertz program, linked to .venv's libtorch, to play
# against the result), train a network from nothing with configs/train/default.toml (self-play and
# matches run in the engine inside the training process), print the final evaluation against the
# baselines and how to play against the result. Measured from a
# fresh clone on two cores: 24 minutes in all (BENCHMARKS.md).
#
#   scripts/main.sh [CONFIG [RUN_FOLDER]]     defaults: configs/train/default.toml runs/default
#
# Run it again to resume an interrupted run (or to print the table of a finished one).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup-python.sh
. scripts/env.sh
echo "== building the zertz program (cargo build --release), to play against the network"
cargo build --release --locked --bin zertz
config="${1:-configs/train/default.toml}"
run="${2:-runs/$(basename "$config" .toml)}"
echo "== training: python -m zertz train --config $config --run $run"
exec .venv/bin/python -m zertz train --config "$config" --run "$run"
