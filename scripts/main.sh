#!/usr/bin/env bash
# The main job: build the zertz program and replay the sample boardspace records through the rules
# engine, printing one line per game and a summary. Pass other record files or folders to replay
# those instead.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked --bin zertz
if [ "$#" -eq 0 ]; then
    set -- "${ZERTZ_GAMES:-$(cd .. && pwd)/shared/games}"
fi
exec target/release/zertz replay "$@"
