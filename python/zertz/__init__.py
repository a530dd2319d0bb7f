"""ZÈRTZ rules engine for reinforcement learning, with a Rust core.

>>> import zertz
>>> game = zertz.Game()                      # 37 rings, standard marbles, P0 to move
>>> len(game.legal_moves())
1944
>>> game.play("Wd4,a1")                      # notation, or an action index
>>> game.to_play
'P1'
>>> planes, globals_ = game.encode()         # float32 [C, H, W] and [G]
>>> planes.shape, globals_.shape
((8, 7, 7), (20,))
>>> game.legal_action_mask().shape           # bool [action_space_size]
(4441,)

Moves are written ``Wd4,a1`` (a white marble on d4, ring a1 removed), ``Wd4`` (no ring could be
removed), ``b4xd6xf6`` (a capture chain; one hop ``b4xd6`` is a single action) or ``pass``.
"""

from typing import TYPE_CHECKING, Any

# The environment's native module needs numpy alone; the engine with exported networks
# (zertz_engine, installed with `zertz[train]`, which links libtorch) is imported on first use.
from zertz._zertz import (
    BOARDS,
    DATASET_GAMES,
    DATASET_SPLITS,
    DATASET_VERSION,
    DEFAULT_MAX_ACTIONS,
    DEFAULT_MAX_STEPS,
    ENCODING_VERSION,
    MARBLE_SETS,
    MAX_MATCH_GAMES,
    MCTS,
    PLAYER_SPECS,
    SHARD_FORMAT_VERSION,
    VECENV_MAX_BYTES,
    Bot,
    Episode,
    Game,
    Step,
    VecEnv,
    __version__,
    action_space_size,
    dataset,
    elo,
    load_records,
    match_config,
    match_settings,
    mcts_settings,
    observation_shape,
    parse_player,
    ring_cells,
    search_presets,
    selfplay_config,
    selfplay_settings,
    shard_schema,
    symmetry_count,
    symmetry_tables,
)
from zertz.data import load_shards
from zertz.optional import engine as engine
from zertz.optional import missing_engine as missing_engine
from zertz.optional import needs_engine as needs_engine

if TYPE_CHECKING:
    from zertz.agents import evaluate, player
    from zertz.exported import export, load_network
    from zertz.plots import plot
    from zertz.search_policy import SearchBot
    from zertz.training import train
    from zertz.training.pretraining import clone, distill
    from zertz_engine import (
        BUILTIN_MODEL,
        MODEL_FORMAT,
        MODEL_FORMAT_VERSION,
        PRECISIONS,
        builtin_model,
        match,
        selfplay,
    )

#: The names of ``zertz`` that are the engine's (``zertz_engine``, with torch).
ENGINE_NAMES = frozenset(
    {
        "BUILTIN_MODEL",
        "MODEL_FORMAT",
        "MODEL_FORMAT_VERSION",
        "PRECISIONS",
        "builtin_model",
        "match",
        "selfplay",
    }
)


#: Names kept for one release: each warns (DeprecationWarning), saying what replaces it, and
#: gives the attribute of the second name (the native module's, or this package's).
DEPRECATED = {
    "Player": ("use zertz.Bot (a player is a side, P0 or P1; a bot plays one)", "Bot"),
    "SearchPlayer": ("use zertz.SearchBot (a player is a side; a bot plays one)", "SearchBot"),
    "match_opening": (
        "zertz.evaluate plays the engine's match, openings included",
        "match_opening",
    ),
    "match_player_seed": (
        "zertz.evaluate plays the engine's match, seeds included",
        "match_player_seed",
    ),
}


def __getattr__(name: str) -> Any:
    if name in DEPRECATED:
        import warnings

        import zertz._zertz

        why, new = DEPRECATED[name]
        warnings.warn(
            f"zertz.{name} is deprecated and goes in the next release: {why}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(zertz._zertz, new) if hasattr(zertz._zertz, new) else __getattr__(new)
    # The engine (libtorch) and the training side (networks, the loop, matplotlib for plots)
    # are imported on first use, so that `import zertz` stays quick and needs numpy alone.
    if name in ENGINE_NAMES:
        return getattr(engine(), name)
    if name == "export":
        with needs_engine("zertz.export"):
            from zertz.exported import export
        return export
    if name == "load_network":
        with needs_engine("zertz.load_network"):
            from zertz.exported import load_network
        return load_network
    if name == "train":
        with needs_engine("zertz.train"):
            from zertz.training import train
        return train
    if name in ("clone", "distill"):
        with needs_engine(f"zertz.{name}"):
            import zertz.training.pretraining
        return getattr(zertz.training.pretraining, name)
    if name == "SearchBot":
        from zertz.search_policy import SearchBot

        return SearchBot
    if name in ("player", "evaluate"):
        import zertz.agents

        return getattr(zertz.agents, name)
    if name == "plot":
        from zertz.plots import plot

        return plot
    raise AttributeError(f"module 'zertz' has no attribute {name!r}")


def _register_gymnasium() -> None:
    """Registers the Gymnasium environments (``zertz/Zertz-v0``) where Gymnasium is already
    imported: Gymnasium 1.x loads no plugins, so ``gymnasium.make`` finds the id once a module
    registers it. (Importing Gymnasium here would double the time of ``import zertz``;
    ``import zertz.gymnasium`` registers it in any order.)"""
    import sys

    if "gymnasium" in sys.modules:
        import zertz.gymnasium  # noqa: F401  (registers on import)


__all__ = [
    "BOARDS",
    "BUILTIN_MODEL",
    "DATASET_GAMES",
    "DATASET_SPLITS",
    "DATASET_VERSION",
    "DEFAULT_MAX_ACTIONS",
    "DEFAULT_MAX_STEPS",
    "ENCODING_VERSION",
    "MARBLE_SETS",
    "MAX_MATCH_GAMES",
    "MCTS",
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "PLAYER_SPECS",
    "PRECISIONS",
    "SHARD_FORMAT_VERSION",
    "VECENV_MAX_BYTES",
    "Bot",
    "Episode",
    "Game",
    "SearchBot",
    "Step",
    "VecEnv",
    "__version__",
    "action_space_size",
    "builtin_model",
    "clone",
    "dataset",
    "distill",
    "elo",
    "evaluate",
    "export",
    "load_network",
    "load_records",
    "load_shards",
    "match",
    "match_config",
    "match_settings",
    "mcts_settings",
    "observation_shape",
    "parse_player",
    "player",
    "plot",
    "ring_cells",
    "search_presets",
    "selfplay",
    "selfplay_config",
    "selfplay_settings",
    "shard_schema",
    "symmetry_count",
    "symmetry_tables",
    "train",
]

_register_gymnasium()
