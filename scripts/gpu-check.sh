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
#   scripts/gpu-check.sh MODEL.safetensors SELFPLAY.toml [what...]     there
#
# what: checks (the model tests, model info, a tiny training run on CUDA), inference (the bare
# network: tiny, small and medium, network files in fp32 and bf16 and AOTInductor packages compiled
# there, with and without CUDA graphs, at BATCHES; the JSON lines go to $OUT/inference.jsonl when
# OUT is set), profile (where a bf16 forward pass of each size spends its time, by kernel),
# selfplay (positions per second and the network's share on the GPU and on the CPU cores;
# DEVICES, GAMES, GAMES_PER_WORKER (default 64) and EXTRA (more options, such as --cuda-graphs
# off: graphs are on by default where a network can use them)
# choose them),
# matches (the network on the GPU against rollout MCTS), train (the default training run),
# tests (the model tests alone; SKIP_TESTS: a pattern of test binaries to leave out),
# train-gpu (configs/train/gpu.toml carried on from model/gpu/checkpoint.pt, when there is one,
# for the minutes left before the deadline; its checkpoint, network and metrics go to $OUT).
# Default: checks selfplay matches train.
#
# slot: issue 47's run of one GPU slot, within SLOT_SECONDS (default 540) of the start: tests
# (without the AOTInductor ones, which compile for minutes), inference (tiny, small, medium in
# bf16 with CUDA graphs, one and four inference threads, batches 1,024 and 4,096), selfplay (a
# random small network on the GPU, 2,048 games, 128 a worker, with CUDA graphs, the GPU's busy
# share sampled by nvidia-smi) and train-gpu for the rest:
#
#   OUT=... scripts/gpu-check.sh /tmp/gpu-check/small.safetensors configs/selfplay.toml slot
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
deadline=$(($(date +%s) + ${SLOT_SECONDS:-540}))
if [[ " $what " == *" slot "* ]]; then
    what=${what//slot/tests inference selfplay train-gpu}
    export SKIP_TESTS=${SKIP_TESTS:-aoti} AOTI=${AOTI:-0} BATCHES=${BATCHES:-1024,4096}
    export SECONDS_PER=${SECONDS_PER:-2} DEVICES=${DEVICES:-cuda} GAMES=${GAMES:-2048}
    export GAMES_PER_WORKER=${GAMES_PER_WORKER:-128} EXTRA=${EXTRA:---cuda-graphs on}
    export RUNS=${RUNS:-"safetensors bf16 --cuda-graphs on;safetensors bf16 --cuda-graphs on --threads 4"}
fi
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
# The model crate's test binaries, one test at a time, but those whose name holds SKIP_TESTS.
model_tests() {
    for bin in "${MODEL_TESTS:-.gpu/bin}"/*; do
      if [ -n "${SKIP_TESTS:-}" ] && [[ $(basename "$bin") == *${SKIP_TESTS}* ]]; then
        step "model tests: $(basename "$bin") left out (SKIP_TESTS)"
        continue
      fi
      step "model tests: $(basename "$bin")"
      "$bin" --test-threads 1 "$@" 2>&1 | grep -vE '^$'
    done
}

step machine
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
echo "cores: $(nproc)"
"$py" -c 'import sys, torch; print(sys.version.split()[0], torch.__version__, "cuda:", torch.cuda.is_available())'
ldd "$zertz" | grep -E 'torch_cuda|c10_cuda|not found'

for w in $what; do
  case $w in
  tests) model_tests ;;
  checks)
    model_tests --nocapture
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
      step "$net: export (a network file, and an AOTInductor package for CUDA in bf16)"
      "$py" -m zertz random-model "$work/$net.safetensors" --network "$net"
      if [ "${AOTI:-1}" = 1 ]; then
        t0=$(date +%s)
        "$py" -m zertz random-model "$work/$net.pt2" --network "$net" --device cuda \
          --precision bf16 2>&1 | tail -3
        echo "compiled in $(($(date +%s) - t0)) s"
      fi
      IFS=';' read -ra runs <<<"${RUNS:-safetensors fp32 --cuda-graphs off;safetensors bf16 --cuda-graphs off;safetensors bf16 --cuda-graphs on;pt2 bf16 --trust-code;safetensors bf16 --cuda-graphs on --threads 2}"
      for run in "${runs[@]}"; do
        # shellcheck disable=SC2086
        set -- $run
        file=$work/$net.$1 precision=$2
        shift 2
        [ -f "$file" ] || continue
        # (A package is a program: this one was compiled here, above, hence --trust-code.)
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
      [ -f "$work/$net.safetensors" ] ||
        "$py" -m zertz random-model "$work/$net.safetensors" --network "$net"
      "$py" scripts/profile-inference.py "$work/$net.safetensors" --batch "${PROFILE_BATCH:-1024}"
    done
    ;;
  selfplay)
    for dev in ${DEVICES:-cuda cpu}; do
      step "self-play on $dev, $(nproc) workers, ${GAMES:-768} games ${EXTRA:-}"
      rm -rf "$work/sp-$dev"
      sed "s/^games_per_worker = .*/games_per_worker = ${GAMES_PER_WORKER:-64}/" "$selfplay" \
        >"$work/selfplay.toml"
      # The GPU's busy share: nvidia-smi's utilization (the share of each sample period with
      # a kernel running), sampled every 200 ms while the games are played.
      nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 \
        >"$work/busy-$dev.txt" 2>/dev/null &
      smi=$!
      # shellcheck disable=SC2086
      "$zertz" selfplay --config "$work/selfplay.toml" --model "$model" --device "$dev" \
        --threads 0 --games "${GAMES:-768}" ${EXTRA:-} --json --out "$work/sp-$dev" |
        tee -a "${OUT:-$work}/selfplay.jsonl"
      kill "$smi" 2>/dev/null
      tail -1 "${OUT:-$work}/selfplay.jsonl" | "$py" -c 'import json, sys
r = json.loads(sys.stdin.read())
busy = [float(x) for x in open(sys.argv[1]) if x.strip().replace(".", "").isdigit()]
# (The first and last samples straddle the start and the end.)
busy = busy[2:-2] or busy
print("%d games, %d evaluations in %.1f s: %.0f evaluations/s, %.1f positions a pass, "
      "network share %s, GPU busy %s over %d samples" % (r["games"], r["evaluations"],
      r["seconds"], r["evaluations"] / r["seconds"],
      r["evaluations"] / max(r.get("network_batches") or 0, 1), r.get("network_share"),
      "%.0f%%" % (sum(busy) / len(busy)) if busy else "?", len(busy)))' "$work/busy-$dev.txt"
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
  train-gpu)
    left=$((deadline - $(date +%s) - ${MARGIN:-45}))
    config=${GPU_CONFIG:-configs/train/gpu.toml}
    step "$config for $left s"
    rm -rf "$work/gpu"
    carry=()
    if [ -f model/gpu/checkpoint.pt ]; then
      carry=(--from model/gpu/checkpoint.pt)
      echo "carried on from model/gpu/checkpoint.pt"
    fi
    minutes=$("$py" -c "print(max($left, 60) / 60)")
    # A kill stops the run between two of its steps, keeping the last iteration's checkpoint.
    timeout -s TERM -k 20 "$((left + 60))" "$py" -m zertz train --config "$config" \
      --run "$work/gpu" "${carry[@]}" --minutes "$minutes" 2>&1 | grep -v '^\s*$' | tail -40
    for f in checkpoint.pt metrics.jsonl; do cp "$work/gpu/$f" "${OUT:-$work}/gpu-$f"; done
    cp "$work/gpu/models/best.safetensors" "${OUT:-$work}/gpu-network.safetensors"
    ls -la "${OUT:-$work}"
    ;;
  *) echo "unknown part: $w" >&2 ;;
  esac
done
