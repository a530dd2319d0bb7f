"""Bad input raises ValueError or TypeError with a clear message; nothing panics."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

import zertz

from conftest import playout


@pytest.mark.parametrize("board", [0, -1, 36, 38, 64, 10**30])
def test_unknown_board(board: int) -> None:
    with pytest.raises(ValueError, match=f"no {board}-ring board: choose 37, 40, 43, 44, 48 or 61"):
        zertz.Game(board)
    for f in (zertz.action_space_size, zertz.observation_shape, zertz.symmetry_count):
        with pytest.raises(ValueError, match=f"no {board}-ring board"):
            f(board)


def test_board_of_wrong_type() -> None:
    with pytest.raises(TypeError, match="board must be an int, not str"):
        zertz.Game("37")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not bool"):
        zertz.Game(True)


def test_unknown_player() -> None:
    with pytest.raises(ValueError, match='unknown player "P2"'):
        zertz.Game(first_player="P2")


def test_illegal_move_is_named() -> None:
    g = zertz.Game()
    g.play("Wd4,a1")
    before = g.to_text()
    with pytest.raises(ValueError, match=r"^illegal move Wd4,a2$"):
        g.play("Wd4,a2")
    with pytest.raises(ValueError, match=r"^illegal move b4xd6$"):
        g.play("b4xd6")
    with pytest.raises(ValueError, match=r"^illegal move pass$"):
        g.play("pass")
    assert g.to_text() == before
    assert g.moves == ["Wd4,a1"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty move"),
        ("hello", 'cannot read move "hello"'),
        ("Wz9,a1", 'no ring "z9" on the 37-ring board'),
        ("a1xa2", "a1 to a2 is not a jump"),
        ("Wd4,", "no ring"),
        ("Wé4", "cannot read move"),
        ("é", "cannot read move"),
        ("x", "no ring"),
    ],
)
def test_unreadable_move(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        zertz.Game().play(text)


def test_bad_action_index() -> None:
    g = zertz.Game()
    for i in (-1, 4441, 10**30):
        with pytest.raises(ValueError, match=f"action index {i} out of range 0..4441"):
            g.play(i)
        with pytest.raises(ValueError, match="out of range"):
            g.decode_action(i)
    with pytest.raises(ValueError, match=r"^illegal action 5 \(Wa1,b2\)$"):
        g.play(5)
    assert g.moves == []


def test_move_of_wrong_type() -> None:
    g = zertz.Game()
    for bad in (1.5, None, b"Wd4,a1", ["Wd4,a1"], True):
        with pytest.raises(TypeError, match="notation"):
            g.play(bad)  # type: ignore[arg-type]


def test_action_index_needs_a_single_action() -> None:
    with pytest.raises(ValueError, match="several hops"):
        zertz.Game().action_index("b4xd6xd4")


def test_play_after_the_end() -> None:
    g = zertz.Game()
    for _ in playout(g, random.Random(3)):
        pass
    assert g.is_over
    with pytest.raises(ValueError, match="the game is over"):
        g.play("pass")
    with pytest.raises(ValueError, match="the game is over"):
        g.play(0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "bad position text"),
        ("38 standard", "bad position text"),
        ("37 standard ..../...../....../......./....../...../.... 6/8/10 0/0/0 0/0/0 P2 - 0", ""),
        ("37 standard ..../...../....../......./....../...../.... 6/8/9 0/0/0 0/0/0 P0 - 0", ""),
        ("37 standard ..../...../....../......./....../...../... 6/8/10 0/0/0 0/0/0 P0 - 0", ""),
    ],
)
def test_bad_position_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message or "bad position text"):
        zertz.Game.from_text(text)


def test_files_that_are_not_regular_are_refused_at_once(tmp_path: Path) -> None:
    """A FIFO given as a record, a config or a shard once blocked for ever (open waits for a
    writer); a folder is no file either."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        with pytest.raises(OSError, match="not a regular file"):
            zertz.Game.from_sgf(str(path))
        with pytest.raises(OSError, match="not a regular file"):
            zertz.selfplay(tmp_path / "run", config=path)
        with pytest.raises(ValueError, match="not a regular file"):
            zertz.load_shards([path], zertz.action_space_size(37))
