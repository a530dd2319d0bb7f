"""zertz.Game: construction, properties, playing moves and actions, copies."""

from __future__ import annotations

import copy
import random

import numpy as np
import pytest

import zertz

from conftest import playout

# A position of a real game (boardspace zertz-00004, before turn 10): P1 must capture twice in a
# row with the marble on b2.
CHAIN = "37 standard -.../.w.../-.w..-/-....../...w../-..../..-. 2/8/8 1/0/2 0/0/0 P1 - 0"


def test_new_game_defaults() -> None:
    g = zertz.Game()
    assert g.board == 37
    assert not g.blitz
    assert g.to_play == "P0"
    assert g.pool == (6, 8, 10)
    assert g.captures == {"P0": (0, 0, 0), "P1": (0, 0, 0)}
    assert g.chain is None
    assert g.outcome is None
    assert not g.is_over
    assert g.moves == []
    assert g.action_space_size == zertz.action_space_size(37) == 4441
    assert len(g.legal_moves()) == 1944


@pytest.mark.parametrize("board", zertz.BOARDS)
@pytest.mark.parametrize("blitz", [False, True])
def test_every_variant(board: int, blitz: bool) -> None:
    g = zertz.Game(board, blitz=blitz, first_player="P1")
    assert (g.board, g.blitz, g.to_play) == (board, blitz, "P1")
    assert g.pool == ((5, 7, 9) if blitz else (6, 8, 10))
    assert g.action_space_size == zertz.action_space_size(board)
    assert len(g.legal_actions()) == len(g.legal_moves()) > 0
    assert zertz.symmetry_count(board) in (2, 4, 6, 12)


def test_keywords_and_case() -> None:
    g = zertz.Game(board=48, blitz=True, first_player="p1")
    assert (g.board, g.blitz, g.to_play) == (48, True, "P1")


def test_play_notation() -> None:
    g = zertz.Game()
    g.play("wD4,A1")
    assert g.moves == ["Wd4,a1"]
    assert g.to_play == "P1"
    assert g.pool == (5, 8, 10)
    assert "Wd4,a1" not in g.legal_moves()


def test_play_index_and_decode() -> None:
    g = zertz.Game()
    i = g.action_index("Gd4,a1")
    assert g.decode_action(i) == "Gd4,a1"
    g.play(i)
    assert g.moves == ["Gd4,a1"]
    g.play(np.int64(g.legal_action_indices()[0]))
    assert len(g.moves) == 2


def test_chain_hop_by_hop() -> None:
    g = zertz.Game.from_text(CHAIN)
    assert g.legal_moves() == ["b2xd4xf4"]
    assert g.legal_actions() == ["b2xd4"]
    g.play("b2xd4")
    assert g.chain == "d4"
    assert g.to_play == "P1"
    assert g.moves == ["b2xd4"]
    assert g.legal_actions() == ["d4xf4"]
    g.play(g.action_index("d4xf4"))
    assert g.chain is None
    assert g.to_play == "P0"
    assert g.moves == ["b2xd4xf4"]
    assert g.captures["P1"] == (2, 0, 0)


def test_chain_whole_move() -> None:
    g = zertz.Game.from_text(CHAIN)
    g.play("b2xd4xf4")
    assert g.moves == ["b2xd4xf4"]
    assert g.to_play == "P0"


def test_clone_is_independent() -> None:
    g = zertz.Game()
    g.play("Wd4,a1")
    for h in (g.clone(), copy.copy(g), copy.deepcopy(g)):
        assert h.moves == g.moves
        assert h.to_text() == g.to_text()
        h.play(h.legal_moves()[0])
        assert len(h.moves) == 2
        assert len(g.moves) == 1


@pytest.mark.parametrize("board", [37, 48, 61])
def test_random_games_keep_invariants(board: int) -> None:
    rng = random.Random(board)
    for blitz in (False, True):
        game = zertz.Game(board, blitz=blitz)
        turns = 0
        for g in playout(game, rng):
            actions = g.legal_actions()
            indices = g.legal_action_indices()
            mask = g.legal_action_mask()
            assert indices.dtype == np.int64
            assert mask.dtype == np.bool_
            assert mask.shape == (g.action_space_size,)
            assert int(mask.sum()) == len(indices) == len(actions) > 0
            assert np.flatnonzero(mask).tolist() == sorted(indices.tolist())
            assert [g.decode_action(int(i)) for i in indices] == actions
            assert [g.action_index(a) for a in actions] == indices.tolist()
            assert len(g.legal_moves()) > 0
            turns += 1
        assert game.is_over
        assert game.outcome in ("P0", "P1", "draw")
        assert game.legal_moves() == [] and game.legal_actions() == []
        assert not game.legal_action_mask().any()
        assert len(game.legal_action_indices()) == 0
        assert 0 < len(game.moves) <= turns


def test_moves_replay_to_same_position() -> None:
    rng = random.Random(7)
    g = zertz.Game()
    for _ in playout(g, rng):
        pass
    h = zertz.Game()
    for m in g.moves:
        h.play(m)
    assert h.to_text() == g.to_text()
    assert h.outcome == g.outcome
    assert h.moves == g.moves


def test_first_is_the_deprecated_name_of_first_player() -> None:
    # (The stubs leave the old name out, so that type checkers flag it.)
    with pytest.warns(DeprecationWarning, match="use first_player="):
        game = zertz.Game(37, first="P1")  # type: ignore[call-arg]
    assert game.to_play == "P1"
    with pytest.warns(DeprecationWarning, match="use first_player="):
        episode = zertz.Episode(37, first="P1")  # type: ignore[call-arg]
    sides = [episode.game.to_play]
    with pytest.warns(DeprecationWarning, match="use first_player="):
        episode.restart(first="P0")  # type: ignore[call-arg]
    sides.append(episode.game.to_play)
    assert sides == ["P1", "P0"]
    with pytest.raises(TypeError, match="give first_player only"):
        zertz.Game(37, first_player="P0", first="P1")  # type: ignore[call-arg]
