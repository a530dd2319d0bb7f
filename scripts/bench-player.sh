#!/usr/bin/env bash
# The network's player on a quiet machine and on a busy one (issue 46): the bare network's
# evaluations per second and per CPU-second at batch 1, 8 and 64 on one thread (the native pass
# of small batches, and libtorch alone at 1 and 8 to compare), and a
# player's simulations per second and per CPU-second on the fixed positions of `zertz bench
# player` with 1 search thread and with one per core. "Busy" is one busy-looping process per
# core, started here before the measurements and stopped after them (and on any exit).
#
#   scripts/bench-player.sh                          # nn:builtin on 37 rings
#   .venv/bin/python -m zertz random-model /tmp/tiny.safetensors --network tiny --boards 37,61
#   ZERTZ_BIN=target/ci/zertz scripts/bench-player.sh nn:/tmp/tiny.safetensors 37,61 0.5
#
# Arguments: the player (default nn:builtin), the boards (default 37, the built-in network's),
# the seconds of each search (default 1). BENCHMARKS.md ("The network player on a
# CPU") has the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-nn:builtin}
boards=${2:-37}
move_time=${3:-1}
zertz=${ZERTZ_BIN:-target/release/zertz}
[[ -x $zertz ]] || { echo "bench-player: build $zertz first (cargo build --release)" >&2; exit 2; }
# shellcheck source=scripts/busy-cores.sh
. scripts/busy-cores.sh
describe_cpu

for load in quiet busy; do
    if [[ $load == busy ]]; then start_busy; fi
    echo
    echo "== $load: $(if [[ $load == busy ]]; then echo "a busy process on each of the $cores cores"; else echo "nothing else running"; fi)"
    if [[ $spec == nn:* ]]; then
        model_file=${spec#nn:}
        model_file=${model_file%%:*}
        for board in ${boards//,/ }; do
            "$zertz" bench inference --model "$model_file" --board "$board" --device cpu \
                --batch 1,8,64 --seconds 2
            # The same passes through libtorch alone, without the native pass of small batches.
            "$zertz" bench inference --model "$model_file" --board "$board" --device cpu \
                --batch 1,8 --seconds 2 --libtorch
        done
    fi
    "$zertz" bench player "$spec" --board "$boards" --search-threads "1,$cores" \
        --move-time "$move_time" --searches 2 --device cpu
    stop_busy
done
