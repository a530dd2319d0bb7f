#!/usr/bin/env bash
# The main job: set everything up (scripts/setup-python.sh: .venv with the pinned packages, torch
# among them, and the zertz package; then the zertz program, linked to .venv's libtorch, to play
# against the result), train a network with configs/train/human.toml (pretraining on the
# boardspace.net archive of ../shared/records, then self-play; self-play and matches run in the
# engine inside the training process), print the final evaluation against the baselines and how
# to play against the result. Without the archive it trains from nothing with
# configs/train/default.toml. BENCHMARKS.md has the figures of both.
#
#   scripts/main.sh [CONFIG [RUN_FOLDER]]     defaults: configs/train/human.toml runs/human
#
# Run it again to resume an interrupted run (or to print the table of a finished one).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup-python.sh
. scripts/env.sh
echo "== building the zertz program (cargo build --release), to play against the network"
cargo build --release --locked --bin zertz
records=../shared/records/boardspace-zertz.tar.xz
if [ -n "${1:-}" ]; then
    config="$1"
elif [ -f "$records" ]; then
    config=configs/train/human.toml
else
    echo "== no $records: training from nothing (configs/train/default.toml)"
    config=configs/train/default.toml
fi
run="${2:-runs/$(basename "$config" .toml)}"
echo "== training: python -m zertz train --config $config --run $run"
exec .venv/bin/python -m zertz train --config "$config" --run "$run"
