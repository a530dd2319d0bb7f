"""_repr_svg_: a valid SVG document with one ring per ring on the board and one disc per marble."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest

import zertz

from conftest import playout

SVG = "{http://www.w3.org/2000/svg}"


def parse(g: zertz.Game) -> ET.Element:
    root = ET.fromstring(g._repr_svg_())
    assert root.tag == f"{SVG}svg"
    assert float(root.attrib["width"]) > 0 and float(root.attrib["height"]) > 0
    return root


def rings_and_marbles(root: ET.Element) -> tuple[int, int]:
    circles = root.findall(f"{SVG}circle")
    rings = sum(1 for c in circles if c.attrib["fill"] == "none")
    return rings, len(circles) - rings


@pytest.mark.parametrize("board", zertz.BOARDS)
def test_start(board: int) -> None:
    root = parse(zertz.Game(board))
    assert rings_and_marbles(root) == (board, 0)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "a1" in texts
    assert "P0 to move" in texts


def test_follows_the_game() -> None:
    rng = random.Random(5)
    game = zertz.Game()
    for g in playout(game, rng):
        planes, _ = g.encode()
        rings, marbles = rings_and_marbles(parse(g))
        assert rings == planes[1].sum()
        assert marbles == planes[3:6].sum()
    texts = [t.text or "" for t in parse(game).iter(f"{SVG}text")]
    assert any(t.startswith("game over") for t in texts)
