"""Property-based fuzzing of the Python API (issue 11): random calls with random arguments on
``zertz.Game``, ``zertz.VecEnv``, ``zertz.MCTS``, ``zertz.selfplay``, ``zertz.load_shards`` and the
module functions, mixing valid values (legal moves and action indices, real boards, tiny budgets)
with hostile ones (NaN, infinities, huge and negative ints, wrong types, numpy scalars,
wrong-shape arrays, corrupted shards, evaluators that answer garbage or raise).

What every call must do: succeed or raise an ordinary exception (a subclass of ``Exception``),
within a time limit. A ``BaseException`` that is not an ``Exception`` (pyo3's ``PanicException``),
an "internal error of zertz" (a Rust panic turned into RuntimeError), a call that outlives
``CALL_LIMIT_S`` or a process that dies all fail. Where the API documents more (ValueError for
settings out of range, IndexError for ``VecEnv.game``, a refused move leaves the game as it was,
shards that do not agree raise ValueError naming the file), the fuzz checks that too.

Every call runs under a watchdog: SIGALRM after ``CALL_LIMIT_S`` raises :class:`Hang` where the
Rust code checks signals (searches and self-play do, between rounds), a call that returns late
fails on its measured time, and ``faulthandler`` kills the process with every thread's traceback
after ``HARD_LIMIT_S`` where nothing returns at all, so a hang fails loudly instead of stalling CI.
Arguments that could take the interpreter down (a billion games, a million threads) run only in
a child interpreter with a memory limit (``test_absurd_sizes_in_a_child``).

Two Hypothesis profiles: "ci" (the default: few examples, derandomized so that a run is
reproducible, about a minute on 2 cores) and "long" (many more examples, random)::

    .venv/bin/python -m pytest python/tests/test_fuzz.py
    ZERTZ_FUZZ_PROFILE=long .venv/bin/python -m pytest python/tests/test_fuzz.py

Neither keeps an example database (``database=None``): nothing is written into the repository.
"""

from __future__ import annotations

import copy
import faulthandler
import io
import json
import math
import os
import pickle
import random
import reprlib
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    multiple,
    rule,
    run_state_machine_as_test,
)

import zertz
from zertz._zertz import partial_owner

# --- profiles --------------------------------------------------------------------------------

