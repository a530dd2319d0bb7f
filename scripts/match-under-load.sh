#!/usr/bin/env bash
# A match at equal time per move on a quiet machine and on a busy one: the same games
# (same seed, paired openings), first with nothing else running, then with one busy-looping
# process per core, started here and stopped after (and on any exit). Each game is played on a
# core of its own (one search thread per network player), so that "busy" halves each side's CPU.
#
#   ZERTZ_BIN=target/ci/zertz scripts/match-under-load.sh                # nn:builtin, alphabeta
#   scripts/match-under-load.sh nn:builtin alphabeta 200 1               # A, B, games, seconds
#
# Prints one summary line of `zertz match --json` per load: the score of A with its 95% interval
# and each side's seconds, CPU seconds and work per move. BENCHMARKS.md ("Quiet and busy") has
# the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
a=${1:-nn:builtin}
b=${2:-alphabeta}
games=${3:-200}
move_time=${4:-1}
zertz=${ZERTZ_BIN:-target/release/zertz}
[[ -x $zertz ]] || { echo "match-under-load: build $zertz first (cargo build --release)" >&2; exit 2; }
# shellcheck source=scripts/busy-cores.sh
. scripts/busy-cores.sh
describe_cpu

for load in quiet busy; do
    if [[ $load == busy ]]; then start_busy; fi
    echo "== $load"
    "$zertz" match --player "$a" --player "$b" --games "$games" --move-time "$move_time" \
        --opening-actions 2 --threads "$cores" --search-threads 1 --seed 0 --device cpu --json
    stop_busy
done
