"""Loading boardspace.net records (read from $ZERTZ_GAMES, never copied into the repository)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import zertz

FIRST_TURN = (
    "(;GM[22]SU[Zertz]\n; P0[0 Start P0]\n; P0[1 RtoB 2 1 D 3]\n; P0[2 R- F 5]\n; P0[3 Done]\n)"
)


def test_text() -> None:
    g = zertz.Game.from_sgf(FIRST_TURN)
    assert g.moves == ["Gd3,f5"]
    assert g.to_play == "P1"


def test_every_record_matches_the_expected_replay(games: Path) -> None:
    expected = json.loads((games / "expected.json").read_text())
    assert len(expected) == 300
    for name, want in sorted(expected.items()):
        g = zertz.Game.from_sgf(games / name)
        assert g.board == want["board"], name
        assert g.moves == want["moves"], name
        assert g.captures == {p: tuple(c) for p, c in want["captures"].items()}, name
        if want["end"] == "capture":
            assert g.outcome == want["winner"], name
        else:
            assert g.outcome is None, name


def test_path_as_str_and_text_agree(games: Path) -> None:
    path = games / "zertz-00000.sgf"
    a = zertz.Game.from_sgf(str(path))
    b = zertz.Game.from_sgf(path.read_text())
    assert a.moves == b.moves and a.to_text() == b.to_text()


def test_missing_file() -> None:
    with pytest.raises(FileNotFoundError, match=r"no-such-record\.sgf"):
        zertz.Game.from_sgf("no-such-record.sgf")


def test_not_a_record() -> None:
    with pytest.raises(ValueError, match="<text>: SGF syntax"):
        zertz.Game.from_sgf("(;GM[22]SU[Zertz]")
    with pytest.raises(ValueError, match="not a ZÈRTZ record"):
        zertz.Game.from_sgf("(;GM[1]SZ[19])")
    with pytest.raises(TypeError, match="SGF text or a path"):
        zertz.Game.from_sgf(42)  # type: ignore[arg-type]


def test_record_that_breaks_the_rules_names_the_turn(tmp_path: Path) -> None:
    # Turn 2 removes the ring on which turn 1 placed its marble.
    text = FIRST_TURN.replace(
        "Done]\n)", "Done]\n; P1[4 RtoB 2 0 A 1]\n; P1[5 R- D 3]\n; P1[6 Done]\n)"
    )
    with pytest.raises(ValueError, match=r"^<text>: turn 2: "):
        zertz.Game.from_sgf(text)
    path = tmp_path / "broken.sgf"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"broken\.sgf: turn 2: "):
        zertz.Game.from_sgf(path)