settings.register_profile(
    "ci",
    max_examples=20,
    stateful_step_count=20,
    deadline=None,  # the watchdog below is the time limit of every call
    database=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
settings.register_profile(
    "long",
    max_examples=500,
    stateful_step_count=60,
    deadline=None,
    database=None,
    derandomize=False,
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)
PROFILE = os.environ.get("ZERTZ_FUZZ_PROFILE", "ci")
BASE = settings.get_profile(PROFILE)  # an unknown profile name fails here, loudly
LONG_FACTOR = 25


def fuzz_settings(examples: int) -> settings:
    """The profile's settings with ``examples`` examples in "ci" (``LONG_FACTOR`` times more in
    "long")."""
    return settings(BASE, max_examples=examples if PROFILE == "ci" else examples * LONG_FACTOR)


# --- the watchdog and the property of every call --------------------------------------------

#: A call's time limit: what only a hang reaches, however busy the machine.
CALL_LIMIT_S = 60.0
HARD_LIMIT_S = 120.0


class Hang(AssertionError):
    """A call that did not return within ``CALL_LIMIT_S`` (raised from SIGALRM)."""


class Raised:
    """The ordinary exception a call raised (what :func:`attempt` returns instead of a result)."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def __repr__(self) -> str:
        return f"Raised({self.exc!r})"


_short = reprlib.Repr()
_short.maxstring = 80
_short.maxother = 80
_short.maxlist = 8


def describe(fn: Callable[..., object], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    parts = [_short.repr(a) for a in args] + [f"{k}={_short.repr(v)}" for k, v in kwargs.items()]
    return f"{getattr(fn, '__qualname__', fn)}({', '.join(parts)})"


@contextmanager
def watchdog(what: Callable[[], str]) -> Iterator[None]:
    """Fails the block if it runs longer than ``CALL_LIMIT_S``; kills the process (with
    tracebacks) if it runs longer than ``HARD_LIMIT_S``."""
    armed = [True]

    def alarm(signum: int, frame: object) -> None:
        if armed[0]:
            raise Hang(f"{what()} did not return within {CALL_LIMIT_S} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, CALL_LIMIT_S)
    faulthandler.dump_traceback_later(HARD_LIMIT_S, exit=True)
    started = time.monotonic()
    try:
        yield
    finally:
        try:
            armed[0] = False
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            faulthandler.cancel_dump_traceback_later()
            signal.signal(signal.SIGALRM, previous)
    elapsed = time.monotonic() - started
    if elapsed > CALL_LIMIT_S:
        raise Hang(f"{what()} took {elapsed:.1f} s (limit {CALL_LIMIT_S} s)")


def is_internal_error(e: BaseException) -> bool:
    """A Rust panic that the bindings turned into an exception: still a bug."""
    text = str(e)
    return "internal error of zertz" in text or "panicked" in text


T = TypeVar("T")

#: Calls made through :func:`attempt`, and how many raised, by exception type: the figures of a
#: fuzz run, printed at the end of the session (conftest's ``pytest_terminal_summary``).
CALLS: dict[str, int] = {}


def attempt(fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T | Raised:
    """Calls ``fn`` under the watchdog: its result, or :class:`Raised` with the ordinary
    exception it raised. Anything else (a BaseException such as PanicException, an internal
    error, a hang) fails the test."""

    def what() -> str:
        return describe(fn, args, kwargs)

    CALLS["calls"] = CALLS.get("calls", 0) + 1
    try:
        with watchdog(what):
            return fn(*args, **kwargs)
    except Hang:
        raise
    except Exception as e:
        CALLS[type(e).__name__] = CALLS.get(type(e).__name__, 0) + 1
        if is_internal_error(e):
            raise AssertionError(f"{what()} panicked: {type(e).__name__}: {e}") from e
        return Raised(e)
    except BaseException as e:
        raise AssertionError(
            f"{what()} raised {type(e).__module__}.{type(e).__qualname__} "
            f"(not an Exception subclass): {e}"
        ) from e


def outcome(r: object) -> str:
    """A short label of a call's outcome, for ``--hypothesis-show-statistics``."""
    return type(r.exc).__name__ if isinstance(r, Raised) else "ok"


def ok(r: T | Raised, what: str = "") -> T:
    """``r``'s result; fails if the call raised."""
    if isinstance(r, Raised):
        raise AssertionError(f"{what} raised {type(r.exc).__name__}: {r.exc}") from r.exc
    return r


def refused(
    r: object, kinds: type[Exception] | tuple[type[Exception], ...], what: str = ""
) -> Exception:
    """The exception of ``r``; fails unless the call raised one of ``kinds``."""
    if not isinstance(r, Raised):
        raise AssertionError(f"{what} succeeded ({_short.repr(r)}); expected {kinds}")
    if not isinstance(r.exc, kinds):
        raise AssertionError(
            f"{what} raised {type(r.exc).__name__}: {r.exc}; expected {kinds}"
        ) from r.exc
    return r.exc


# --- values ---------------------------------------------------------------------------------

NAN = float("nan")
INF = float("inf")
F32_MAX = float(np.finfo(np.float32).max)
BOARDS: tuple[int, ...] = tuple(zertz.BOARDS)

HUGE_INTS = [
    -1,
    -2,
    -(2**31),
    -(2**63),
    -(2**64),
    2**31,
    2**32,
    2**32 - 1,
    2**63 - 1,
    2**63,
    2**64 - 1,
    2**64,
    10**9,
    10**30,
]
EXTREME_FLOATS = [
    0.0,
    -0.0,
    5e-324,
    1e-50,
    1e-45,
    1e-38,
    1e-30,
    1e-7,
    0.5,
    1.0,
    2.0,
    -1.0,
    3.4e38,
    3.4028235e38,
    3.5e38,
    1e39,
    1e300,
    -3.4e38,
    -1e300,
    sys.float_info.max,
    NAN,
    INF,
    -INF,
]
WRONG_TYPES: list[object] = [
    None,
    "",
    "37",
    "P0",
    "nan",
    b"37",
    [],
    [1],
    (),
    {},
    {"a": 1},
    object(),
    1j,
    np.array([1, 2]),
    np.zeros((2, 2)),
    np.array(3.5),
]
NUMPY_SCALARS: list[object] = [
    np.bool_(True),
    np.int8(-1),
    np.int8(37),
    np.uint8(255),
    np.int16(-3),
    np.uint16(37),
    np.int32(37),
    np.uint32(2**32 - 1),
    np.int64(-(2**63)),
    np.uint64(2**64 - 1),
    np.uint64(37),
    np.float16(1.5),
    np.float32(NAN),
    np.float64(INF),
    np.float64(37.0),
]

hostile_ints = st.one_of(st.sampled_from(HUGE_INTS), st.integers())
hostile = st.one_of(
    st.sampled_from(WRONG_TYPES),
    st.sampled_from(NUMPY_SCALARS),
    st.sampled_from(HUGE_INTS),
    st.sampled_from(EXTREME_FLOATS),
    st.booleans(),
    st.text(max_size=8),
    st.integers(),
    st.floats(),
)
extreme_floats = st.one_of(
    st.sampled_from(EXTREME_FLOATS),
    st.floats(),
    st.floats(width=32, min_value=-F32_MAX, max_value=F32_MAX),
    st.floats(min_value=-4.0, max_value=4.0),
    st.integers(min_value=-3, max_value=3),
)
float_settings = st.one_of(
    extreme_floats,
    extreme_floats,
    extreme_floats,
    st.sampled_from(WRONG_TYPES),
    st.sampled_from(NUMPY_SCALARS),
    st.sampled_from([2**1100, -(2**1100)]),
)


def mostly(
    valid: st.SearchStrategy[Any], bad: st.SearchStrategy[Any], odds: int = 6
) -> st.SearchStrategy[Any]:
    """``valid``, or ``bad`` once in ``odds`` draws (shrinking goes towards ``valid``)."""
    return st.integers(0, odds - 1).flatmap(lambda k: bad if k == odds - 1 else valid)


NUMPY_INT_TYPES: list[type[np.integer[Any]]] = [
    np.int8,
    np.uint8,
    np.int16,
    np.uint16,
    np.int32,
    np.uint32,
    np.int64,
    np.uint64,
    np.intp,
]


def plain_int(x: object) -> int | None:
    """``x`` as an int if it is an integer (int or numpy integer, not a bool), else None."""
    if isinstance(x, bool | np.bool_):
        return None
    if isinstance(x, int | np.integer):
        return int(x)
    return None


def as_f32(x: object) -> float | None:
    """The f32 that the bindings see for a plain number (a float or int, not a bool), or None
    when the conversion itself is not plain (other types, ints beyond f64)."""
    if isinstance(x, bool | np.bool_) or not isinstance(x, int | float | np.integer | np.floating):
        return None
    try:
        value = float(x)
    except OverflowError:
        return None
    with np.errstate(over="ignore"):
        return float(np.float32(value))


def numpy_int(value: int, data: st.DataObject, label: str) -> object:
    """``value`` as a Python int or as any numpy integer type that holds it."""
    kinds: list[Callable[[int], object]] = [int]
    for t in NUMPY_INT_TYPES:
        info = np.iinfo(t)
        if info.min <= value <= info.max:
            kinds.append(t)
    return data.draw(st.sampled_from(kinds), label=label)(value)


def random_game(board: int, blitz: bool, plies: int, seed: int) -> zertz.Game:
    """A game after up to ``plies`` random legal single actions (possibly over)."""
    g = zertz.Game(board, blitz)
    rng = random.Random(seed)
    for _ in range(plies):
        if g.is_over:
            break
        indices = g.legal_action_indices()
        g.play(int(indices[rng.randrange(len(indices))]))
    return g


# --- module functions -----------------------------------------------------------------------

board_args = st.one_of(
    st.sampled_from(BOARDS),
    st.sampled_from(BOARDS).map(np.int64),
    st.sampled_from(BOARDS).map(np.uint8),
    st.sampled_from(BOARDS).map(np.uint64),
    st.sampled_from(BOARDS).map(float),
    st.sampled_from(BOARDS).map(str),
    hostile,
)


@fuzz_settings(60)
@given(board=board_args)
def test_fuzz_module_functions(board: object) -> None:
    """Every module function takes every board of ``BOARDS`` (an int or a numpy integer) and
    refuses anything else with an exception."""
    functions: list[Callable[[Any], object]] = [
        zertz.action_space_size,
        zertz.observation_shape,
        zertz.symmetry_count,
        zertz.ring_cells,
        zertz.symmetry_tables,
    ]
    results = [attempt(f, board) for f in functions]
    rings = plain_int(board)
    if rings not in BOARDS:
        for f, r in zip(functions, results, strict=True):
            refused(r, (ValueError, TypeError, OverflowError), describe(f, (board,), {}))
        return
    assert rings is not None
    for f, r in zip(functions, results, strict=True):
        ok(r, describe(f, (board,), {}))
    a = zertz.action_space_size(rings)
    (c, h, w), g = zertz.observation_shape(rings)
    s = zertz.symmetry_count(rings)
    cells = zertz.ring_cells(rings)
    cell_table, action_table = zertz.symmetry_tables(rings)
    for f, r in zip(functions, results, strict=True):  # numpy integers give the same answers
        expected = f(rings)
        if isinstance(expected, tuple) and isinstance(expected[0], np.ndarray):
            assert all((x == y).all() for x, y in zip(expected, r, strict=True))  # type: ignore[call-overload]
        elif isinstance(expected, np.ndarray):
            np.testing.assert_array_equal(expected, r)
        else:
            assert expected == r
    assert a == zertz.Game(rings).action_space_size
    assert cells.shape == (rings,) and ((0 <= cells) & (cells < h * w)).all()
    assert cell_table.shape == (s, h * w) and action_table.shape == (s, a)
    assert c > 0 and g > 0 and s >= 1


# --- Game: a rule-based state machine -------------------------------------------------------

first_players = st.one_of(st.sampled_from(["P0", "P1"]), hostile)
blitz_args = st.one_of(st.booleans(), hostile)
sgf_alphabet = st.sampled_from(list("(;)[]FGSZWBXabcdefgh0123456789 \n:,.-xP"))


class GameMachine(RuleBasedStateMachine):
    """Random sequences of calls on a few games: legal moves and actions (as ints and numpy
    integers), hostile moves (a refused move leaves the game as it was), decoding, encoding,
    text and SGF parsing, symmetries, copies."""

    games = Bundle("games")

    @initialize(target=games, board=st.sampled_from(BOARDS), blitz=st.booleans())
    def start(self, board: int, blitz: bool) -> zertz.Game:
        return ok(attempt(zertz.Game, board, blitz), "Game")

    @rule(target=games, board=board_args, blitz=blitz_args, first=first_players)
    def construct(self, board: object, blitz: object, first: object) -> object:
        r = attempt(zertz.Game, board, blitz, first)
        valid = (
            plain_int(board) in BOARDS
            and isinstance(blitz, bool)
            and isinstance(first, str)
            and first in ("P0", "P1")
        )
        if valid:
            g = ok(r, f"Game({board!r}, {blitz!r}, {first!r})")
            assert g.board == plain_int(board) and g.to_play == first and not g.is_over
            return g
        if isinstance(r, zertz.Game):
            return r
        return multiple()

    @rule(target=games, game=games, plies=st.integers(0, 300), seed=st.integers(0, 2**32))
    def playout(self, game: zertz.Game, plies: int, seed: int) -> zertz.Game:
        g = ok(attempt(game.clone), "clone")
        rng = random.Random(seed)
        for _ in range(plies):
            if g.is_over:
                break
            indices = g.legal_action_indices()
            ok(attempt(g.play, int(indices[rng.randrange(len(indices))])), "play")
        return g

    @rule(game=games, data=st.data())
    def play_legal_move(self, game: zertz.Game, data: st.DataObject) -> None:
        moves = ok(attempt(game.legal_moves), "legal_moves")
        if not moves:
            assert game.is_over
            refused(attempt(game.play, "pass"), ValueError, "play after the end")
            return
        move = data.draw(st.sampled_from(moves), label="move")
        ok(attempt(game.play, move), f"play({move!r})")
        assert game.moves[-1].endswith(move)  # the end of a capture chain ends the whole turn

    @rule(game=games, data=st.data())
    def play_legal_action(self, game: zertz.Game, data: st.DataObject) -> None:
        indices = ok(attempt(game.legal_action_indices), "legal_action_indices")
        actions = ok(attempt(game.legal_actions), "legal_actions")
        mask = ok(attempt(game.legal_action_mask), "legal_action_mask")
        assert len(indices) == len(actions) == int(mask.sum())
        assert mask.shape == (game.action_space_size,) and mask[indices].all()
        if len(indices) == 0:
            assert game.is_over and game.outcome is not None
            return
        k = data.draw(st.integers(0, len(indices) - 1), label="k")
        if data.draw(st.booleans(), label="as notation"):
            action: object = actions[k]
        else:
            action = numpy_int(int(indices[k]), data, "index type")
        ok(attempt(game.play, action), f"play({action!r})")  # np.uint64 once was refused

    @rule(game=games, move=st.one_of(hostile, st.text(max_size=12), st.integers(-5, 12000)))
    def play_hostile(self, game: zertz.Game, move: object) -> None:
        before = (game.to_text(), game.moves)
        r = attempt(game.play, move)
        if isinstance(r, Raised):
            refused(r, (ValueError, TypeError, OverflowError), f"play({move!r})")
            assert (game.to_text(), game.moves) == before, "a refused move changed the game"

    @rule(game=games, index=st.one_of(st.integers(-3, 12000), hostile))
    def decode(self, game: zertz.Game, index: object) -> None:
        r = attempt(game.decode_action, index)
        i = plain_int(index)
        if i is not None and 0 <= i < game.action_space_size:
            text = ok(r, f"decode_action({index!r})")
            # The round trip itself: test_decode_action_round_trips_through_action_index.
            back = attempt(game.action_index, text)
            if not isinstance(back, Raised):
                assert back == i, f"decode_action({i}) = {text!r}, action_index of it {back}"
        elif i is not None:
            refused(r, (ValueError, OverflowError, IndexError), f"decode_action({index!r})")
        elif isinstance(r, str):
            assert isinstance(r, str)

    @rule(game=games, text=st.one_of(st.text(max_size=16), sgf_alphabet.map(str), hostile))
    def action_index(self, game: zertz.Game, text: object) -> None:
        r = attempt(game.action_index, text)
        if isinstance(r, int):
            assert 0 <= r < game.action_space_size

    @rule(game=games)
    def encode_and_properties(self, game: zertz.Game) -> None:
        planes, globals_ = ok(attempt(game.encode), "encode")
        (c, h, w), g = zertz.observation_shape(game.board)
        assert planes.shape == (c, h, w) and globals_.shape == (g,)
        assert planes.dtype == globals_.dtype == np.float32
        assert np.isfinite(planes).all() and np.isfinite(globals_).all()
        assert game.is_over == (game.outcome is not None) == (game.legal_moves() == [])
        assert game.to_play in ("P0", "P1") and len(game.pool) == 3
        assert set(game.captures) == {"P0", "P1"}
        assert isinstance(ok(attempt(game._repr_svg_), "_repr_svg_"), str)
        assert repr(game)

    @rule(game=games)
    def text_round_trip(self, game: zertz.Game) -> None:
        text = game.to_text()
        again = ok(attempt(zertz.Game.from_text, text), f"from_text({text!r})")
        assert again.to_text() == text
        np.testing.assert_array_equal(again.legal_action_mask(), game.legal_action_mask())

    @rule(game=games, data=st.data())
    def from_text_mutated(self, game: zertz.Game, data: st.DataObject) -> None:
        text = list(game.to_text())
        for _ in range(data.draw(st.integers(1, 3), label="edits")):
            i = data.draw(st.integers(0, len(text)), label="at")
            op = data.draw(st.sampled_from(["replace", "insert", "delete", "cut"]), label="op")
            ch = data.draw(st.sampled_from(list("./0123456789 PWGBwgbx-é\n")), label="char")
            if op == "replace" and i < len(text):
                text[i] = ch
            elif op == "insert":
                text.insert(i, ch)
            elif op == "delete" and i < len(text):
                del text[i]
            elif op == "cut":
                text = text[:i]
        r = attempt(zertz.Game.from_text, "".join(text))
        if isinstance(r, zertz.Game):
            # A position that parses is consistent: its own text parses to the same position.
            assert zertz.Game.from_text(r.to_text()).to_text() == r.to_text()
            r.legal_moves()
            r.encode()

    @rule(text=st.one_of(st.text(sgf_alphabet, max_size=40), hostile))
    def from_sgf(self, text: object) -> None:
        if isinstance(text, str) and "/" in text:
            return  # a path: stay away from the file system
        attempt(zertz.Game.from_sgf, text)

    @rule(game=games, s=st.one_of(st.integers(-2, 13), hostile))
    def transformed(self, game: zertz.Game, s: object) -> None:
        r = attempt(game.transformed, s)
        i = plain_int(s)
        if i is not None and 0 <= i < zertz.symmetry_count(game.board):
            t = ok(r, f"transformed({s!r})")
            assert len(t.legal_action_indices()) == len(game.legal_action_indices())
        elif i is not None:
            refused(r, (ValueError, OverflowError, IndexError), f"transformed({s!r})")

    @rule(game=games, how=st.sampled_from(["clone", "copy", "deepcopy", "pickle"]))
    def copies_are_independent(self, game: zertz.Game, how: str) -> None:
        make: dict[str, Callable[[], object]] = {
            "clone": game.clone,
            "copy": lambda: copy.copy(game),
            "deepcopy": lambda: copy.deepcopy(game),
            "pickle": lambda: pickle.loads(pickle.dumps(game)),
        }
        r = attempt(make[how])
        if how == "pickle" and isinstance(r, Raised):
            return  # not picklable: a TypeError is fine
        other = ok(r, how)
        assert isinstance(other, zertz.Game)
        before = game.to_text()
        assert other.to_text() == before
        indices = other.legal_action_indices()
        if len(indices):
            other.play(int(indices[0]))
            assert game.to_text() == before, f"playing on a {how} changed the original"


def test_fuzz_game_state_machine() -> None:
    run_state_machine_as_test(GameMachine, settings=fuzz_settings(25))


# --- VecEnv: a rule-based state machine -----------------------------------------------------

#: In-process hostile sizes are cheap to refuse even if a check regressed (no billion games, no
#: million threads: those run in a child, ``test_absurd_sizes_in_a_child``).
num_envs_args = st.one_of(
    st.integers(1, 5),
    st.sampled_from([0, -1, -(2**63), 2**64, 2**65, np.int8(3), np.uint64(2), np.int8(-1)]),
    st.sampled_from(WRONG_TYPES),
    st.sampled_from([True, 2.0, NAN]),
)
thread_args = st.one_of(
    st.integers(0, 2), st.sampled_from([-1, 1025, 2**64, None, "2", 1.5, np.uint8(1)])
)
max_steps_args = st.one_of(
    st.integers(1, 60), st.sampled_from([0, -1, 2**32 - 1, 2**64, None, 1.5, np.int16(5)])
)
opening_args = st.one_of(st.integers(0, 4), st.sampled_from([-1, 2**64, None, 1.5, "1"]))
seed_args = st.one_of(st.integers(0, 2**64 - 1), hostile_ints, st.sampled_from(WRONG_TYPES))
first_player_args = st.one_of(
    st.sampled_from(["P0", "P1", "random"]),
    st.sampled_from(["P2", "", "RANDOM", "p0", "random ", None, 0, b"P0"]),
)


def check_observation(env: zertz.VecEnv, obs: dict[str, Any], infos: dict[str, Any]) -> None:
    n = env.num_envs
    (c, h, w), g = zertz.observation_shape(env.board)
    a = zertz.action_space_size(env.board)
    assert obs["planes"].shape == (n, c, h, w) and obs["planes"].dtype == np.float32
    assert obs["globals"].shape == (n, g) and obs["globals"].dtype == np.float32
    assert np.isfinite(obs["planes"]).all() and np.isfinite(obs["globals"]).all()
    mask = infos["legal_action_mask"]
    assert mask.shape == (n, a) and mask.dtype == np.bool_
    assert mask.any(axis=1).all(), "a game in the batch has no legal action"
    assert infos["to_play"].shape == (n,) and set(infos["to_play"].tolist()) <= {0, 1}


def check_step(env: zertz.VecEnv, result: tuple[Any, ...]) -> None:
    obs, rewards, terminations, truncations, infos = result
    n = env.num_envs
    check_observation(env, obs, infos)
    assert rewards.shape == (n, 2) and rewards.dtype == np.float32
    assert np.isfinite(rewards).all() and (rewards.sum(axis=1) == 0).all()
    assert terminations.shape == truncations.shape == (n,)
    assert terminations.dtype == truncations.dtype == np.bool_
    assert (rewards[~terminations] == 0).all(), "a reward without a termination"


class VecEnvMachine(RuleBasedStateMachine):
    """Random sequences of calls on a VecEnv: reset with any seed, steps with sampled, legal
    and hostile actions (a refused step leaves every game as it was), ``game(i)`` for any ``i``,
    new environments with hostile settings."""

    def __init__(self) -> None:
        super().__init__()
        self.env: zertz.VecEnv | None = None

    @initialize(
        n=st.integers(1, 5),
        board=st.sampled_from(BOARDS),
        blitz=st.booleans(),
        threads=st.integers(0, 2),
        max_steps=st.integers(1, 60),
        first=st.sampled_from(["P0", "P1", "random"]),
        opening=st.integers(0, 4),
        seed=st.integers(0, 2**64 - 1),
    )
    def start(
        self,
        n: int,
        board: int,
        blitz: bool,
        threads: int,
        max_steps: int,
        first: str,
        opening: int,
        seed: int,
    ) -> None:
        kwargs = dict(threads=threads, max_steps=max_steps, first_player=first)
        kwargs |= dict(opening_plies=opening, seed=seed)
        self.env = ok(attempt(zertz.VecEnv, n, board, blitz, **kwargs), "VecEnv")

    @property
    def e(self) -> zertz.VecEnv:
        assert self.env is not None
        return self.env

    def snapshot(self) -> list[str]:
        return [self.e.game(i).to_text() for i in range(self.e.num_envs)]

    @rule(
        n=num_envs_args,
        board=board_args,
        blitz=blitz_args,
        threads=thread_args,
        max_steps=max_steps_args,
        first=first_player_args,
        opening=opening_args,
        seed=seed_args,
    )
    def construct(
        self,
        n: object,
        board: object,
        blitz: object,
        threads: object,
        max_steps: object,
        first: object,
        opening: object,
        seed: object,
    ) -> None:
        kwargs = dict(threads=threads, max_steps=max_steps, first_player=first)
        kwargs |= dict(opening_plies=opening, seed=seed)
        r = attempt(zertz.VecEnv, n, board, blitz, **kwargs)
        # Sizes out of range are refused (TypeError where another argument is of a wrong type).
        refusals = (ValueError, OverflowError, TypeError)
        size = plain_int(n)
        if size is not None and not 1 <= size <= 2**20:
            refused(r, refusals, f"VecEnv({n!r}, ...)")
        t = plain_int(threads)
        if t is not None and not 0 <= t <= 1024:
            refused(r, refusals, f"VecEnv(..., threads={threads!r})")
        if isinstance(r, zertz.VecEnv):
            assert len(r) == r.num_envs == size
            self.env = r

    @rule(seed=st.one_of(st.none(), st.integers(0, 2**64 - 1), seed_args))
    def reset(self, seed: object) -> None:
        r = attempt(self.e.reset, seed)
        if seed is None or (plain_int(seed) is not None and 0 <= plain_int(seed) < 2**64):  # type: ignore[operator]
            obs, infos = ok(r, f"reset({seed!r})")
            check_observation(self.e, obs, infos)

    @rule(
        kind=st.sampled_from([np.int64, np.int32, np.uint32, np.uint64, np.intp, list, tuple]),
        times=st.integers(1, 40),
    )
    def step_sampled(self, kind: Any, times: int) -> None:
        for _ in range(times):
            actions = ok(attempt(self.e.sample_actions), "sample_actions")
            assert actions.shape == (self.e.num_envs,) and actions.dtype == np.int64
            for i, a in enumerate(actions[:2]):
                assert self.e.game(i).legal_action_mask()[a], "sample_actions chose illegal"
            if kind in (list, tuple):
                converted: object = kind(int(a) for a in actions)
            else:
                converted = np.asarray(actions).astype(kind)
            result = ok(attempt(self.e.step, converted), f"step({converted!r})")
            check_step(self.e, result)
            for i in range(min(2, self.e.num_envs)):
                assert not self.e.game(i).is_over, "a finished game was not restarted"

    @rule(data=st.data())
    def step_legal(self, data: st.DataObject) -> None:
        actions = []
        for i in range(self.e.num_envs):
            legal = np.flatnonzero(self.e.game(i).legal_action_mask())
            actions.append(int(legal[data.draw(st.integers(0, len(legal) - 1), label="k")]))
        check_step(self.e, ok(attempt(self.e.step, np.array(actions)), f"step({actions})"))

    @rule(data=st.data())
    def step_hostile(self, data: st.DataObject) -> None:
        n = self.e.num_envs
        a = self.e.action_space_size
        good = self.e.sample_actions()
        candidates: list[object] = [
            good[:-1],
            np.concatenate([good, good[:1]]),
            good[:, None],
            good.reshape(1, -1),
            good.astype(np.float64),
            np.where(np.arange(n) == 0, NAN, good.astype(np.float64)),
            np.full(n, INF),
            np.full(n, -1),
            np.full(n, a),
            np.full(n, 2**63 - 1),
            np.full(n, 2**64 - 1, dtype=np.uint64),
            np.zeros(n, dtype=np.int64),  # index 0 is rarely legal
            np.zeros(n, dtype=bool),
            np.array([str(x) for x in good]),
            np.array(list(good), dtype=object),
            [int(x) for x in good[:-1]] + [2**64],
            [[int(x)] for x in good],
            [],
            np.array([], dtype=np.int64),
            None,
            "abc",
            int(good[0]),
            {0: 1},
        ]
        actions = data.draw(st.one_of(st.sampled_from(candidates), hostile), label="actions")
        before = self.snapshot()
        r = attempt(self.e.step, actions)
        if isinstance(r, Raised):
            assert self.snapshot() == before, f"a refused step({actions!r}) changed the games"
        else:
            check_step(self.e, r)

    @rule(i=st.one_of(st.integers(-8, 8), hostile_ints, hostile))
    def game(self, i: object) -> None:
        n = self.e.num_envs
        r = attempt(self.e.game, i)
        k = plain_int(i)
        if k is not None and 0 <= k < n:
            g = ok(r, f"game({i!r})")
            assert g.board == self.e.board and not g.is_over
        elif k is not None:
            refused(r, IndexError, f"game({i!r}) of {n} games")  # TypeError once
        elif isinstance(i, str | float | type(None) | bool | np.bool_ | np.floating):
            refused(r, TypeError, f"game({i!r})")

    @rule()
    def properties(self) -> None:
        e = self.e
        assert len(e) == e.num_envs >= 1
        assert e.observation_shape == zertz.observation_shape(e.board)
        assert e.action_space_size == zertz.action_space_size(e.board)
        assert isinstance(e.blitz, bool) and e.threads >= 1 and repr(e)


def test_fuzz_vecenv_state_machine() -> None:
    run_state_machine_as_test(VecEnvMachine, settings=fuzz_settings(20))


# --- evaluators -----------------------------------------------------------------------------

Arrays = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32], npt.NDArray[np.bool_]]


