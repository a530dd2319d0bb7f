"""The engine of ``zertz`` with exported networks (``zertz[train]``, built from a checkout as
docs/rl-libraries.md says): matches and self-play with ``nn:`` players, the model format and
the built-in network. ``zertz.match``, ``zertz.selfplay`` and the network names of ``zertz``
come from here, imported on first use, so that ``import zertz`` needs numpy alone.

>>> import zertz_engine
>>> zertz_engine.BUILTIN_MODEL
'builtin'
"""

# The native module links libtorch (it runs exported networks in-process): torch loads it first,
# so that the process holds one libtorch, the installed torch's.
from typing import Any

import torch  # noqa: F401  (imported for its libtorch)

from zertz_engine._engine import (
    AOTI_MODEL_PREFIX,
    ARCHITECTURE,
    BUILTIN_MODEL,
    CODE_FORMAT_VERSION,
    MAX_HEADER_BYTES,
    MAX_PARAMETERS,
    MIN_SIMULATIONS,
    MODEL_FORMAT,
    MODEL_FORMAT_VERSION,
    NETWORK_PRESETS,
    NETWORK_SIZE_LIMITS,
    PRECISIONS,
    Bot,
    __version__,
    bench_player,
    builtin_model,
    check_device,
    compiled_network_path,
    decode_network,
    devices,
    encode_network,
    match,
    network_weights,
    read_network,
    selfplay,
)

__all__ = [
    "AOTI_MODEL_PREFIX",
    "ARCHITECTURE",
    "BUILTIN_MODEL",
    "CODE_FORMAT_VERSION",
    "MAX_HEADER_BYTES",
    "MAX_PARAMETERS",
    "MIN_SIMULATIONS",
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "NETWORK_PRESETS",
    "NETWORK_SIZE_LIMITS",
    "PRECISIONS",
    "Bot",
    "__version__",
    "bench_player",
    "builtin_model",
    "check_device",
    "compiled_network_path",
    "decode_network",
    "devices",
    "encode_network",
    "match",
    "network_weights",
    "read_network",
    "selfplay",
]


def __getattr__(name: str) -> Any:
    if name == "Player":
        import warnings

        warnings.warn(
            "zertz_engine.Player is deprecated and goes in the next release: use "
            "zertz_engine.Bot (a player is a side, P0 or P1; a bot plays one)",
            DeprecationWarning,
            stacklevel=2,
        )
        return Bot
    raise AttributeError(f"module 'zertz_engine' has no attribute {name!r}")
