#!/usr/bin/env bash
# The CUDA path, checked and timed on a machine with an NVIDIA GPU and Python's torch==2.11.0 (the
# GPU machines lent to development sessions have no Rust toolchain, so the parts are built on
# another machine and brought along):
#
#   scripts/gpu-check.sh prepare    here: builds the program, the abi3 extension and the model
#                                   crate's test binaries, and copies what travels into .gpu/bin
#                                   (ignored by git): carry .gpu/bin, target/release/zertz,
#                                   python/zertz/_zertz.abi3.so and
#                                   python/engine/zertz_engine/_engine.abi3.so
#
#   scripts/gpu-check.sh MODEL.pt SELFPLAY.toml [what...]     there
#
# what: checks (the model tests, model info, a tiny training run on CUDA), inference (the bare
# network: tiny, small and medium, TorchScript in fp32 and bf16 and AOTInductor packages compiled
# there, with and without CUDA graphs, at BATCHES; the JSON lines go to $OUT/inference.jsonl when
# OUT is set), profile (where a bf16 forward pass of each size spends its time, by kernel),
# selfplay (positions per second and the network's share on the GPU and on the CPU cores;
# DEVICES, GAMES, GAMES_PER_WORKER (default 64) and EXTRA (more options, such as --cuda-graphs)
# choose them),
# matches (the network on the GPU against rollout MCTS), train (the default training run).
# Default: checks selfplay matches train.
set -uo pipefail
if [ "${1:-}" = prepare ]; then
    set -e
    cd "$(dirname "$0")/.."
    # shellcheck source=scripts/env.sh
    . scripts/env.sh
    cargo build --release --bin zertz
    ./scripts/setup-python.sh >/dev/null
    rm -rf .gpu/bin && mkdir -p .gpu/bin
    exclude=$(git rev-parse --git-path info/exclude)
    grep -qx "/.gpu/" "$exclude" 2>/dev/null || echo "/.gpu/" >>"$exclude"
    cargo test --release -p zertz-model --no-run --message-format=json 2>/dev/null |
        "${PYTHON:-python3}" -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])' | while read -r bin; do cp "$bin" ".gpu/bin/$(basename "${bin%-*}")"; done
    ls -la .gpu/bin
    du -sh .gpu/bin target/release/zertz python/zertz/_zertz.abi3.so \
        python/engine/zertz_engine/_engine.abi3.so
    exit 0
fi
model=$1
selfplay=$2
shift 2
what=${*:-checks selfplay matches train}
py=${PYTHON:-python3}
torch_lib=$("$py" -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
# The program's run path names the torch of the machine that built it; here it is this one.
export LD_LIBRARY_PATH=$torch_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONPATH=$PWD/python:$PWD/python/engine ZERTZ_PYTHON=$py ZERTZ_BIN=$PWD/target/release/zertz
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
    for bin in "${MODEL_TESTS:-.gpu/bin}"/*; do
      step "model tests: $(basename "$bin")"
      "$bin" --test-threads 1 --nocapture 2>&1 | grep -vE '^$'
    done
    step model info
    "$zertz" model info "$model"
    step tiny training on CUDA
    sed 's/^device = "cpu"/device = "cuda"/' configs/train/tiny.toml >"$work/tiny-cuda.toml"
    rm -rf "$work/tiny"
    "$py" -m zertz train --config "$work/tiny-cuda.toml" --run "$work/tiny" 2>&1 | tail -12
    ;;
  inference)
    jsonl=${OUT:-$work}/inference.jsonl
    for net in ${NETS:-tiny small medium}; do
      step "$net: export (TorchScript, and an AOTInductor package for CUDA in bf16)"
      "$py" -m zertz random-model "$work/$net.pt" --network "$net"
      t0=$(date +%s)
      "$py" -m zertz random-model "$work/$net.pt2" --network "$net" --device cuda \
        --precision bf16 2>&1 | tail -3
      echo "compiled in $(($(date +%s) - t0)) s"
      for run in "pt fp32" "pt bf16" "pt bf16 --cuda-graphs" "pt2 bf16" \
        "pt bf16 --cuda-graphs --threads 2"; do
        set -- $run
        file=$work/$net.$1 precision=$2
        shift 2
        [ -f "$file" ] || continue
        step "$net.${file##*.} $precision $*"
        "$zertz" bench inference --model "$file" --device cuda --precision "$precision" \
          --batch "${BATCHES:-64,256,1024,4096}" --seconds "${SECONDS_PER:-3}" "$@" --json |
          tee -a "$jsonl" | "$py" -c 'import json, sys
for line in sys.stdin:
    r = json.loads(line)
    r = {k: 100 * v if k.startswith(("copy", "forward")) else v for k, v in r.items()}
    print("%(batch)6d %(evaluations_per_second)12.0f/s %(ms_per_batch)9.3f ms  in %(copy_in).0f%%  net %(forward).0f%%  out %(copy_out).0f%%" % r)'
      done
    done
    ;;
  profile)
    for net in ${NETS:-tiny small medium}; do
      step "$net: a profile of bf16 forward passes"
      [ -f "$work/$net.pt" ] || "$py" -m zertz random-model "$work/$net.pt" --network "$net"
      "$py" scripts/profile-inference.py "$work/$net.pt" --batch "${PROFILE_BATCH:-1024}"
    done
    ;;
  selfplay)
    for dev in ${DEVICES:-cuda cpu}; do
      step "self-play on $dev, $(nproc) workers, ${GAMES:-768} games ${EXTRA:-}"
      rm -rf "$work/sp-$dev"
      sed "s/^games_per_worker = .*/games_per_worker = ${GAMES_PER_WORKER:-64}/" "$selfplay" \
        >"$work/selfplay.toml"
      # shellcheck disable=SC2086
      "$zertz" selfplay --config "$work/selfplay.toml" --model "$model" --device "$dev" \
        --threads 0 --games "${GAMES:-768}" ${EXTRA:-} --json --out "$work/sp-$dev"
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
