# Source this (`. scripts/env.sh`) before cargo commands by hand: the model crate links the libtorch
# of the PyTorch installed in .venv (tch's LIBTORCH_USE_PYTORCH), found through .venv's python.
# scripts/setup-python.sh creates .venv; scripts/test.sh and scripts/main.sh source this file.
# (bash: BASH_SOURCE; zsh: $0 is the sourced file.)
_zertz_root="$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)"
export VIRTUAL_ENV="$_zertz_root/.venv"
export PATH="$VIRTUAL_ENV/bin:$PATH"
export LIBTORCH_USE_PYTORCH=1
unset _zertz_root
