"""What the Gymnasium and PettingZoo front ends show of a game: its observation, flat or a dict
(:func:`observe`, :data:`OBSERVATION_KINDS`), and its renderings (:func:`rgb_array`, and the
check of a render mode). The rules of the episode they play are Rust's own
(:class:`zertz.Episode`); docs/vecenv.md tells them.

>>> import zertz
>>> from zertz.observation import observe, observation_size
>>> observe(zertz.Game(37), "flat").shape == (observation_size(37),)
True
>>> sorted(observe(zertz.Game(37), "dict"))
['globals', 'planes']
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from zertz._zertz import Game, observation_shape

__all__ = [
    "OBSERVATION_KINDS",
    "Observation",
    "check_observation",
    "check_render_mode",
    "flatten",
    "observation_size",
    "observe",
    "rgb_array",
]

#: The observations of the Gymnasium front ends: ``"flat"``, one float32 vector ``[C*H*W + G]``
#: (the planes, row-major, then the globals), which every library's default networks take and
#: Stable-Baselines3's checker accepts; or ``"dict"``, ``{"planes": [C, H, W], "globals": [G]}``
#: for a network of its own (a CNN over the planes).
OBSERVATION_KINDS = ("flat", "dict")

#: An observation of either kind.
Observation: TypeAlias = npt.NDArray[np.float32] | dict[str, npt.NDArray[np.float32]]


def check_observation(kind: str) -> str:
    """``kind`` when it is one of :data:`OBSERVATION_KINDS`; ValueError otherwise."""
    if kind not in OBSERVATION_KINDS:
        raise ValueError(f"observation must be 'flat' or 'dict', not {kind!r}")
    return kind


def observation_size(board: int) -> int:
    """The length of a flat observation of ``board`` rings: ``C*H*W + G``."""
    (c, h, w), g = observation_shape(board)
    return c * h * w + g


def flatten(planes: npt.NDArray[np.float32], globals_: npt.NDArray[np.float32]) -> Any:
    """Flat observations from planes ``[..., C, H, W]`` and globals ``[..., G]``: float32
    ``[..., C*H*W + G]``."""
    lead = planes.shape[:-3]
    return np.concatenate([planes.reshape(*lead, -1), globals_], axis=-1)


def observe(game: Game, kind: str, player: Literal["P0", "P1"] | None = None) -> Observation:
    """The observation of ``game`` for ``player`` (None: the player to move), of ``kind``."""
    planes, globals_ = game.encode(player)
    if kind == "flat":
        out: npt.NDArray[np.float32] = flatten(planes, globals_)
        return out
    return {"planes": planes, "globals": globals_}


def check_render_mode(render_mode: str | None, modes: Sequence[str] = ("ansi",)) -> None:
    """Refuses a render mode other than None or one of ``modes`` (ValueError)."""
    if render_mode is not None and render_mode not in modes:
        allowed = " or ".join(["None", *(repr(m) for m in modes)])
        raise ValueError(f"render_mode must be {allowed}, not {render_mode!r}")


def _colour(value: str) -> npt.NDArray[np.float32] | None:
    """An SVG colour of the board's drawing (``#rrggbb`` or ``none``) as RGB floats."""
    if value == "none":
        return None
    if len(value) != 7 or value[0] != "#":
        raise ValueError(f"not a colour of the board's drawing: {value!r}")
    return np.array([int(value[i : i + 2], 16) for i in (1, 3, 5)], np.float32)


def rgb_array(game: Game) -> npt.NDArray[np.uint8]:
    """The board of ``game`` as an RGB image, uint8 ``[H, W, 3]`` (``render_mode="rgb_array"``):
    the rings and marbles of its SVG drawing (``game._repr_svg_()``, what notebooks show), one
    pixel a unit, drawn in numpy without the drawing's text (the rings' names, who is to move,
    the pool and the captures: ``render_mode="ansi"`` writes them). 260 x 372 pixels for 37
    rings."""
    root = ET.fromstring(game._repr_svg_())
    width, height = round(float(root.attrib["width"])), round(float(root.attrib["height"]))
    image = np.zeros((height, width, 3), np.float32)
    for element in root:
        tag = element.tag.rpartition("}")[2]
        if tag == "rect":
            background = _colour(element.attrib["fill"])
            if background is not None:
                image[:] = background
        elif tag == "circle":
            cx, cy, r = (float(element.attrib[k]) for k in ("cx", "cy", "r"))
            fill = _colour(element.attrib.get("fill", "none"))
            stroke = _colour(element.attrib.get("stroke", "none"))
            half = float(element.attrib.get("stroke-width", "1")) / 2 if stroke is not None else 0
            reach = r + half + 1
            x0, x1 = max(0, math.floor(cx - reach)), min(width, math.ceil(cx + reach))
            y0, y1 = max(0, math.floor(cy - reach)), min(height, math.ceil(cy + reach))
            # Distance of each pixel's centre to the circle's; edges shaded over one pixel.
            ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32) + 0.5
            d = np.hypot(xs - cx, ys - cy)
            region = image[y0:y1, x0:x1]
            for colour, cover in (
                (fill, r - d + 0.5),  # the disc
                (stroke, half - np.abs(d - r) + 0.5),  # the line around it, centred on r
            ):
                if colour is not None:
                    region += (colour - region) * np.clip(cover, 0.0, 1.0)[..., None]
    out: npt.NDArray[np.uint8] = np.rint(image).astype(np.uint8)
    return out
