#!/usr/bin/env bash
# The environment without torch: builds the wheel of zertz (python/: the environment, search
# with Python evaluators, records and datasets; numpy its only requirement), installs it into a
# fresh virtual environment that has no torch and no engine, and runs the environment's tests
# there (those marked `engine` are skipped; the engine's players without a network play there),
# after checking that `import zertz` imports no torch.
# Run by scripts/test.sh after scripts/setup-python.sh, whose .venv provides maturin and uv. The
# wheel is for this machine (`--auditwheel skip`: its liblzma is the system's, not copied in).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dev="$root/.venv"
work="$root/target/core-wheel"
rm -rf "$work"
mkdir -p "$work"

echo "test-core-wheel: building the zertz wheel (no libtorch)"
VIRTUAL_ENV="$dev" PATH="$dev/bin:$PATH" \
    "$dev/bin/maturin" build --profile "${ZERTZ_PROFILE:-release}" --locked --quiet --auditwheel skip \
        --manifest-path python/Cargo.toml --out "$work/dist"
wheel=$(ls "$work"/dist/zertz-*.whl)

echo "test-core-wheel: a fresh virtual environment with $(basename "$wheel")"
base=$("$dev/bin/python" -c 'import sys; print(sys._base_executable)')
"$base" -m venv "$work/venv"
py="$work/venv/bin/python"
# The test tools at the versions the project pins (requirements-dev.txt as constraints: torch is
# among them, and is not installed).
"$dev/bin/uv" pip install --quiet --python "$py" -c python/requirements-dev.txt \
    "$wheel" pytest gymnasium pettingzoo

if "$py" -m pip show --quiet torch >/dev/null 2>&1; then
    echo "error: torch got installed with the zertz wheel" >&2
    exit 1
fi
cd "$work"
"$py" -c "
import sys, zertz
assert 'torch' not in sys.modules, 'import zertz imported torch'
assert zertz.__file__.startswith('$work/venv/'), zertz.__file__
for name in ('match', 'export', 'train'):
    try:
        getattr(zertz, name)
    except ImportError as e:
        assert 'zertz[train]' in str(e), e
    else:
        raise AssertionError(f'zertz.{name} without the engine')
print('test-core-wheel: import zertz imports no torch; the engine\'s names say what to install')
"
tests="$root/python/tests"
"$py" -m pytest -q -p no:cacheprovider \
    "$tests/test_game.py" "$tests/test_vecenv.py" "$tests/test_rl_conformance.py" \
    "$tests/test_gym.py" "$tests/test_encode.py" "$tests/test_symmetry.py" \
    "$tests/test_text.py" "$tests/test_sgf.py" "$tests/test_svg.py" "$tests/test_search.py" \
    "$tests/test_rl_libraries.py"
