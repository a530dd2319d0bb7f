"""The observation encoding: shapes, dtypes and the meaning of a few planes and globals."""

from __future__ import annotations

import random

import numpy as np
import pytest

import zertz

from conftest import playout


def test_version() -> None:
    assert isinstance(zertz.ENCODING_VERSION, int)
    assert zertz.ENCODING_VERSION >= 1


@pytest.mark.parametrize("board", zertz.BOARDS)
def test_shapes_and_dtypes(board: int) -> None:
    (c, h, w), n = zertz.observation_shape(board)
    planes, globals_ = zertz.Game(board).encode()
    assert planes.shape == (c, h, w)
    assert globals_.shape == (n,)
    assert planes.dtype == np.float32 and globals_.dtype == np.float32
    assert planes.flags.c_contiguous and planes.flags.writeable
    # Plane 0 marks the cells of the board, plane 1 the rings still there: all at the start.
    assert planes[0].sum() == board
    assert planes[1].sum() == board
    assert planes[2].sum() == board  # every ring vacant
    assert planes[3:6].sum() == 0  # no marble
    assert np.all(globals_[0:3] == 1.0)  # full pool


def test_values_are_binary_and_scaled() -> None:
    rng = random.Random(11)
    for g in playout(zertz.Game(48), rng):
        planes, globals_ = g.encode()
        assert set(np.unique(planes).tolist()) <= {0.0, 1.0}
        assert np.all((globals_ >= 0.0) & (globals_ <= 1.0))
        rings = planes[1].sum()
        marbles = planes[3:6].sum()
        assert planes[2].sum() == rings - marbles
        assert planes[7].sum() == (0 if g.chain is None else 1)


def test_each_call_returns_new_arrays() -> None:
    g = zertz.Game()
    a, _ = g.encode()
    a[:] = 7.0
    b, _ = g.encode()
    assert b.max() == 1.0
