#!/usr/bin/env bash
# The CUDA path, checked and timed on a machine with an NVIDIA GPU and Python's torch==2.11.0 (the
# GPU machines lent to development sessions have no Rust toolchain, so the parts are built on
# another machine and brought along):
#   target/release/zertz            cargo build --release  (after `source scripts/env.sh`)
#   python/zertz/_zertz.abi3.so     scripts/setup-python.sh (maturin; abi3, so any Python >= 3.11)
#   $MODEL_TEST_BIN                 cargo test --release -p zertz-model --no-run (the tests/model.rs binary)
#
#   scripts/gpu-check.sh MODEL.pt SELFPLAY.toml [what...]
#
# what: checks (the model tests, model info, a tiny training run on CUDA), selfplay (positions
# per second and the network's share on the GPU and on the CPU cores;
# DEVICES and GAMES choose them), matches (the network on
# the GPU against rollout MCTS), train (the default training run). Default: all four.
set -uo pipefail
model=$1
selfplay=$2
shift 2
what=${*:-checks selfplay matches train}
py=${PYTHON:-python3}
torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
# The program's run path names the torch of the machine that built it; here it is this one.
export LD_LIBRARY_PATH=$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$PWD/python ZERTZ_PYTHON=$py ZERTZ_BIN=$PWD/target/release/zertz
export PYTHONUNBUFFERED=1
zertz=$ZERTZ_BIN
work=${WORK:-/tmp/gpu-check}
mkdir -p "$work"
step() { echo; echo "== $* ($(date +%T))"; }

step machine
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
echo "cores: $(nproc)"
"$py" -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, "cuda:", torch.cuda.is_available())'
ldd "$zertz" | grep -E 'torch_cuda|c10_cuda|not found'

for w in $what; do
  case $w in
  checks)
    step model tests
    "${MODEL_TEST_BIN:?set MODEL_TEST_BIN}" --test-threads 1 --nocapture 2>&1 | grep -vE '^$'
    step model info
    "$zertz" model info "$model"
    step tiny training on CUDA
    sed 's/^device = "cpu"/device = "cuda"/' configs/train/tiny.toml >"$work/tiny-cuda.toml"
    rm -rf "$work/tiny"
    "$py" -m zertz train --config "$work/tiny-cuda.toml" --run "$work/tiny" 2>&1 | tail -12
    ;;
  selfplay)
    for dev in ${DEVICES:-cuda cpu}; do
      step "self-play on $dev, $(nproc) workers, ${GAMES:-768} games"
      rm -rf "$work/sp-$dev"
      "$zertz" selfplay --config "$selfplay" --model "$model" --device "$dev" --threads 0 \
        --games "${GAMES:-768}" --json --out "$work/sp-$dev"
    done
    ;;
  matches)
    for sims in 800 1600; do
      step "nn:$sims on CUDA against mcts:1000, 100 games"
      "$zertz" match --player "nn:$model:$sims" --player mcts:1000 --games 100 --threads 16 --seed 18
    done
    ;;
  train)
    step "the default training run (device auto, every core)"
    rm -rf "$work/default"
    timeout "${TRAIN_TIMEOUT:-420}" "$py" -m zertz train --config configs/train/default.toml \
      --run "$work/default" 2>&1 | tail -25
    cp "$work/default/metrics.jsonl" "${OUT:-$work}/default-metrics.jsonl" 2>/dev/null
    ;;
  *) echo "unknown part: $w" >&2 ;;
  esac
done
