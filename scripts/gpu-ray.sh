#!/usr/bin/env bash
# Ray on a GPU machine that reaches no network (the machines lent to development sessions), for
# the scaling figures of distributed training (docs/ray.md). Ray's wheel
# (about 80 MB) is larger than what one call to such a machine carries (64 MiB), so it travels
# in two halves, in two calls, under .gpu/ (ignored by git).
#
#   scripts/gpu-ray.sh prepare        here: the wheels of ray==2.60.0 and its dependencies for
#                                     the machine's Python (PYVER, default 3.12), split into
#                                     .gpu/ray-1 (dependencies + first half) and .gpu/ray-2
#   scripts/gpu-ray.sh keep           there, in a call that carries .gpu/ray-1 or .gpu/ray-2:
#                                     copies it to $STORE (default /tmp/zertz-ray), which stays
#                                     while the machine is held
#   scripts/gpu-ray.sh install        there, once both halves are kept: joins the wheel and
#                                     installs everything with pip --no-index
#   scripts/gpu-ray.sh bench MODEL [CONFIG] [ACTORS]
#                                     there: `python -m zertz bench-actors` on a local Ray
#                                     (default configs/train/default.toml, actors 1,4,8,15)
#
# The zertz and zertz_engine packages must be importable there (PYTHONPATH=python:python/engine,
# with the abi3 extensions that scripts/setup-python.sh builds here, python/zertz/_zertz.abi3.so
# and python/engine/zertz_engine/_engine.abi3.so).
set -euo pipefail
cd "$(dirname "$0")/.."
store=${STORE:-/tmp/zertz-ray}
py=${PYTHON:-python3}

case ${1:-} in
prepare)
    pyver=${PYVER:-3.12}
    rm -rf .gpu/ray-1 .gpu/ray-2 .gpu/wheels
    mkdir -p .gpu/ray-1 .gpu/ray-2 .gpu/wheels
    exclude=$(git rev-parse --git-path info/exclude)
    mkdir -p "$(dirname "$exclude")"
    grep -qx "/.gpu/" "$exclude" 2>/dev/null || echo "/.gpu/" >>"$exclude"
    "${PIP:-.venv/bin/pip}" download "ray==2.60.0" --python-version "$pyver" --only-binary=:all: \
        --platform manylinux2014_x86_64 -d .gpu/wheels --quiet
    ray_wheel=$(ls .gpu/wheels/ray-*.whl)
    split -n 2 -d "$ray_wheel" ".gpu/wheels/$(basename "$ray_wheel").part-"
    mv .gpu/wheels/*.part-00 .gpu/ray-1/
    mv .gpu/wheels/*.part-01 .gpu/ray-2/
    rm "$ray_wheel"
    mv .gpu/wheels/*.whl .gpu/ray-1/
    rmdir .gpu/wheels
    du -sh .gpu/ray-1 .gpu/ray-2
    ;;
keep)
    mkdir -p "$store"
    for part in .gpu/ray-1 .gpu/ray-2; do
        [ -d "$part" ] && cp -r "$part"/. "$store"/
    done
    ls "$store"
    ;;
install)
    parts=("$store"/ray-*.whl.part-*)
    if [ "${#parts[@]}" -ne 2 ]; then
        echo "error: ${#parts[@]} of the 2 halves of Ray's wheel in $store: carry .gpu/ray-1 and .gpu/ray-2 (scripts/gpu-ray.sh keep)" >&2
        exit 1
    fi
    wheel=${parts[0]%.part-*}
    cat "${parts[@]}" >"$wheel"
    "$py" -m pip install --no-index --find-links "$store" --quiet "$wheel"
    "$py" -c 'import ray; print("ray", ray.__version__)'
    ;;
bench)
    model=${2:?name a network file (.safetensors)}
    config=${3:-configs/train/default.toml}
    actors=${4:-1,4,8,15}
    PYTHONPATH=$PWD/python:$PWD/python/engine "$py" -m zertz bench-actors --config "$config" --model "$model" \
        --actors "$actors" --seconds "${SECONDS_PER_COUNT:-45}" --json
    ;;
*)
    sed -n '2,21p' "$0"
    exit 2
    ;;
esac
