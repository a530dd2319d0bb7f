"""The position text format, and the text diagram of __repr__."""

from __future__ import annotations

import random

import pytest

import zertz

from conftest import playout

START = "37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P0 - 0"


def test_start_text() -> None:
    assert zertz.Game().to_text() == START
    assert zertz.Game.from_text(START.upper().replace("STANDARD", "standard")).to_text() == START


@pytest.mark.parametrize("board", zertz.BOARDS)
def test_round_trip_through_random_games(board: int) -> None:
    rng = random.Random(board + 1)
    for g in playout(zertz.Game(board, blitz=board % 2 == 0), rng):
        text = g.to_text()
        h = zertz.Game.from_text(text)
        assert h.to_text() == text
        assert h.board == g.board and h.blitz == g.blitz
        assert h.to_play == g.to_play and h.pool == g.pool and h.captures == g.captures
        assert h.chain == g.chain
        assert h.legal_actions() == g.legal_actions()
        assert h.moves == []


def test_repr_is_the_diagram() -> None:
    g = zertz.Game()
    g.play("Wd4,a1")
    text = repr(g)
    assert str(g) == text
    assert "(W)" in text
    assert " a1" not in text and "a2" in text
    assert text.rstrip().endswith("P1 to move")
    assert "pool 5/8/10" in text
