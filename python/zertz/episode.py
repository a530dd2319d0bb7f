"""Deprecated for one release: the rules of an episode are :class:`zertz.Episode` (and
:class:`zertz.Step`); the observation helpers that this module held are
:mod:`zertz.observation`'s. Importing it warns (DeprecationWarning)."""

import warnings

from zertz._zertz import Episode, Step
from zertz.observation import (
    OBSERVATION_KINDS,
    Observation,
    check_observation,
    check_render_mode,
    flatten,
    observation_size,
    observe,
    rgb_array,
)

warnings.warn(
    "zertz.episode is deprecated and goes in the next release: use zertz.Episode and "
    "zertz.observation",
    DeprecationWarning,
    stacklevel=2,
)

# (Listed, not taken from zertz.observation.__all__: type checkers read the list as written.)
__all__ = [
    "OBSERVATION_KINDS",
    "Episode",
    "Observation",
    "Step",
    "check_observation",
    "check_render_mode",
    "flatten",
    "observation_size",
    "observe",
    "rgb_array",
]
