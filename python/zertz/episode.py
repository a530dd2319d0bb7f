"""Deprecated for one release: the rules of an episode are :class:`zertz.Episode` (and
:class:`zertz.Step`); the observation helpers that this module held are
:mod:`zertz.observation`'s. Importing it warns (DeprecationWarning)."""

import warnings

from zertz import observation
from zertz._zertz import Episode, Step
from zertz.observation import *  # noqa: F403  (the names this module held)

warnings.warn(
    "zertz.episode is deprecated and goes in the next release: use zertz.Episode and "
    "zertz.observation",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["Episode", "Step", *observation.__all__]
