"""Symmetry tables: augmenting a sample equals encoding the transformed position."""

from __future__ import annotations

import random

import numpy as np
import pytest

import zertz


@pytest.mark.parametrize("board", zertz.BOARDS)
def test_tables_move_planes_masks_and_policies(board: int) -> None:
    cells, actions = zertz.symmetry_tables(board)
    (c, h, w), _ = zertz.observation_shape(board)
    count = zertz.symmetry_count(board)
    assert cells.shape == (count, h * w) and cells.dtype == np.int64
    assert actions.shape == (count, zertz.action_space_size(board))
    np.testing.assert_array_equal(cells[0], np.arange(h * w))
    np.testing.assert_array_equal(actions[0], np.arange(actions.shape[1]))
    rng = random.Random(board)
    game = zertz.Game(board)
    for _ in range(12):
        legal = game.legal_action_indices()
        if game.is_over or len(legal) == 0:
            break
        game.play(int(rng.choice(list(legal))))
    planes, globals_ = game.encode()
    mask = game.legal_action_mask()
    for s in range(count):
        image = game.transformed(s)
        moved = planes.reshape(c, h * w)[:, cells[s]].reshape(c, h, w)
        np.testing.assert_array_equal(image.encode()[0], moved)
        np.testing.assert_array_equal(image.encode()[1], globals_)
        np.testing.assert_array_equal(image.legal_action_mask(), mask[actions[s]])
        assert sorted(actions[s].tolist()) == list(range(actions.shape[1])), "a permutation"


def test_transformed_refuses_unknown_symmetries() -> None:
    with pytest.raises(ValueError, match="symmetry 2 is out of range: the 40-ring board has 2"):
        zertz.Game(40).transformed(2)
