#!/usr/bin/env bash
# Issue 60's speed check: the built-in network as a network file (this tree's `zertz`) against
# the same network as the TorchScript file of an older `zertz` (built at a commit before
# network files), side by side in one run: bare inference at batch 1 and 256 and the network's
# player, each measured `REPS` times, the two programs taking turns so that any drift of the
# machine falls on both.
#
#   git worktree add /tmp/old 7f09cb0 && (cd /tmp/old && cargo build --release --bin zertz)
#   cargo build --release --bin zertz
#   scripts/bench-network-files.sh /tmp/old/target/release/zertz [REPS]
#
# BENCHMARKS.md ("Network files") has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?the zertz program of a commit before network files}
reps=${2:-3}
new=${ZERTZ_BIN:-target/release/zertz}
for z in "$old" "$new"; do
    [[ -x $z ]] || { echo "bench-network-files: build $z first (cargo build --release)" >&2; exit 2; }
done
# shellcheck source=scripts/busy-cores.sh
. scripts/busy-cores.sh
describe_cpu
for rep in $(seq "$reps"); do
    for side in old new; do
        z=$old
        [[ $side == new ]] && z=$new
        echo "== $side ($z), round $rep: bench inference, batch 1 and 256"
        "$z" bench inference --model builtin --device cpu --batch 1,256 --seconds 2
        echo "== $side, round $rep: bench player nn:builtin, 37 rings"
        "$z" bench player nn:builtin --board 37 --move-time 1
    done
done