class EvaluatorError(Exception):
    """What the raising evaluators raise: it must reach the caller unchanged."""


def ev_zeros(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.shape, np.float32), np.zeros(len(masks), np.float32)


def ev_random(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    rng = np.random.default_rng(int(planes.sum()) % 1000)
    logits = rng.normal(size=masks.shape).astype(np.float32) * 5
    return logits, rng.uniform(-1, 1, len(masks)).astype(np.float32)


def ev_huge_logits(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    """Finite but extreme: a softmax that does not subtract the maximum overflows."""
    logits = np.where(masks, np.float32(3e38), np.float32(-3e38)).astype(np.float32)
    logits[:, ::2] = -3e38
    return logits, np.ones(len(masks), np.float32)


def ev_nan_on_illegal(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    """Only the logits of legal actions count: NaN elsewhere is fine (documented)."""
    return np.where(masks, 0, np.nan).astype(np.float32), np.zeros(len(masks), np.float32)


def ev_float64(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.shape), np.zeros(len(masks))


def ev_lists(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.shape).tolist(), [0.0] * len(masks)


def ev_int_arrays(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.ones(masks.shape, np.int64), np.zeros(len(masks), np.int8)


def ev_big_endian_strided(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    logits = np.zeros((masks.shape[0], masks.shape[1] * 2), ">f4")[:, ::2]
    return np.asfortranarray(logits), np.zeros(len(masks), ">f8")


def ev_readonly(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    logits, values = ev_random(planes, globals_, masks)
    logits.flags.writeable = False
    values.flags.writeable = False
    return logits, values


def ev_values_out_of_range(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.shape, np.float32), np.full(len(masks), 1e30, np.float32)


def ev_mutates_inputs(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    """Scribbles over the arrays it was given (they must not be the search's own state)."""
    for a in (planes, globals_, masks):
        if a.flags.writeable:
            a[...] = 1
    return np.zeros(masks.shape, np.float32), np.zeros(len(masks), np.float32)


def ev_returns_inputs(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return masks, globals_[:, 0]


def ev_nested_search(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    """Calls back into Rust: a search inside the evaluation."""
    zertz.MCTS("uniform").search([zertz.Game()], 2)
    return ev_zeros(planes, globals_, masks)


class Reentrant:
    """An evaluator that searches again with the very MCTS that calls it (``target``, set once
    the MCTS exists): an error or a nested search, never a deadlock or a panic."""

    def __init__(self) -> None:
        self.target: zertz.MCTS | None = None

    def __call__(self, planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
        if self.target is not None:
            self.target.search([zertz.Game()], 2)
        return ev_zeros(planes, globals_, masks)


def ev_nan_values(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.shape, np.float32), np.full(len(masks), np.nan, np.float32)


def ev_inf_logits(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.where(masks, np.inf, 0).astype(np.float32), np.zeros(len(masks), np.float32)


def ev_neg_inf_logits(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.full(masks.shape, -np.inf, np.float32), np.zeros(len(masks), np.float32)


def ev_short_logits(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros((len(masks), masks.shape[1] - 1), np.float32), np.zeros(len(masks))


def ev_long_values(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.shape, np.float32), np.zeros(len(masks) + 1, np.float32)


def ev_flat_logits(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.size, np.float32), np.zeros(len(masks), np.float32)


def ev_scalars(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return 0.0, 0.0


def ev_none(planes: Any, globals_: Any, masks: Any) -> Any:
    return None


def ev_triple(planes: Any, globals_: Any, masks: Any) -> Any:
    return (*ev_zeros(planes, globals_, masks), None)


def ev_strings(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.full(masks.shape, "x"), np.full(len(masks), "y")


def ev_objects(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.full(masks.shape, None, dtype=object), np.full(len(masks), None, dtype=object)


def ev_complex(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    return np.zeros(masks.shape, np.complex64) + 1j, np.zeros(len(masks), np.complex64)


def ev_raises(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    raise EvaluatorError("evaluator exploded")


def ev_raises_late(planes: Any, globals_: Any, masks: Any) -> tuple[Any, Any]:
    """Answers well a few times (a batch of 1 is the first call of a search), then raises."""
    if planes.sum() > 60:  # positions with a few marbles placed
        raise EvaluatorError("evaluator exploded later")
    return ev_random(planes, globals_, masks)


def ev_not_callable() -> None:  # called with three arguments: TypeError
    pass


#: name -> (evaluator, kind). "good": a well-formed answer, the call must succeed; "bad": must
#: raise (ValueError or TypeError); "raises": must raise EvaluatorError unchanged; "maybe":
#: success or an ordinary exception.
EVALUATORS: dict[str, tuple[object, str]] = {
    "uniform": ("uniform", "good"),
    "rollout": ("rollout", "good"),
    "None": (None, "good"),
    "zeros": (ev_zeros, "good"),
    "random": (ev_random, "good"),
    "huge_logits": (ev_huge_logits, "good"),
    "nan_on_illegal": (ev_nan_on_illegal, "good"),
    "float64": (ev_float64, "maybe"),
    "lists": (ev_lists, "maybe"),
    "int_arrays": (ev_int_arrays, "maybe"),
    "big_endian_strided": (ev_big_endian_strided, "maybe"),
    "readonly": (ev_readonly, "good"),
    "values_out_of_range": (ev_values_out_of_range, "maybe"),
    "mutates_inputs": (ev_mutates_inputs, "maybe"),
    "returns_inputs": (ev_returns_inputs, "maybe"),
    "nested_search": (ev_nested_search, "maybe"),
    "reentrant": (Reentrant(), "maybe"),
    "nan_values": (ev_nan_values, "bad"),
    "inf_logits": (ev_inf_logits, "bad"),
    "neg_inf_logits": (ev_neg_inf_logits, "bad"),
    "short_logits": (ev_short_logits, "bad"),
    "long_values": (ev_long_values, "bad"),
    "flat_logits": (ev_flat_logits, "bad"),
    "scalars": (ev_scalars, "bad"),
    "none": (ev_none, "bad"),
    "triple": (ev_triple, "bad"),
    "strings": (ev_strings, "bad"),
    "objects": (ev_objects, "bad"),
    "complex": (ev_complex, "maybe"),
    "raises": (ev_raises, "raises"),
    "raises_late": (ev_raises_late, "maybe"),
    "not_callable_args": (ev_not_callable, "maybe"),
    "str_neural": ("neural", "ctor"),
    "str_empty": ("", "ctor"),
    "int": (3, "ctor"),
    "float_nan": (NAN, "ctor"),
    "list": ([ev_zeros], "ctor"),
}


def check_evaluator_outcome(kind: str, r: object, what: str) -> None:
    if kind == "good":
        ok(r, what)
    elif kind == "bad":
        refused(r, (ValueError, TypeError), what)
    elif kind == "raises":
        exc = refused(r, EvaluatorError, what)
        assert str(exc) == "evaluator exploded"


# --- MCTS -----------------------------------------------------------------------------------

SEARCH_KEYS = (
    "c_puct",
    "c_base",
    "fpu_reduction",
    "virtual_loss",
    "leaves_per_round",
    "policy_temperature",
    "dirichlet_alpha_total",
    "dirichlet_fraction",
    "gumbel_actions",
    "gumbel_c_visit",
    "gumbel_c_scale",
)


def test_mcts_fuzz_tables_cover_every_setting() -> None:
    """The keys and the tables below name every keyword of MCTS: a new one needs its values."""
    names = tuple(s["name"] for s in zertz.mcts_settings())
    assert SEARCH_KEYS == names and set(VALID_SETTINGS) == set(names)


def setting_valid(key: str, value: object) -> bool | None:
    """Whether MCTS(**{key: value}) must be accepted (True) or refused with ValueError (False);
    None where the type decides (TypeError or OverflowError are fine)."""
    if key in ("leaves_per_round", "gumbel_actions"):
        i = plain_int(value)
        # Beyond u32, OverflowError is as good as ValueError.
        if i is None or not 0 <= i < 2**32:
            return None
        if key == "gumbel_actions":
            # 0: a PUCT root; a Gumbel root chooses among 2 or more.
            return i == 0 or 2 <= i <= 65536
        return 1 <= i <= 65536
    x = as_f32(value)
    if x is None:
        return None
    if key in ("c_puct", "c_base", "policy_temperature", "gumbel_c_scale", "dirichlet_alpha_total"):
        return 0 < x < INF
    if key == "dirichlet_fraction":
        return 0 <= x <= 1
    if key == "fpu_reduction":
        return math.isfinite(x)
    return 0 <= x < INF  # virtual_loss, gumbel_c_visit


f32_finite = st.floats(-F32_MAX, F32_MAX, width=32)
f32_positive = st.floats(0.0, F32_MAX, exclude_min=True, width=32)
tiny_positive = st.sampled_from([1.4e-45, 1e-38, 1e-30, 1e-3])
huge_positive = st.sampled_from([float(np.float32(3e38)), 3.4028234663852886e38, 1e30])
positive_setting = st.one_of(st.floats(0.01, 5), f32_positive, tiny_positive, huge_positive)
#: Values every setting accepts, the extremes included (where arithmetic overflows).
VALID_SETTINGS: dict[str, st.SearchStrategy[object]] = {
    "c_puct": positive_setting,
    "c_base": st.one_of(st.floats(1, 30000), positive_setting),
    "fpu_reduction": st.one_of(st.floats(-1, 1), f32_finite, huge_positive.map(lambda x: -x)),
    "virtual_loss": st.one_of(st.floats(0, 3), huge_positive, st.just(0.0)),
    "leaves_per_round": st.one_of(st.integers(1, 16), st.sampled_from([1, 65536])),
    "policy_temperature": positive_setting,
    "dirichlet_alpha_total": positive_setting,
    "dirichlet_fraction": st.one_of(st.floats(0, 1), st.sampled_from([0.0, 1.0])),
    "gumbel_actions": st.one_of(st.integers(2, 20), st.sampled_from([0, 65536])),
    "gumbel_c_visit": st.one_of(st.floats(0, 100), huge_positive, st.just(0.0)),
    "gumbel_c_scale": positive_setting,
}


@st.composite
def search_settings(draw: st.DrawFn) -> dict[str, object]:
    out: dict[str, object] = {}
    for key in SEARCH_KEYS:
        if draw(st.booleans(), label=f"has {key}"):
            ints = ("leaves_per_round", "gumbel_actions")
            bad = st.one_of(hostile_ints, hostile) if key in ints else float_settings
            out[key] = draw(mostly(VALID_SETTINGS[key], bad, odds=8), label=key)
    return out


@st.composite
def game_lists(draw: st.DrawFn) -> tuple[object, bool]:
    """A list of games of one board (and whether it is a valid argument of search), or a hostile
    list."""
    if draw(st.integers(0, 5)) == 0:
        hostile_lists: list[object] = [
            None,
            [],
            [None],
            [zertz.Game(), None],
            [zertz.Game(), zertz.Game(48)],
            "abc",
            zertz.Game(),
            (zertz.Game(),),
            [1],
            np.array([zertz.Game()], dtype=object),
        ]
        return draw(st.sampled_from(hostile_lists)), False
    board = draw(st.sampled_from(BOARDS))
    blitz = draw(st.booleans())
    games = [
        random_game(board, blitz, draw(st.integers(0, 120)), draw(st.integers(0, 1000)))
        for _ in range(draw(st.integers(1, 3)))
    ]
    if draw(st.integers(0, 4)) == 0:
        games.append(games[0])  # the same game twice
    return games, not any(g.is_over for g in games)


def evaluator_names(names: list[str] | None = None) -> st.SearchStrategy[str]:
    """Names of :data:`EVALUATORS`: a well-formed one two times in three."""
    names = sorted(EVALUATORS) if names is None else names
    good = [n for n in names if EVALUATORS[n][1] == "good"]
    return mostly(st.sampled_from(good), st.sampled_from(names), odds=3)


@fuzz_settings(150)
@given(
    name=evaluator_names(),
    config=search_settings(),
    games=game_lists(),
    simulations=mostly(
        st.integers(0, 48),
        st.one_of(st.sampled_from([-1, 2**20 + 1, 2**32, 2**64, 10**9, True]), hostile),
    ),
    noise=mostly(st.booleans(), st.sampled_from([None, 1, "yes", np.bool_(True)])),
    alpha=st.one_of(st.none(), mostly(positive_setting, float_settings)),
    fraction=st.one_of(st.none(), mostly(st.floats(0, 1), float_settings)),
    seed=st.one_of(st.none(), mostly(st.integers(0, 2**64 - 1), st.one_of(hostile_ints, hostile))),
)
def test_fuzz_mcts(
    name: str,
    config: dict[str, object],
    games: tuple[object, bool],
    simulations: object,
    noise: object,
    alpha: object,
    fraction: object,
    seed: object,
) -> None:
    """MCTS(evaluator, **settings).search(games, simulations, noise=..., ...) with any of it
    hostile: settings out of range raise ValueError at once, a well-formed search succeeds with
    finite results, garbage answers raise, the evaluator's own exception comes through, and the
    MCTS stays usable after any error."""
    evaluator, kind = EVALUATORS[name]
    if isinstance(evaluator, Reentrant):
        evaluator = Reentrant()
    r = attempt(zertz.MCTS, evaluator, **config)
    event(f"MCTS: {outcome(r)}")
    verdicts = [setting_valid(k, v) for k, v in config.items()]
    if kind == "ctor":
        refused(r, (ValueError, TypeError, OverflowError), f"MCTS({evaluator!r})")
        return
    if all(v is True for v in verdicts):
        ok(r, f"MCTS(**{config})")
    elif False in verdicts and None not in verdicts:
        refused(r, ValueError, f"MCTS(**{config})")  # NaN settings once panicked in the search
    if not isinstance(r, zertz.MCTS):
        return
    mcts = r
    if isinstance(evaluator, Reentrant):
        evaluator.target = mcts
    game_list, games_valid = games
    kwargs: dict[str, object] = {"noise": noise}
    if alpha is not None:
        kwargs["noise_alpha_total"] = alpha
    if fraction is not None:
        kwargs["noise_fraction"] = fraction
    if seed is not None:
        kwargs["seed"] = seed
    result = attempt(mcts.search, game_list, simulations, **kwargs)
    event(f"search: {outcome(result)} {str(result.exc)[:60] if isinstance(result, Raised) else 0}")
    what = f"MCTS({name}, **{config}).search({_short.repr(game_list)}, {simulations!r}, {kwargs})"

    sims = plain_int(simulations)
    seed_valid = seed is None or (
        plain_int(seed) is not None and 0 <= plain_int(seed) < 2**64  # type: ignore[operator]
    )
    # Numbers that pyo3 converts without complaint (u32 simulations, u64 seed, f32 noise
    # settings, which are converted with noise=False too).
    ints_convert = seed_valid and sims is not None and 0 <= sims < 2**32
    floats_convert = all(x is None or as_f32(x) is not None for x in (alpha, fraction))
    noise_ok = floats_convert and (
        noise is False
        or (
            noise is True
            and (alpha is None or setting_valid("c_puct", alpha) is True)
            and (fraction is None or (as_f32(fraction) is not None and 0 <= as_f32(fraction) <= 1))  # type: ignore[operator]
        )
    )
    valid = (
        games_valid
        and sims is not None
        and 0 <= sims <= 48
        and not isinstance(simulations, bool)
        and noise_ok
        and seed_valid
    )
    # What must be refused: by ValueError if the games are fine, else by any exception. A seed or
    # a simulation count outside its unsigned range may be refused first, by OverflowError
    # (negative, too large) or TypeError (not an int), as pyo3 converts it (found by the long
    # fuzz: the test's mistake, not Rust's).
    refusal: type[Exception] | tuple[type[Exception], ...] = (
        (ValueError if ints_convert and floats_convert else (ValueError, OverflowError, TypeError))
        if games_valid
        else Exception
    )
    if noise is True and alpha is not None and setting_valid("c_puct", alpha) is False:
        refused(result, refusal, what)  # noise_alpha_total=inf once never returned
    if noise is True and fraction is not None:
        f = as_f32(fraction)
        if f is not None and not 0 <= f <= 1:
            refused(result, refusal, what)  # noise_fraction=2 was once accepted
    if sims is not None and sims > 2**20:
        refused(result, (ValueError, OverflowError) if games_valid else Exception, what)
    if valid and (sims or kind == "good"):  # 0 simulations do not call the evaluator
        check_evaluator_outcome(kind, result, what)
    if isinstance(result, tuple):
        policies, values, visits = result
        game_list = list(game_list)  # type: ignore[call-overload]  # a tuple is fine too
        a = game_list[0].action_space_size
        assert policies.shape == (len(game_list), a) and policies.dtype == np.float32
        assert values.shape == visits.shape == (len(game_list),)
        assert np.isfinite(policies).all() and np.isfinite(values).all(), what
        assert ((-1 <= values) & (values <= 1)).all(), f"{what}: values {values}"
        assert (policies >= 0).all()
        for g, p in zip(game_list, policies, strict=True):
            assert (p[~g.legal_action_mask()] == 0).all(), "policy mass on an illegal action"
    # Whatever happened, the MCTS still works (or keeps refusing a bad evaluator).
    again = attempt(mcts.search, [zertz.Game()], 4)
    check_evaluator_outcome(kind, again, f"{what}, then search([Game()], 4)")


# --- selfplay -------------------------------------------------------------------------------

VALID_CONFIG: dict[str, st.SearchStrategy[object]] = {
    "board": st.sampled_from(BOARDS),
    "blitz": st.booleans(),
    "threads": st.integers(0, 2),
    "games_per_worker": st.integers(1, 3),
    "seed": st.integers(0, 2**63 - 1),
    "full_search_probability": st.floats(0, 1),
    "temperature": st.one_of(st.floats(0, 10), tiny_positive, huge_positive, st.just(0.0)),
    "temperature_actions": st.integers(0, 30),
    "final_temperature": st.one_of(st.floats(0, 10), tiny_positive, huge_positive),
    "resign_threshold": st.floats(-1, 1),
    "resign_playout_fraction": st.floats(0, 1),
    "shard_size": st.integers(1, 64),
    "search.c_puct": st.one_of(f32_positive, tiny_positive, huge_positive),
    "search.c_base": st.one_of(f32_positive, tiny_positive, huge_positive),
    "search.fpu_reduction": st.one_of(f32_finite, huge_positive, huge_positive.map(lambda x: -x)),
    "search.virtual_loss": st.one_of(st.floats(0, 9.999999680285692e37, width=32), huge_positive),
    "search.leaves_per_round": st.integers(1, 8),
    "search.policy_temperature": st.one_of(f32_positive, tiny_positive, huge_positive),
    "search.dirichlet_alpha_total": st.one_of(f32_positive, tiny_positive, huge_positive),
    "search.dirichlet_fraction": st.floats(0, 1),
    "search.tree_reuse": st.booleans(),
    "search.gumbel_actions": st.one_of(st.just(0), st.integers(2, 20)),
    "search.gumbel_c_visit": st.one_of(st.floats(0, 100), huge_positive),
    "search.gumbel_c_scale": st.one_of(f32_positive, tiny_positive, huge_positive),
}
#: Keys that are always written, with small values: the run stays tiny.
TINY_CONFIG: dict[str, st.SearchStrategy[object]] = {
    "games": st.integers(0, 2),
    "full_simulations": st.integers(2, 4),
    "fast_simulations": st.integers(2, 4),
    "max_actions": st.integers(1, 40),
}
#: Values that validate() must refuse (ValueError naming the key), never huge valid ones.
HOSTILE_CONFIG: dict[str, list[object]] = {
    "board": [0, 38, -1, 2**63, "37", 37.0],
    "blitz": [1, "yes"],
    "games": [-1, 2**32, 1.5, "2"],
    "threads": [1025, -1],
    "games_per_worker": [0, 65537],
    "seed": [-1, "0", 1.5],
    "full_simulations": [0, 1, -1, 2**32],
    "fast_simulations": [0, 1, -1],
    "full_search_probability": [-0.1, 1.5, NAN, INF],
    "temperature": [-1.0, NAN, INF, -INF, -1e-45],
    "final_temperature": [-1.0, NAN, INF],
    "temperature_actions": [-1, 2**32],
    "resign_threshold": [5.0, -1.5, NAN, INF],
    "resign_playout_fraction": [-0.1, 2.0, NAN],
    "max_actions": [0, -1],
    "shard_size": [0, 2**20 + 1],
    "search.c_puct": [0.0, -1.0, NAN, INF, 1e39, 1e-50],
    "search.c_base": [0.0, NAN, INF, 1e39],
    "search.fpu_reduction": [NAN, INF, -INF, 1e39],
    "search.virtual_loss": [-1.0, NAN, INF, -1e-40],
    "search.leaves_per_round": [0, 65537, -1],
    "search.policy_temperature": [0.0, -1.0, NAN, INF, 1e-50],
    "search.dirichlet_alpha_total": [0.0, -1.0, NAN, INF, 1e-50],
    "search.dirichlet_fraction": [-0.1, 1.5, NAN],
    "search.tree_reuse": [1, "no"],
    "search.gumbel_actions": [-1, 1, 65537, 1.5],
    "search.gumbel_c_visit": [-1.0, NAN, INF],
    "search.gumbel_c_scale": [0.0, -1.0, NAN, INF],
    "gmaes": [3],
    "search.cpuct": [1.0],
    "other.x": [1],
}


def toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "nan" if math.isnan(v) else ("inf" if v == INF else "-inf" if v == -INF else repr(v))
    if isinstance(v, str):
        return json.dumps(v)
    return str(v)


def toml_text(config: dict[str, object]) -> str:
    top = [f"{k} = {toml_value(v)}" for k, v in config.items() if "." not in k]
    sections: dict[str, list[str]] = {}
    for k, v in config.items():
        if "." in k:
            section, key = k.split(".", 1)
            sections.setdefault(section, []).append(f"{key} = {toml_value(v)}")
    parts = ["\n".join(top)] + [f"[{s}]\n" + "\n".join(lines) for s, lines in sections.items()]
    return "\n".join(parts) + "\n"


@st.composite
def selfplay_configs(draw: st.DrawFn) -> tuple[dict[str, object], str | None]:
    """A tiny config and the key it makes invalid (None: valid)."""
    config: dict[str, object] = {k: draw(s, label=k) for k, s in TINY_CONFIG.items()}
    for key, strategy in VALID_CONFIG.items():
        if draw(st.integers(0, 3), label=f"has {key}") == 3:
            config[key] = draw(strategy, label=key)
    bad = None
    if draw(st.integers(0, 5), label="hostile") == 5:
        bad = draw(st.sampled_from(sorted(HOSTILE_CONFIG)), label="bad key")
        config[bad] = draw(st.sampled_from(HOSTILE_CONFIG[bad]), label=bad)
    return config, bad


SELFPLAY_EVALUATORS = [
    "uniform",
    "rollout",
    "None",
    "zeros",
    "random",
    "huge_logits",
    "nan_on_illegal",
    "float64",
    "raises",
    "raises_late",
    "nan_values",
    "short_logits",
    "none",
    "mutates_inputs",
]


@contextmanager
def inside(folder: Path) -> Iterator[None]:
    """Runs the block with ``folder`` as the working directory (for relative output paths)."""
    previous = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(previous)


@fuzz_settings(30)
@given(
    name=evaluator_names(SELFPLAY_EVALUATORS),
    config=selfplay_configs(),
    games=mostly(
        st.one_of(st.none(), st.integers(1, 2)),
        st.sampled_from([0, -1, 2**32, 2**64, 1.5, "2", True]),
        odds=8,
    ),
    threads=mostly(
        st.one_of(st.none(), st.integers(0, 2)), st.sampled_from([-1, 1025, 2**64, "1"]), odds=8
    ),
    seed=mostly(
        st.one_of(st.none(), st.integers(0, 2**64 - 1)), st.sampled_from([-1, 2**64, "0"]), odds=8
    ),
    out_kind=mostly(
        st.sampled_from(["fresh", "nested", "empty"]),
        st.sampled_from(["file", "output", "none", ""]),
        odds=8,
    ),
)
def test_fuzz_selfplay(
    name: str,
    config: tuple[dict[str, object], str | None],
    games: object,
    threads: object,
    seed: object,
    out_kind: str,
) -> None:
    """selfplay with tiny budgets and any config, evaluator, counts and output folder: a valid
    run writes shards that load_shards reads back; a bad config raises ValueError and creates
    nothing; the evaluator's exception comes through."""
    evaluator, kind = EVALUATORS[name]
    settings_, bad_key = config
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        config_path = tmp / "c.toml"
        config_path.write_text(toml_text(settings_))
        out: object = {
            "fresh": tmp / "run",
            "nested": tmp / "a" / "b" / "run",
            "empty": tmp / "empty",
            "file": tmp / "file",
            "output": tmp / "output",
            "none": None,
            "": "",
        }[out_kind]
        if out_kind == "empty":
            (tmp / "empty").mkdir()
        elif out_kind == "file":
            (tmp / "file").write_text("not a folder")
        elif out_kind == "output":
            (tmp / "output").mkdir()
            (tmp / "output" / "games-00.jsonl").write_text("")
        kwargs: dict[str, object] = {"config": config_path}
        for key, value in (("games", games), ("threads", threads), ("seed", seed)):
            if value is not None:
                kwargs[key] = value
        with inside(tmp):
            r = attempt(zertz.selfplay, out, evaluator, **kwargs)
        event(f"selfplay: {outcome(r)} {bad_key}")
        what = f"selfplay({out_kind!r}, {name}, {kwargs}) with config\n{toml_text(settings_)}"

        kwargs_valid = (
            (games is None or (plain_int(games) is not None and 0 <= games <= 2))  # type: ignore[operator]
            and (threads is None or (plain_int(threads) is not None and 0 <= threads <= 2))  # type: ignore[operator]
            and (seed is None or (plain_int(seed) is not None and 0 <= seed < 2**64))  # type: ignore[operator]
            and not isinstance(games, bool)
        )
        if bad_key is not None:
            # Config errors come first, name the key and leave no folder behind.
            if out_kind in ("fresh", "nested") and kwargs_valid:
                exc = refused(r, ValueError, what)
                assert bad_key.split(".")[-1] in str(exc) or "x" in str(exc), exc
                assert not (tmp / "run").exists() and not (tmp / "a").exists()
            return
        if out_kind == "" and kwargs_valid:
            # Found by the long fuzz: an empty path wrote into the current folder.
            exc = refused(r, ValueError, what)
            assert "empty path" in str(exc), exc
            assert not list(tmp.glob("shard-*")) and not list(tmp.glob("games-*"))
            return
        if not kwargs_valid or out_kind in ("file", "output", "none"):
            if out_kind in ("file", "output") and isinstance(r, dict):
                raise AssertionError(f"{what} wrote into {out_kind}")
            return
        played = plain_int(games) if games is not None else int(settings_["games"])  # type: ignore[call-overload]
        if kind in ("bad", "raises") and played:
            check_evaluator_outcome(kind, r, what)
            return
        if kind != "good":
            return
        summary = ok(r, what)
        assert summary["games"] == played, summary
        folder = Path(out)  # type: ignore[arg-type]
        assert not [p for p in folder.glob("*") if partial_owner(p.name)], "a partial shard is left"
        if summary["shards"]:
            board = int(settings_.get("board", 37))  # type: ignore[call-overload]
            data = ok(attempt(zertz.load_shards, summary["shards"], zertz.action_space_size(board)))
            assert len(data["planes"]) == summary["samples"]
            np.testing.assert_allclose(data["policy"].sum(axis=1)[data["full_search"]], 1, 1e-4)


# --- match settings -------------------------------------------------------------------------

#: Values of each match setting (``match_settings()``) that a match accepts and plays quickly.
MATCH_VALID: dict[str, st.SearchStrategy[object]] = {
    "games": st.integers(0, 2),
    "board": st.sampled_from(BOARDS),
    "blitz": st.booleans(),
    "seed": st.integers(0, 2**64 - 1),
    "threads": st.integers(0, 2),
    "search_threads": st.integers(0, 2),
    "opening_actions": st.integers(0, 6),
    "max_actions": st.sampled_from([1, 2, 40, 2**32 - 1]),
    "out": st.sampled_from([None, "fresh"]),
    "answer_time": st.sampled_from([1e-9, 0.5, 3, 86400.0]),
    "move_time": st.sampled_from([None, 0, 0.0, 0.001, 0.01]),
}
#: Values no setting of a type takes (TypeError, or ValueError for an integer out of every
#: range).
MATCH_WRONG_TYPE: dict[str, list[object]] = {
    "int": [-1, 2**64, 2**70, -(2**70), 1.5, "1", True, None, NAN, b"1", [1]],
    "bool": [1, 0, "yes", None, 2.0, [True]],
    "float": ["1", True, None, [1.0], b"1"],
    "float | None": ["1", True, [1.0]],
    "str | PathLike[str] | None": [5, b"x", 1.5, ["a"]],
}
#: Values of the right type out of a setting's own range (ValueError).
MATCH_OUT_OF_RANGE: dict[str, list[object]] = {
    "games": [2**24 + 1],
    "board": [0, 36, 38, 2**40],
    "threads": [1025, 2**63],
    "search_threads": [257, 2**63],
    "opening_actions": [2**32, 2**40],
    "max_actions": [0, 2**32],
    "answer_time": [0, 0.0, -1.0, 86400.5, 1e300, NAN, INF, -INF],
    "move_time": [-1, 0.0005, 3600.5, 1e300, NAN, INF, -INF],
    "seed": [],
    "blitz": [],
    "out": [],
}


def test_match_fuzz_tables_cover_every_setting() -> None:
    """The tables above name every match setting: a new one needs its values here."""
    names = {s["name"] for s in zertz.match_settings()}
    types = {s["type"] for s in zertz.match_settings()}
    assert set(MATCH_VALID) == names and set(MATCH_OUT_OF_RANGE) == names
    assert types <= set(MATCH_WRONG_TYPE)


@st.composite
def match_keywords(draw: st.DrawFn) -> tuple[dict[str, object], str | None, str | None]:
    """Keywords of ``zertz.match``: valid values, and at most one hostile one (a value of the
    wrong type or out of range, or an unknown keyword). Returns the keywords, the key expected
    in the refusal and its kind ("type", "range", "unknown"; None for a valid set)."""
    described = {s["name"]: s["type"] for s in zertz.match_settings()}
    kwargs: dict[str, object] = {"games": draw(MATCH_VALID["games"])}
    for name in sorted(described):
        if name != "games" and draw(st.booleans()):
            kwargs[name] = draw(MATCH_VALID[name])
    hostile = draw(st.sampled_from([None, None, "type", "range", "unknown"]))
    if hostile == "unknown":
        key = draw(st.sampled_from(["bogus", "Games", "game", "move-time", "search"]))
        kwargs[key] = 1
        return kwargs, key, hostile
    if hostile == "type":
        key = draw(st.sampled_from(sorted(described)))
        kwargs[key] = draw(st.sampled_from(MATCH_WRONG_TYPE[described[key]]))
        return kwargs, key, hostile
    if hostile == "range":
        key = draw(st.sampled_from(sorted(k for k, v in MATCH_OUT_OF_RANGE.items() if v)))
        kwargs[key] = draw(st.sampled_from(MATCH_OUT_OF_RANGE[key]))
        return kwargs, key, hostile
    return kwargs, None, None


@pytest.mark.engine
@fuzz_settings(40)
@given(
    players=st.tuples(
        st.sampled_from(["random", "greedy", "mcts:3", "alphabeta:1"]),
        st.sampled_from(["random", "greedy", "uniform:2"]),
    ),
    keywords=match_keywords(),
    out_exists=st.booleans(),
)
def test_fuzz_match_settings(
    players: tuple[str, str],
    keywords: tuple[dict[str, object], str | None, str | None],
    out_exists: bool,
) -> None:
    """``zertz.match`` with any keywords: a valid set plays its games (and writes them to a new
    ``out``); a value of the wrong type is a TypeError, one out of range a ValueError, an
    unknown keyword a TypeError, each naming the key; a file that exists is FileExistsError and
    stays as it was. Nothing panics or hangs."""
    kwargs, key, hostile = keywords
    with tempfile.TemporaryDirectory() as tmp_name:
        path = Path(tmp_name) / "games.jsonl"
        if kwargs.get("out") == "fresh":
            kwargs["out"] = path
            if out_exists:
                path.write_text("precious\n")
        r = attempt(zertz.match, *players, **kwargs)
        event(f"match: {outcome(r)} {hostile}")
        what = f"match{players} with {kwargs}"
        if hostile is not None:
            assert key is not None
            expected: dict[str, type[Exception] | tuple[type[Exception], ...]] = {
                "type": (TypeError, ValueError),
                "range": ValueError,
                "unknown": TypeError,
            }
            kinds = expected[hostile]
            exc = refused(r, kinds, what)
            assert key in str(exc), f"{what}: {exc}"
            if hostile == "unknown":
                assert "its settings: games, board" in str(exc), exc
        elif kwargs.get("out") == path and out_exists:
            exc = refused(r, FileExistsError, what)
            assert str(path) in str(exc), exc
        else:
            summary = ok(r, what)
            assert summary["games"] == kwargs["games"], summary
            assert summary["wins"] + summary["draws"] + summary["losses"] == kwargs["games"]
            move_time = kwargs.get("move_time") or None
            assert summary["move_time"] == move_time, summary
            if kwargs.get("out") == path:
                lines = path.read_text().splitlines()
                assert len(lines) == kwargs["games"], lines
                assert all(json.loads(line)["moves"] is not None for line in lines)
        if out_exists and kwargs.get("out") == path:
            assert path.read_text() == "precious\n"


# --- shared objects on several threads ------------------------------------------------------


@fuzz_settings(4)
@given(seed=st.integers(0, 2**32))
def test_fuzz_shared_objects_across_threads(seed: int) -> None:
    """Four threads call methods of one VecEnv, one Game and one MCTS at random: every call
    succeeds or raises an ordinary exception (a borrow error, an illegal move after a race), and
    nothing deadlocks."""
    env = zertz.VecEnv(4, threads=2, seed=seed)
    game = zertz.Game()
    mcts = zertz.MCTS("uniform")

    def play_random(rng: random.Random) -> None:
        indices = game.legal_action_indices()
        if len(indices):
            game.play(int(indices[rng.randrange(len(indices))]))

    ops: list[Callable[[random.Random], object]] = [
        lambda rng: env.step(env.sample_actions()),
        lambda rng: env.reset(seed=rng.randrange(100)),
        lambda rng: env.game(rng.randrange(-1, 5)),
        lambda rng: env.step(np.zeros(4, np.int64)),
        lambda rng: game.legal_moves(),
        lambda rng: game.encode(),
        play_random,
        lambda rng: game.clone(),
        lambda rng: mcts.search([game.clone(), zertz.Game()], rng.randrange(1, 16)),
        lambda rng: mcts.search([game], 4),
    ]
    failures: list[str] = []

    def worker(k: int) -> None:
        rng = random.Random(seed * 10 + k)
        for _ in range(25):
            op = rng.choice(ops)
            try:
                op(rng)
            except Exception as e:
                if is_internal_error(e):
                    failures.append(f"{type(e).__name__}: {e}")
            except BaseException as e:
                failures.append(f"{type(e).__module__}.{type(e).__qualname__}: {e}")

    workers = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(4)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + 3 * CALL_LIMIT_S
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
    assert not any(w.is_alive() for w in workers), "threads sharing objects deadlocked"
    assert not failures, failures


# --- load_shards ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Path]]:
    """Real shards of a tiny self-play, of the 37- and the 40-ring board."""
    out: dict[int, list[Path]] = {}
    root = tmp_path_factory.mktemp("shards")
    for board in (37, 40):
        config = root / f"{board}.toml"
        config.write_text(
            f"board = {board}\nfull_simulations = 2\nfast_simulations = 2\n"
            "max_actions = 40\nshard_size = 16\ngames_per_worker = 1\n"
        )
        summary = zertz.selfplay(root / str(board), "uniform", config=config, games=2, threads=1)
        out[board] = [Path(p) for p in summary["shards"]]
        assert out[board]
    return out


def npz_bytes(arrays: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def raw_npy(header_shape: tuple[int, ...], payload: bytes) -> bytes:
    """A .npy member whose header claims ``header_shape`` whatever the payload holds."""
    header = f"{{'descr': '<f4', 'fortran_order': False, 'shape': {header_shape}, }}"
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode() + payload


ARRAY_OPS = [
    "drop",
    "astype",
    "shrink",
    "empty",
    "grow",
    "flatten",
    "add_axis",
    "negate",
    "huge",
    "nan",
    "reverse",
    "uint64_shuffle",
    "set",
    "objects",
]


def mutate_array(a: npt.NDArray[Any], op: str, data: st.DataObject) -> npt.NDArray[Any] | None:
    if op == "drop":
        return None
    if op == "astype":
        dtype = data.draw(
            st.sampled_from(["i1", "u1", "i4", "u8", "f2", "f8", "?", "c8", "U3", ">i8"]),
            label="dtype",
        )
        with np.errstate(all="ignore"):
            return a.astype(dtype)
    if op == "shrink":
        return a[:-1]
    if op == "empty":
        return a[:0]
    if op == "grow":
        return np.concatenate([a, a[:1]])
    if op == "flatten":
        return a.reshape(-1)
    if op == "add_axis":
        return a[None]
    if op == "negate":
        return -a.astype(np.int64) if a.dtype.kind in "iub" else -a
    if op == "huge":
        fill = np.iinfo(a.dtype).max if a.dtype.kind in "iu" else 3e38
        return np.full_like(a, fill)
    if op == "nan":
        return np.full_like(a, np.nan, dtype=np.float32)
    if op == "reverse":
        return a[::-1].copy()
    if op == "uint64_shuffle":
        b = a.astype(np.uint64) if a.dtype.kind in "iu" else a.copy()
        if b.ndim == 1 and len(b) > 2:
            b[1], b[2] = b[2], b[1]
        return b
    if op == "set":
        value = data.draw(st.sampled_from([0, 1, 2, 40, 61, 99, -1, 2**40]), label="value")
        return np.array([value], dtype=np.int64)
    return np.array([object()] * max(1, len(a)), dtype=object)  # objects: a pickle


SHARD_MUTATIONS = [
    "intact",
    "foreign",
    "truncate",
    "flip",
    "array",
    "array",
    "array",
    "random",
    "empty",
    "npy",
    "pickle",
    "zip_junk",
    "huge_header",
]


@fuzz_settings(60)
@given(
    mutation=st.sampled_from(SHARD_MUTATIONS),
    actions_kind=st.sampled_from(["right"] * 5 + ["other", "numpy", "hostile"]),
    extra=st.booleans(),
    data=st.data(),
)
def test_fuzz_load_shards(
    shards: dict[int, list[Path]],
    mutation: str,
    actions_kind: str,
    extra: bool,
    data: st.DataObject,
) -> None:
    """load_shards of real shards, corrupted ones (truncated, flipped bytes, arrays dropped,
    reshaped, retyped, made inconsistent, a shard of another board) and files that are no shard,
    with right and wrong action-space sizes: success with consistent arrays, or ValueError
    naming the file (OSError for files that cannot be read)."""
    source = data.draw(st.sampled_from(shards[37]), label="shard")
    original = source.read_bytes()
    a37 = zertz.action_space_size(37)
    content = original
    with np.load(source) as f:
        arrays = {k: f[k] for k in f.files}
    if mutation == "foreign":
        content = shards[40][0].read_bytes()
    elif mutation == "truncate":
        content = original[: data.draw(st.integers(0, len(original) - 1), label="length")]
    elif mutation == "flip":
        buf = bytearray(original)
        for _ in range(data.draw(st.integers(1, 4), label="flips")):
            i = data.draw(st.integers(0, len(buf) - 1), label="at")
            buf[i] ^= data.draw(st.integers(1, 255), label="xor")
        content = bytes(buf)
    elif mutation == "array":
        key = data.draw(st.sampled_from(sorted(arrays)), label="key")
        op = data.draw(st.sampled_from(ARRAY_OPS), label="op")
        changed = mutate_array(arrays[key], op, data)
        if changed is None:
            del arrays[key]
        else:
            arrays[key] = changed
        content = npz_bytes(arrays)
    elif mutation == "random":
        content = data.draw(st.binary(max_size=300), label="bytes")
    elif mutation == "empty":
        content = b""
    elif mutation == "npy":
        buffer = io.BytesIO()
        np.save(buffer, arrays["planes"])
        content = buffer.getvalue()
    elif mutation == "pickle":
        content = pickle.dumps(arrays)
    elif mutation == "zip_junk":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr("planes.npy", data.draw(st.binary(max_size=100), label="junk"))
            z.writestr("board.npy", b"\x93NUMPY junk")
        content = buffer.getvalue()
    elif mutation == "huge_header":
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as z:
            for k, v in arrays.items():
                inner = io.BytesIO()
                np.save(inner, v)
                z.writestr(f"{k}.npy", inner.getvalue())
            z.writestr("planes.npy", raw_npy((2**40, 8, 7, 7), b"\0" * 64))
        content = buffer.getvalue()

    actions: object = {
        "right": a37,
        "other": zertz.action_space_size(40),
        "numpy": np.uint16(a37),
        "hostile": data.draw(st.one_of(hostile, st.sampled_from([0, -1, 10**12])), label="a"),
    }[actions_kind]
    with tempfile.TemporaryDirectory() as tmp_name:
        path = Path(tmp_name) / "shard.npz"
        path.write_bytes(content)
        paths = [path, shards[37][-1]] if extra else [path]
        r = attempt(zertz.load_shards, paths, actions)
        event(f"load_shards: {outcome(r)}")
        what = f"load_shards([{mutation} shard], {actions!r})"
        n = plain_int(actions)
        if n is None or n <= 0:
            refused(r, ValueError, what)
            return
        if mutation == "intact" and n == a37:
            ok(r, what)
        if (mutation == "foreign" and n == a37) or (mutation == "intact" and n != a37):
            exc = refused(r, ValueError, what)  # the board once went unchecked
            assert any(str(p) in str(exc) for p in paths), exc
        if isinstance(r, Raised):
            exc = refused(r, (ValueError, OSError), what)
            if isinstance(exc, ValueError):
                assert any(str(p) in str(exc) for p in paths), f"{what}: {exc} names no file"
            return
        s = len(r["planes"])
        assert r["planes"].ndim == 4 and r["planes"].dtype == np.float32
        assert r["policy"].shape == r["legal_action_mask"].shape == (s, n)
        for key in ("value", "root_value", "full_search", "game_id", "move_number", "to_play"):
            assert r[key].shape == (s,), (key, r[key].shape)
        assert r["globals"].shape[0] == s


def test_load_shards_hostile_paths(shards: dict[int, list[Path]], tmp_path: Path) -> None:
    a = zertz.action_space_size(37)
    cases: list[tuple[object, tuple[type[Exception], ...]]] = [
        ([], (ValueError,)),
        (None, (TypeError,)),
        ([None], (TypeError,)),
        ([tmp_path / "missing.npz"], (FileNotFoundError,)),
        ([tmp_path], (ValueError,)),
        (iter([shards[37][0], tmp_path / "missing.npz"]), (FileNotFoundError,)),
        ([shards[37][0], shards[40][0]], (ValueError,)),
        (3, (TypeError,)),
    ]
    for paths, kinds in cases:
        refused(attempt(zertz.load_shards, paths, a), kinds, f"load_shards({paths!r})")


# --- absurd sizes, in a child interpreter ---------------------------------------------------

CHILD = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    import numpy as np, zertz
    nan, inf = float("nan"), float("inf")
    try:
        value = eval(sys.argv[1])
        if isinstance(value, zertz.VecEnv):
            value.reset()
            value.step(value.sample_actions())
        print("RESULT OK")
    except Exception as e:
        print("RESULT RAISED", type(e).__name__, str(e)[:200].replace("\\n", " "))
    """
)


def in_child(expression: str, timeout: float = 60.0) -> tuple[str, str]:
    """Evaluates ``expression`` in a child interpreter (4 GiB of address space): ``("OK", "")``,
    or ``("RAISED", "Type message")``. A child that dies, prints no result or hangs fails."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, expression],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tempfile.gettempdir(),
        )
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{expression} hung (no result within {timeout} s)") from e
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode != 0 or not lines:
        raise AssertionError(
            f"{expression} killed the interpreter (exit status {done.returncode}):\n"
            f"{done.stderr[-2000:]}"
        )
    _, status, *rest = lines[-1].split(" ", 2)
    return status, " ".join(rest)


ABSURD = [
    "zertz.VecEnv(10**9)",  # once aborted the interpreter (allocation)
    "zertz.VecEnv(2**20 + 1)",
    "zertz.VecEnv(2**32)",
    "zertz.VecEnv(2**32 + 2)",
    "zertz.VecEnv(2**63)",
    "zertz.VecEnv(10**9, 61, True, threads=10**6)",
    "zertz.VecEnv(2, threads=10**6)",  # once started a million threads
    "zertz.VecEnv(2, threads=2**32 + 1)",
    "zertz.VecEnv(2, threads=2**63)",
    "zertz.MCTS('uniform', leaves_per_round=2**32)",
    "zertz.MCTS('uniform', leaves_per_round=2**31)",
    "zertz.MCTS('uniform').search([zertz.Game()], 2**20 + 1)",
    "zertz.MCTS('uniform').search([zertz.Game()], 10**12)",
    "zertz.MCTS('uniform').search([zertz.Game()], 2**32 + 5)",
    "zertz.selfplay('run', 'uniform', games=2**32)",
    "zertz.selfplay('run', 'uniform', games=2, threads=10**6)",
    "zertz.selfplay('run', 'uniform', games=2, threads=2**64 + 3)",
]


@pytest.mark.parametrize("expression", ABSURD)
def test_absurd_sizes_in_a_child(expression: str) -> None:
    """Sizes far out of range are refused with ValueError or OverflowError before anything is
    allocated or started: the child survives within 4 GiB, at once."""
    status, message = in_child(expression)
    assert status == "RAISED", f"{expression} was accepted"
    assert message.split(" ")[0] in ("ValueError", "OverflowError"), message


@fuzz_settings(8)
@given(
    n=st.one_of(st.integers(2**20 + 1, 2**64 + 10), st.integers(-(2**64), 0)),
    threads=st.one_of(st.integers(0, 2), st.integers(1025, 2**64 + 10)),
    board=st.sampled_from(BOARDS),
    opening=st.sampled_from([0, 10**9, 2**32 - 1]),
)
def test_fuzz_absurd_vecenv_in_a_child(n: int, threads: int, board: int, opening: int) -> None:
    expression = f"zertz.VecEnv({n}, {board}, threads={threads}, opening_plies={opening})"
    status, message = in_child(expression)
    assert status == "RAISED", f"{expression} was accepted"
    assert message.split(" ")[0] in ("ValueError", "OverflowError"), message


# --- regressions: one targeted test per known defect ----------------------------------------


@pytest.mark.parametrize(
    ("keyword", "value"),
    [("c_puct", NAN), ("c_base", INF), ("fpu_reduction", NAN), ("virtual_loss", NAN)],
)
def test_regression_mcts_non_finite_settings_raise_value_error(keyword: str, value: float) -> None:
    """These once raised PanicException (a BaseException) from search."""

    def build_and_search() -> object:
        return zertz.MCTS("uniform", **{keyword: value}).search([zertz.Game()], 10)  # type: ignore[arg-type]

    refused(attempt(build_and_search), ValueError, f"MCTS({keyword}={value})")


def test_regression_noise_alpha_total_inf_does_not_hang() -> None:
    """``noise_alpha_total=inf`` once made MCTS.search never return."""
    r = attempt(zertz.MCTS("uniform").search, [zertz.Game()], 10, noise=True, noise_alpha_total=INF)
    refused(r, ValueError, "search(noise_alpha_total=inf)")


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("noise_fraction", 2.0),
        ("noise_fraction", -0.5),
        ("noise_alpha_total", 0.0),
        ("noise_alpha_total", -1.0),
    ],
)
def test_regression_noise_settings_out_of_range_are_refused(keyword: str, value: float) -> None:
    """noise_fraction=2 and alpha <= 0 were once accepted."""
    r = attempt(zertz.MCTS("uniform").search, [zertz.Game()], 10, noise=True, **{keyword: value})
    refused(r, ValueError, f"search(noise=True, {keyword}={value})")


def test_regression_vecenv_billion_games_is_refused() -> None:
    """``VecEnv(10**9)`` once aborted the interpreter (run in a child)."""
    status, message = in_child("zertz.VecEnv(10**9)")
    assert (status, message.split(" ")[0]) == ("RAISED", "ValueError"), message


def test_regression_vecenv_million_threads_is_refused() -> None:
    """``VecEnv(2, threads=10**6)`` once started a million threads (run in a child)."""
    status, message = in_child("zertz.VecEnv(2, threads=10**6)")
    assert (status, message.split(" ")[0]) == ("RAISED", "ValueError"), message


@pytest.mark.parametrize("i", [2, 4, 10**9, 2**64, -3])
def test_regression_vecenv_game_out_of_range_is_index_error(i: int) -> None:
    """``env.game(4)`` of 2 games once raised TypeError."""
    refused(attempt(zertz.VecEnv(2).game, i), IndexError, f"game({i})")


@pytest.mark.parametrize("kind", NUMPY_INT_TYPES)
def test_regression_game_play_takes_numpy_integers(kind: type[np.integer[Any]]) -> None:
    """``Game.play(np.uint64(...))`` was once refused."""
    game = zertz.Game()
    index = int(game.legal_action_indices()[0])
    if index > np.iinfo(kind).max:
        index = int(np.flatnonzero(game.legal_action_mask())[0])
    ok(attempt(game.play, kind(index)), f"play({kind.__name__}({index}))")
    assert len(game.moves) == 1
    ok(attempt(game.decode_action, kind(index)), "decode_action")


def test_regression_load_shards_checks_the_board(
    shards: dict[int, list[Path]], tmp_path: Path
) -> None:
    """A shard's board was once not checked against the action-space size."""
    a37 = zertz.action_space_size(37)
    r = attempt(zertz.load_shards, [shards[40][0]], a37)
    assert str(shards[40][0]) in str(refused(r, ValueError, "a 40-ring shard as 37"))
    with np.load(shards[37][0]) as f:
        arrays = {k: f[k] for k in f.files}
    for board in (40, 61, 38, 0):
        arrays["board"] = np.array([board], dtype=np.int64)
        path = tmp_path / f"relabelled-{board}.npz"
        path.write_bytes(npz_bytes(arrays))
        refused(attempt(zertz.load_shards, [path], a37), ValueError, f"board {board} as 37")
        if board in BOARDS:
            refused(
                attempt(zertz.load_shards, [path], zertz.action_space_size(board)),
                ValueError,
                f"37-ring arrays labelled {board}",
            )


@pytest.mark.parametrize("dtype", [np.uint64, np.uint32, np.uint8])
def test_regression_load_shards_unsigned_offsets(
    shards: dict[int, list[Path]], tmp_path: Path, dtype: type[np.unsignedinteger[Any]]
) -> None:
    """Found by the long fuzz: unsigned policy_offsets that go down wrapped round in np.diff
    instead of going negative, and np.repeat raised TypeError (uint64 to int64). Unsigned
    offsets that are right load; offsets that go down are refused, naming the file."""
    a37 = zertz.action_space_size(37)
    with np.load(shards[37][0]) as f:
        arrays = {k: f[k] for k in f.files}
    good = zertz.load_shards([shards[37][0]], a37)
    offsets = arrays["policy_offsets"]
    if int(offsets[-1]) > np.iinfo(dtype).max:
        pytest.skip(f"the shard's offsets do not fit {dtype}")
    arrays["policy_offsets"] = offsets.astype(dtype)
    path = tmp_path / "unsigned.npz"
    path.write_bytes(npz_bytes(arrays))
    again = ok(attempt(zertz.load_shards, [path], a37), "unsigned offsets")
    np.testing.assert_array_equal(again["policy"], good["policy"])
    down = offsets.astype(dtype)
    down[1], down[2] = down[2], down[1]  # the second sample's entries end before they start
    assert down[1] > down[2]
    arrays["policy_offsets"] = down
    path.write_bytes(npz_bytes(arrays))
    exc = refused(attempt(zertz.load_shards, [path], a37), ValueError, "offsets going down")
    assert str(path) in str(exc) and "policy_offsets" in str(exc), exc


@pytest.mark.parametrize("board", BOARDS)
def test_decode_action_round_trips_through_action_index(board: int) -> None:
    """Found by this fuzz: ``decode_action`` names every index of the action space, and
    ``action_index`` of that name is the index again ("legal or not", say both docstrings). The
    hop indices whose landing ring is off the board decoded to "a1xa1"-like self-hops that
    ``action_index`` refuses (84 indices on 37 rings, e.g. 4221); they raise ValueError now."""
    game = zertz.Game(board)
    broken = []
    off_board: list[int] = []
    for i in range(game.action_space_size):
        r = attempt(game.decode_action, i)
        if isinstance(r, Raised):
            exc = refused(r, ValueError, f"decode_action({i})")
            assert "off the board" in str(exc), exc
            off_board.append(i)
            continue
        back = attempt(game.action_index, r)
        if back != i:
            broken.append((i, r, back))
    assert not broken, f"{len(broken)} indices do not round-trip, e.g. {broken[:3]}"
    # Only hops are off the board, and on 37 rings exactly the 84 found by the fuzz.
    first_hop = 3 * board * (board + 1)
    assert off_board and all(first_hop <= i < game.action_space_size - 1 for i in off_board)
    if board == 37:
        assert len(off_board) == 84 and 4221 in off_board


@pytest.mark.parametrize(("full", "fast"), [(1, 1), (2, 1), (1, 2)])
def test_regression_selfplay_with_one_simulation(tmp_path: Path, full: int, fast: int) -> None:
    """Found by this fuzz: a search of 1 simulation visits no child, and picking the move from
    no visits panicked (index out of bounds in selfplay/src/driver.rs ``pick``). Such a search
    has no policy target: the config is refused, naming the key, and nothing is written."""
    config = tmp_path / "c.toml"
    config.write_text(f"full_simulations = {full}\nfast_simulations = {fast}\nmax_actions = 20\n")
    r = attempt(zertz.selfplay, tmp_path / "run", "uniform", config=config, games=1, threads=1)
    key = "full_simulations" if full == 1 else "fast_simulations"
    exc = refused(r, ValueError, f"selfplay(full_simulations={full}, fast_simulations={fast})")
    assert key in str(exc) and "at least 2" in str(exc), exc
    assert not (tmp_path / "run").exists()
    # Two simulations are enough: every full search's policy target sums to 1.
    config.write_text("full_simulations = 2\nfast_simulations = 2\nmax_actions = 20\n")
    summary = ok(attempt(zertz.selfplay, tmp_path / "run", "uniform", config=config, games=1))
    data = zertz.load_shards(summary["shards"], zertz.action_space_size(37))
    np.testing.assert_allclose(data["policy"].sum(axis=1)[data["full_search"]], 1, 1e-5)


# --- the training side's files ------------------------------------------------------------
# (issue "Hostile input, fourth round"): random bytes and other kinds of file in place of a
# run's config, checkpoint, metrics and network, read as a resume and the readers read them.

#: The files of a run folder that users (or damage) may replace, by the kind of their bound.
TRAINING_FILES = {
    "config": "config.toml",
    "checkpoint": "checkpoint.pt",
    "metrics": "metrics.jsonl",
    "network": "models/best.safetensors",
}
#: What takes a file's place: its own bytes ("same"), random bytes, its bytes with some flipped
#: or cut short, nothing, a FIFO, a link to /dev/zero, a folder, a link to nothing, a sparse
#: file one byte past its kind's bound.
FILE_SHAPES = (
    "same",
    "random",
    "flipped",
    "truncated",
    "empty",
    "fifo",
    "dev-zero",
    "folder",
    "dangling",
    "past-bound",
)


@pytest.fixture(scope="module")
def training_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A finished tiny training run of one iteration, and its config's text."""
    from zertz.training import parse_config, train

    tiny = Path(__file__).resolve().parents[2] / "configs" / "train" / "tiny.toml"
    text = tiny.read_text().replace("iterations = 2", "iterations = 1")
    folder = tmp_path_factory.mktemp("training-files") / "run"
    train(parse_config(text), folder, log=lambda _: None, progress=False)
    return folder, text


def put_in_place(path: Path, shape: str, kind: str, data: st.DataObject) -> None:
    """Replaces the file ``path`` (of the bound ``kind``) by ``shape`` (see FILE_SHAPES)."""
    from zertz.files import LIMITS

    original = path.read_bytes()
    if shape == "same":
        return
    path.unlink()
    if shape == "random":
        path.write_bytes(data.draw(st.binary(max_size=4096), label="bytes"))
    elif shape == "flipped":
        flipped = bytearray(original)
        for i in data.draw(st.lists(st.integers(0, len(flipped) - 1), min_size=1, max_size=8)):
            flipped[i] ^= data.draw(st.integers(1, 255), label="xor")
        path.write_bytes(bytes(flipped))
    elif shape == "truncated":
        path.write_bytes(original[: data.draw(st.integers(0, len(original) - 1), label="cut")])
    elif shape == "empty":
        path.write_bytes(b"")
    elif shape == "fifo":
        os.mkfifo(path)
    elif shape == "dev-zero":
        path.symlink_to("/dev/zero")
    elif shape == "folder":
        path.mkdir()
    elif shape == "dangling":
        path.symlink_to(path.with_name("nothing-here"))
    else:
        with open(path, "wb") as f:
            f.truncate(LIMITS[kind] + 1)


@pytest.mark.engine
@fuzz_settings(30)
@given(
    target=st.sampled_from(sorted(TRAINING_FILES)),
    shape=st.sampled_from(FILE_SHAPES),
    data=st.data(),
)
def test_fuzz_training_files(
    training_run: tuple[Path, str], target: str, shape: str, data: st.DataObject
) -> None:
    """A run folder with one file replaced, opened as a resume opens it (``Run(...).start()``)
    and read by the file's own readers: each call succeeds or raises an ordinary exception of
    one line that names the file (what ``python -m zertz`` prints), within the call limit; never
    a hang (a FIFO), a read without end (/dev/zero), a traceback of several lines or a panic.
    The run's own files open."""
    import shutil

    from zertz.exported import load_network, read_metadata
    from zertz.plots import read_metrics
    from zertz.training import Run, load_checkpoint, load_config, parse_config

    source, text = training_run
    with tempfile.TemporaryDirectory() as scratch:
        run = Path(shutil.copytree(source, Path(scratch) / "run", symlinks=True))
        path = run / TRAINING_FILES[target]
        put_in_place(path, shape, target, data)
        event(f"{target}: {shape}")
        calls: dict[str, Callable[[], object]] = {
            "resume": lambda: Run(parse_config(text), run).start()
        }
        if target == "config":
            calls["load_config"] = lambda: load_config(path)
        elif target == "checkpoint":
            calls["load_checkpoint"] = lambda: load_checkpoint(path)
        elif target == "metrics":
            calls["read_metrics"] = lambda: read_metrics(run)
        else:
            calls["read_metadata"] = lambda: read_metadata(path)
            calls["load_network"] = lambda: load_network(path)
        for name, call in calls.items():
            r = attempt(call)
            what = f"{name} with {target} {shape}"
            event(f"{target}: {name}: {outcome(r)}")
            if shape == "same":
                ok(r, what)
            elif isinstance(r, Raised):
                message = str(r.exc).strip()
                assert "\n" not in message, f"{what}: more than one line: {message}"
                assert path.name in message, f"{what}: {message} names no file"


# --- network files ----------------------------------------------------------------------------
# What the engine reads from a shared file is its security boundary: a network file (safetensors)
# whose header, metadata or bytes are changed is read or refused, and what it reads is what the
# reference implementation of safetensors reads.

#: What a fuzzed network file's JSON values may become.
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.sampled_from([0, 1, 37, 61, *HUGE_INTS])
    | st.sampled_from(EXTREME_FLOATS)
    | st.text(max_size=8)
    | st.sampled_from(["F32", "F16", "BF16", "F64", "I32", "U8", "BOOL", "ZertzNet", "standard"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)
#: The ways of changing a network file (each example applies one to three).
NETWORK_CHANGES = (
    "dtype",
    "shape",
    "offsets",
    "drop-tensor",
    "add-tensor",
    "metadata-key",
    "metadata-value",
    "zertz-value",
    "zertz-drop",
    "zertz-text",
    "flip",
    "truncate",
    "append",
    "length",
)


@pytest.fixture(scope="module")
def network_file_bytes() -> bytes:
    """A network file of the tiny size, as ``zertz.export`` writes it."""
    from zertz.exported import encode
    from zertz.nn import NetConfig, ZertzNet

    return encode(ZertzNet(NetConfig.preset("tiny"), boards=[37, 61]))


def changed_network_file(original: bytes, data: st.DataObject) -> bytes:
    """``original`` (a network file) with one to three of :data:`NETWORK_CHANGES`; its header's
    checksum recomputed or not."""
    import hashlib

    n = int.from_bytes(original[:8], "little")
    header: dict[str, Any] = json.loads(original[8 : 8 + n])
    body = original[8 + n :]
    length: int | None = None
    names = sorted(k for k in header if k != "__metadata__")
    changes = data.draw(st.lists(st.sampled_from(NETWORK_CHANGES), min_size=1, max_size=3))
    for change in changes:
        event(f"network file: {change}")
        meta = header.setdefault("__metadata__", {})
        name = data.draw(st.sampled_from(names), label="tensor")
        if change == "dtype" and name in header:
            header[name]["dtype"] = data.draw(JSON_VALUES, label="dtype")
        elif change == "shape" and name in header:
            header[name]["shape"] = data.draw(
                st.lists(st.sampled_from([0, 1, 2, 32, 4441, *HUGE_INTS]), max_size=4)
                | JSON_VALUES,
                label="shape",
            )
        elif change == "offsets" and name in header:
            ends = st.sampled_from([0, 1, 4, len(body) - 4, len(body), len(body) + 4, *HUGE_INTS])
            header[name]["data_offsets"] = data.draw(st.lists(ends, max_size=3), label="offsets")
        elif change == "drop-tensor":
            header.pop(name, None)
        elif change == "add-tensor":
            header[data.draw(st.text(max_size=12), label="name")] = data.draw(
                JSON_VALUES, label="tensor"
            )
        elif change == "metadata-key":
            meta[data.draw(st.text(max_size=8), label="key")] = data.draw(JSON_VALUES)
        elif change == "metadata-value":
            key = data.draw(st.sampled_from(["zertz", "sha256"]), label="key")
            meta[key] = data.draw(JSON_VALUES, label="value")
        elif change in ("zertz-value", "zertz-drop", "zertz-text") and isinstance(
            meta.get("zertz"), str
        ):
            try:
                zertz_meta = json.loads(meta["zertz"])
            except ValueError:
                continue
            if not isinstance(zertz_meta, dict) or not zertz_meta:
                continue
            key = data.draw(st.sampled_from(sorted(zertz_meta)), label="zertz key")
            if change == "zertz-value":
                zertz_meta[key] = data.draw(JSON_VALUES, label="zertz value")
            elif change == "zertz-drop":
                del zertz_meta[key]
            text = json.dumps(zertz_meta)
            if change == "zertz-text":
                cut = data.draw(st.integers(0, len(text)), label="cut")
                text = text[:cut] + data.draw(st.text(max_size=4), label="text") + text[cut:]
            meta["zertz"] = text
        elif change == "flip" and body:
            flipped = bytearray(body)
            flipped[data.draw(st.integers(0, len(body) - 1), label="at")] ^= data.draw(
                st.integers(1, 255), label="xor"
            )
            body = bytes(flipped)
        elif change == "truncate":
            body = body[: data.draw(st.integers(0, len(body)), label="cut")]
        elif change == "append":
            body += data.draw(st.binary(min_size=1, max_size=16), label="appended")
        elif change == "length":
            length = data.draw(st.sampled_from([0, 1, 7, n - 1, n + 1, *HUGE_INTS]), label="length")
    if data.draw(st.booleans(), label="checksum recomputed"):
        header.setdefault("__metadata__", {})["sha256"] = hashlib.sha256(body).hexdigest()
    encoded = json.dumps(header).encode()
    prefix = (len(encoded) if length is None else length) % 2**64
    return prefix.to_bytes(8, "little") + encoded + body


@pytest.mark.engine
@fuzz_settings(60)
@given(data=st.data())
def test_fuzz_network_files(
    network_file_bytes: bytes, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """A network file changed in its header, its metadata or its bytes: the engine reads it
    (``decode_network``, ``read_network``, ``load_network``, ``read_metadata``) or refuses it
    with a ValueError of one line naming it, the same from bytes and from a file; never a panic,
    a hang or another exception. What it reads, safetensors' reference implementation reads
    alike, tensor for tensor, and its checksum is that of the bytes after the header."""
    import hashlib

    import safetensors.numpy

    import zertz_engine
    from zertz.exported import load_network, read_metadata

    blob = changed_network_file(network_file_bytes, data)
    path = tmp_path_factory.mktemp("network") / "fuzz.safetensors"
    path.write_bytes(blob)
    decoded = attempt(zertz_engine.decode_network, blob, str(path))
    read = attempt(zertz_engine.read_network, str(path))
    event(f"network file: {outcome(decoded)}")
    if isinstance(decoded, Raised):
        exc = refused(read, ValueError, "read_network")
        assert str(exc) == str(decoded.exc), (str(exc), str(decoded.exc))
        message = str(exc)
        assert isinstance(decoded.exc, ValueError), message
        assert "\n" not in message and str(path) in message, message
        for reader in (load_network, read_metadata):
            again = refused(attempt(reader, path), ValueError, reader.__name__)
            assert str(again) == message, (reader.__name__, str(again), message)
        return
    assert ok(read, "read_network") == decoded
    meta_json, sha256, tensors = decoded
    n = int.from_bytes(blob[:8], "little")
    assert sha256 == hashlib.sha256(blob[8 + n :]).hexdigest()
    reference = safetensors.numpy.load(blob)
    assert sorted(reference) == [name for name, _, _ in tensors]
    for name, shape, values in tensors:
        assert list(reference[name].shape) == shape, name
        assert reference[name].astype("<f4").tobytes() == values, name
    net = ok(attempt(load_network, path), "load_network")
    assert net.boards == json.loads(meta_json)["boards"]
    ok(attempt(read_metadata, path), "read_metadata")


# --- opponents written in Python --------------------------------------------------------------

#: What a fuzzed opponent answers at one of its turns: a legal action, or one of the hostile
#: answers (an illegal or out-of-range index, a value of another type, an exception, a call back
#: into the environment it plays in).
ANSWERS = [
    "legal",
    "legal",
    "illegal",
    "out_of_range",
    "negative",
    "huge",
    "text",
    "float",
    "none",
    "raise",
    "interrupt-like",
    "reenter_step",
    "reenter_reset",
    "reenter_read",
]


class Peculiar(Exception):
    """An exception of the opponent's own."""


class FuzzOpponent:
    """An opponent that answers its turns from a script (cycled) of :data:`ANSWERS`."""

    def __init__(self, script: list[str], size: int) -> None:
        self.script, self.size, self.turn = script, size, 0
        self.env: Any = None

    def answer(self, mask: npt.NDArray[np.bool_]) -> Any:
        kind = self.script[self.turn % len(self.script)]
        self.turn += 1
        legal, illegal = np.flatnonzero(mask), np.flatnonzero(~mask)
        if kind == "legal" or (kind == "illegal" and len(illegal) == 0):
            return int(legal[self.turn % len(legal)])
        if kind == "reenter_step":
            self.env.step(self.env.sample_actions() if hasattr(self.env, "sample_actions") else 0)
        if kind == "reenter_reset":
            self.env.reset()
        if kind == "reenter_read":
            repr(self.env.game(0) if hasattr(self.env, "game") and callable(self.env.game) else 0)
            return int(legal[0])
        answers: dict[str, Any] = {
            "illegal": int(illegal[0]) if len(illegal) else 0,
            "out_of_range": self.size,
            "negative": -1,
            "huge": 2**70,
            "text": "Wd4,a1",
            "float": 1.5,
            "none": None,
        }
        if kind == "raise":
            raise Peculiar("the opponent's own failure")
        if kind == "interrupt-like":
            raise RuntimeError("a failure that looks like the environment's")
        return answers.get(kind, int(legal[0]))


def _fuzz_front(
    front: str, opponent: FuzzOpponent
) -> tuple[Any, Callable[[], Any], Callable[[], Any]]:
    """The environment of ``front`` against ``opponent``, with its step (the learner's first
    legal action) and its reset."""
    from zertz.gymnasium import VectorEnv, ZertzEnv

    def batched(observations: Any, masks: npt.NDArray[np.bool_]) -> Any:
        return [opponent.answer(m) for m in masks]

    env: Any
    if front == "VecEnv":
        env = zertz.VecEnv(2, 37, opponent=batched, first_player="random", seed=1, threads=2)
        masks = [np.ones((2, 1), dtype=bool)]

        def step() -> Any:
            out = env.step(masks[0].argmax(axis=1))
            masks[0] = out[-1]["legal_action_mask"]
            assert (out[-1]["to_play"] == 0).all()
            return out

        def reset() -> Any:
            out = env.reset(seed=2)
            masks[0] = out[-1]["legal_action_mask"]
            return out

        return env, step, reset
    if front == "VectorEnv":
        env = VectorEnv(2, 37, opponent=batched, first_player="random", seed=1, threads=2)

        def vstep() -> Any:
            out = env.step(env.action_masks().argmax(axis=1))
            assert (out[-1]["to_play"] == 0).all()
            return out

        return env, vstep, lambda: env.reset(seed=2)
    if front == "ZertzEnv":
        env = ZertzEnv(37, opponent=lambda obs, mask: opponent.answer(mask), first_player="random")

        def gstep() -> Any:
            out = env.step(int(env.action_masks().argmax()))
            assert out[2] or out[3] or env.game.to_play == "P0"
            return out

        return env, gstep, lambda: env.reset(seed=2)
    env = zertz.Episode(37, first_player="P1")
    env.set_opponent(lambda game: opponent.answer(game.legal_action_mask()))

    def estep() -> Any:
        step = env.step(int(env.game.legal_action_mask().argmax()))
        assert step.terminated or step.truncated or env.game.to_play == "P0"
        return step

    return env, estep, lambda: env.restart("P1")


@fuzz_settings(40)
@given(
    front=st.sampled_from(["VecEnv", "VectorEnv", "ZertzEnv", "Episode"]),
    script=st.lists(st.sampled_from(ANSWERS), min_size=1, max_size=12),
    calls=st.lists(st.sampled_from(["step", "step", "step", "reset"]), min_size=1, max_size=25),
)
def test_fuzz_python_opponents(front: str, script: list[str], calls: list[str]) -> None:
    """An opponent written in Python that answers garbage, raises, or calls back into the
    environment it plays in, in every front end that takes one: each call succeeds or raises an
    ordinary exception within the call limit; after a step that raised, every step raises
    RuntimeError naming the failure until a reset; a step that succeeds leaves the learner to
    move; and a reset with a well-behaved opponent always plays."""
    pytest.importorskip("gymnasium")
    opponent = FuzzOpponent(script, zertz.action_space_size(37))
    env, step, reset = _fuzz_front(front, opponent)
    opponent.env = env
    needs_reset = isinstance(attempt(reset), Raised)
    for call in calls:
        event(f"{front}: {call}")
        if call == "reset":
            needs_reset = isinstance(attempt(reset), Raised)
            continue
        r = attempt(step)
        event(f"{front}: step: {outcome(r)}")
        if needs_reset:
            e = refused(r, RuntimeError, f"{front}: a step after a failure")
            assert "needs a reset" in str(e), e
        elif isinstance(r, Raised):
            needs_reset = True
    opponent.script = ["legal"]
    ok(attempt(reset), f"{front}: a reset with a legal opponent")
    for _ in range(3):
        ok(attempt(step), f"{front}: a step with a legal opponent")
