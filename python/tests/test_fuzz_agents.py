"""Property-based fuzzing of the entry points that make or teach the project's network:
``zertz.boardnet.BoardNet`` and ``make_network`` (a preset, sizes, a network file, "builtin" or a
``ZertzNet``), and ``zertz.training.pretraining.clone`` and ``distill`` (their counts, rates,
weights and seeds, their dataset and games folders), with hostile values mixed in: unknown
presets, sizes of the wrong type or out of range, network files that are truncated, random bytes,
folders, FIFOs or a link to ``/dev/zero``, boards and marble sets that do not exist, NaN,
infinities, bools, huge ints, datasets and game folders that are missing, files, FIFOs or hold
corrupted shards.

What every call must do: succeed, or raise an ordinary exception of a documented kind
(ValueError, TypeError, OSError) with a message, within ``CALL_LIMIT_S``: never a hang (a FIFO
is refused, never opened), never a ``BaseException`` that is not an ``Exception`` (pyo3's
``PanicException``), never an "internal error of zertz" (a Rust panic). Each drawn argument
carries its verdict (fine, refused with these exceptions, or either), so the fuzz also checks
that every bad argument is refused, with an error of its kind, that a good call succeeds and
does what it says, and that a refused call leaves the network as it was.

The Hypothesis profiles are those of ``test_fuzz.py``: "ci" (the default: few examples,
derandomized, about a minute on 2 busy cores) and "long" (``ZERTZ_FUZZ_PROFILE=long``), neither
with an example database.
"""

from __future__ import annotations

import itertools
import math
import os
import random
import reprlib
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import pytest
import torch
from hypothesis import event, given
from hypothesis import strategies as st
from test_fuzz import fuzz_settings  # (and its Hypothesis profiles, "ci" and "long")
from test_hostile_training import never_opened

import zertz
from zertz._zertz import BOARDS, action_space_size, shard_glob
from zertz.boardnet import BoardNet, make_network
from zertz.exported import export
from zertz.nn import NetConfig, NonFiniteError, ZertzNet
from zertz.training.pretraining import clone, distill
from zertz_engine import NETWORK_SIZE_LIMITS

pytestmark = pytest.mark.engine

# --- the watchdog and the property of every call --------------------------------------------

#: A call's time limit: what only a hang reaches, however busy the machine (each call here takes
#: well under a few seconds).
CALL_LIMIT_S = 60.0

#: The exceptions these entry points document.
DOCUMENTED: tuple[type[Exception], ...] = (ValueError, TypeError, OSError)

#: Every FIFO the fixtures made: opened for writing when a call hangs, so that a reader blocked
#: on one gets its end of file and the hung thread ends.
FIFOS: list[Path] = []

_short = reprlib.Repr()
_short.maxstring = 60
_short.maxother = 60


class Refused:
    """The documented exception a call raised (what :func:`attempt` returns instead of a
    result)."""

    def __init__(self, exc: Exception) -> None:
        self.exc = exc

    def __repr__(self) -> str:
        return f"Refused({self.exc!r})"


def describe(fn: Callable[..., object], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> str:
    parts = [_short.repr(a) for a in args] + [f"{k}={_short.repr(v)}" for k, v in kwargs.items()]
    return f"{getattr(fn, '__qualname__', fn)}({', '.join(parts)})"


def release_fifos() -> None:
    """Opens every FIFO for writing without blocking (which succeeds only where a reader waits
    on it) and closes it: the reader reads its end."""
    for fifo in FIFOS:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            pass


def attempt(fn: Callable[..., object], /, *args: Any, **kwargs: Any) -> object:
    """Calls ``fn`` in a thread and waits ``CALL_LIMIT_S`` at most: its result, or
    :class:`Refused` with the documented exception it raised. A hang, a BaseException that is
    not an Exception (PanicException), an internal error, an undocumented exception type or an
    error without a message fails the test."""
    what = describe(fn, args, kwargs)
    outcome: list[tuple[bool, object]] = []

    def call() -> None:
        try:
            outcome.append((True, fn(*args, **kwargs)))
        except BaseException as e:  # judged below, in the test's thread
            outcome.append((False, e))

    worker = threading.Thread(target=call, name="fuzz-call", daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(CALL_LIMIT_S)
    if worker.is_alive():
        release_fifos()
        raise AssertionError(f"{what} did not return within {CALL_LIMIT_S} s")
    assert time.monotonic() - started <= CALL_LIMIT_S, f"{what} took too long"
    done, value = outcome[0]
    if done:
        return value
    assert isinstance(value, BaseException)
    if not isinstance(value, Exception):
        raise AssertionError(
            f"{what} raised {type(value).__module__}.{type(value).__qualname__} "
            f"(not an Exception subclass): {value}"
        ) from value
    if "internal error of zertz" in str(value) or "panicked" in str(value):
        raise AssertionError(f"{what} panicked: {type(value).__name__}: {value}") from value
    if not isinstance(value, DOCUMENTED):
        raise AssertionError(f"{what} raised {type(value).__name__}: {value}") from value
    if not str(value).strip():
        raise AssertionError(f"{what} raised {type(value).__name__} without a message")
    return Refused(value)


# --- verdicts --------------------------------------------------------------------------------

#: The verdict of a drawn value: fine (the call must not fail for it), either (it may), or the
#: exceptions it must be refused with.
FINE = "fine"
EITHER = "either"
Verdict = str | tuple[type[Exception], ...]
Drawn = tuple[Any, Verdict]


def fine(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Drawn]:
    return values.map(lambda v: (v, FINE))


def bad(values: st.SearchStrategy[Any], *kinds: type[Exception]) -> st.SearchStrategy[Drawn]:
    return values.map(lambda v: (v, kinds or (ValueError,)))


def either(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Drawn]:
    return values.map(lambda v: (v, EITHER))


def check_outcome(result: object, verdicts: Mapping[str, Verdict], what: str) -> None:
    """Checks a call's result against the verdicts of its arguments: refused when one is bad
    (with one of the bad ones' exceptions), not refused when all are fine."""
    event(f"refused: {type(result.exc).__name__}" if isinstance(result, Refused) else "taken")
    wrong = {name: v for name, v in verdicts.items() if isinstance(v, tuple)}
    if wrong:
        kinds = tuple({k for v in wrong.values() for k in v})
        assert isinstance(result, Refused), f"{what} took the bad {sorted(wrong)}: {result!r}"
        assert isinstance(result.exc, kinds), (
            f"{what} refused the bad {sorted(wrong)} with {type(result.exc).__name__} "
            f"(expected one of {[k.__name__ for k in kinds]}): {result.exc}"
        )
    elif all(v == FINE for v in verdicts.values()):
        assert not isinstance(result, Refused), f"{what} refused good arguments: {result.exc!r}"


# --- shared files ----------------------------------------------------------------------------

_fresh = itertools.count()


@dataclass(frozen=True)
class Files:
    """The module's files: a real network file and hostile ones, a tiny dataset made from a few
    game records, a folder of a teacher's games, and broken datasets and game folders."""

    root: Path
    network: Path
    records: Path
    dataset: Path
    teacher_games: Path

    def fresh(self, name: str) -> Path:
        """A path no example used before, under the module's folder (not made)."""
        return self.root / "fresh" / f"{name}-{next(_fresh)}"


def noise(n: int) -> bytes:
    """``n`` random bytes, the same in every run."""
    return random.Random(n).randbytes(n)


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    FIFOS.append(path)
    return path


def tiny_student() -> ZertzNet:
    """A small network of 37 rings (a student: it never goes through the engine)."""
    return ZertzNet(NetConfig(channels=8, blocks=1, value_channels=4, value_hidden=8), [37])


@pytest.fixture(scope="module")
def files(games: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Files]:
    """Made once for the module; the current folder is an empty one meanwhile (a random string
    taken for a path names nothing), and torch has one thread."""
    root = tmp_path_factory.mktemp("fuzz_agents")
    (root / "fresh").mkdir()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("cwd"))
        network = BoardNet("tiny", board=37).export(root / "tiny.safetensors")
        data = network.read_bytes()
        broken = root / "networks"
        broken.mkdir()
        (broken / "half.safetensors").write_bytes(data[: len(data) // 2])
        (broken / "header.safetensors").write_bytes(data[:8])
        (broken / "no-tensors.safetensors").write_bytes(data[: len(data) - 4])
        (broken / "random.safetensors").write_bytes(noise(4096))
        (broken / "empty.safetensors").write_bytes(b"")
        (broken / "folder.safetensors").mkdir()
        fifo(broken / "fifo.safetensors")
        (broken / "zero.safetensors").symlink_to("/dev/zero")
        # A tiny dataset: a few of the records.
        records = root / "records"
        records.mkdir()
        for sgf in sorted(games.glob("*.sgf"))[:8]:
            shutil.copy(sgf, records / sgf.name)
        dataset = root / "dataset"
        made = zertz.dataset([records], dataset, boards=[37], seed=0)
        assert made["train_samples"] > 0, made
        teacher_games = root / "teacher"
        stats = distill(
            tiny_student(),
            teacher_games,
            games_played=2,
            simulations=2,
            threads=1,
            steps=1,
            batch_size=8,
            progress=False,
        )
        assert stats["games"] == 2 and sorted(teacher_games.glob(shard_glob()))
        yield Files(root, network, records, dataset, teacher_games)
    torch.set_num_threads(threads)


def network_file(files: Files, kind: str) -> Path:
    return files.network if kind == "real" else files.root / "networks" / f"{kind}.safetensors"


def dataset_folder(files: Files, kind: str) -> Path | str:
    """A dataset folder of ``kind`` (made anew for each example where it is written to)."""
    if kind == "good":
        return files.dataset
    if kind == "empty-path":
        return ""
    path = files.fresh(kind)
    if kind == "missing":
        return path
    if kind == "empty":
        path.mkdir()
    elif kind == "file":
        path.write_bytes(b"not a dataset")
    elif kind == "fifo":
        fifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")
    else:
        shutil.copytree(files.dataset, path)
        shard = sorted((path / "train").glob(shard_glob(37)))[0]
        manifest = path / "dataset.json"
        if kind == "fifo-manifest":
            manifest.unlink()
            fifo(manifest)
        elif kind == "random-manifest":
            manifest.write_bytes(noise(200))
        elif kind == "corrupt-shard":
            shard.write_bytes(noise(300))
        elif kind == "truncated-shard":
            shard.write_bytes(shard.read_bytes()[:1000])
        elif kind == "fifo-shard":
            shard.unlink()
            fifo(shard)
        elif kind == "zero-shard":
            shard.unlink()
            shard.symlink_to("/dev/zero")
        elif kind == "no-train":
            shutil.rmtree(path / "train")
        else:
            raise AssertionError(kind)
    return path


def games_folder(files: Files, kind: str) -> Path | str:
    """A folder of teacher games of ``kind`` (made anew for each example where it is written
    to)."""
    if kind == "teacher":
        return files.teacher_games
    if kind == "empty-path":
        return ""
    path = files.fresh(kind)
    if kind == "new":
        return path
    if kind == "empty":
        path.mkdir()
    elif kind == "file":
        path.write_bytes(b"not a folder")
    elif kind == "fifo":
        fifo(path)
    elif kind == "other-output":
        path.mkdir()
        (path / "games-00.jsonl").write_text("{}\n")
    else:
        path.mkdir()
        shard = path / "shard-00-00000.npz"
        if kind == "corrupt-shard":
            shard.write_bytes(noise(500))
        elif kind == "empty-shard":
            shard.write_bytes(b"")
        elif kind == "fifo-shard":
            fifo(shard)
        elif kind == "zero-shard":
            shard.symlink_to("/dev/zero")
        else:
            raise AssertionError(kind)
    return path


def weights(net: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def same_weights(net: torch.nn.Module, before: Mapping[str, torch.Tensor]) -> bool:
    now = net.state_dict()
    return now.keys() == before.keys() and all(torch.equal(now[k], before[k]) for k in before)


# --- strategies ------------------------------------------------------------------------------

NOT_NUMBERS = st.one_of(st.none(), st.text(max_size=4), st.just([1.0]), st.just(b"1"))
#: Huge ints that no float holds.
HUGE = st.sampled_from([2**1100, -(2**1100), 10**400])


def counts(
    good: st.SearchStrategy[int],
) -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
    """(fine, bad) values of a count: a positive int."""
    return fine(good), bad(
        st.one_of(
            st.integers(max_value=0),
            st.booleans(),
            st.floats(allow_nan=True, allow_infinity=True),
            NOT_NUMBERS,
            st.sampled_from([-(10**30), -(2**64)]),
        )
    )


NEGATIVE = st.one_of(st.floats(max_value=-1e-12), st.integers(max_value=-1))
NOT_FINITE = st.sampled_from([math.nan, math.inf, -math.inf])


def rates(
    good: st.SearchStrategy[float], *, zero: bool
) -> tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]:
    """(fine, hostile) values of a rate or a weight: a finite number, at least 0 (``zero``) or
    above it. Among the hostile ones, 1e308 may be taken and diverge (NonFiniteError, a
    ValueError)."""
    refused = st.one_of(NEGATIVE, NOT_FINITE, st.booleans(), NOT_NUMBERS, HUGE)
    if not zero:
        refused = st.one_of(refused, st.sampled_from([0, 0.0, -0.0]))
    return fine(good), st.one_of(bad(refused), either(st.just(1e308)))


SEED_BAD = bad(
    st.one_of(
        st.integers(max_value=-1),
        st.integers(min_value=2**64),
        st.booleans(),
        st.floats(allow_nan=True, allow_infinity=True),
        NOT_NUMBERS,
    )
)

#: The numeric keywords clone and distill share: (fine, bad) strategies.
LEARNING: dict[str, tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]] = {
    "steps": counts(st.integers(1, 2)),
    "batch_size": counts(st.one_of(st.integers(1, 48), st.just(10**30))),
    "chunk_shards": counts(st.one_of(st.integers(1, 4), st.just(2**63))),
    "learning_rate": rates(
        st.one_of(st.floats(1e-5, 1e-2), st.just(1), st.just(10**-3)), zero=False
    ),
    "weight_decay": rates(st.one_of(st.floats(0, 0.1), st.just(0)), zero=True),
    "value_weight": rates(st.one_of(st.floats(0, 10), st.just(0), st.just(2)), zero=True),
    "captures_weight": rates(st.one_of(st.floats(0, 10), st.just(0)), zero=True),
    "seed": (fine(st.integers(0, 2**64 - 1)), SEED_BAD),
}


@st.composite
def keywords(
    draw: st.DrawFn, table: Mapping[str, tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]]
) -> dict[str, Drawn]:
    """A value of every keyword of ``table``: a few (often none) of them bad, the others
    fine."""
    names = st.sampled_from(sorted(table))
    # A third of the calls have none (the path that works), the others one or two.
    hostile = draw(
        st.just(set())
        | st.sets(names, min_size=1, max_size=1)
        | st.sets(names, min_size=2, max_size=2)
    )
    return {name: draw(table[name][1] if name in hostile else table[name][0]) for name in table}


#: Networks that are not networks (refused with TypeError by clone and distill).
NOT_A_NETWORK = bad(st.sampled_from(["tiny", None, 5, b"tiny", torch.nn.Linear(2, 2)]), TypeError)

# The kinds of network argument that BoardNet and make_network take.
PRESETS = ["tiny", "small"]
BAD_FILES = ["half", "header", "no-tensors", "random", "empty", "folder", "fifo", "zero"]
#: What each bad network file is refused with: a FIFO, a device or a folder is not a regular
#: file (OSError, before it is opened); the others are not network files (ValueError).
BAD_FILE_ERRORS: dict[str, tuple[type[Exception], ...]] = {
    "fifo": (OSError,),
    "zero": (OSError,),
    "folder": (OSError,),
}
SIZE_KEYS = [f.name for f in fields(NetConfig)]


@st.composite
def size_mappings(draw: st.DrawFn) -> tuple[dict[Any, Any], Verdict]:
    """A mapping of NetConfig's fields (small sizes, a preset maybe), with a few hostile keys or
    values: (the mapping, its verdict)."""
    keys = draw(st.sets(st.sampled_from(SIZE_KEYS), max_size=3))
    sizes: dict[Any, Any] = {k: draw(st.integers(1, 8)) for k in keys}
    verdict: Verdict = FINE
    if draw(st.booleans()):
        preset = draw(st.sampled_from([*PRESETS, "huge", "Tiny", None, 3, ["tiny"], ""]))
        sizes["preset"] = preset
        if preset not in PRESETS:
            verdict = (ValueError,)
    if draw(st.integers(0, 2)) == 0:
        key = draw(st.sampled_from(SIZE_KEYS))
        limit = NETWORK_SIZE_LIMITS[key]
        sizes[key] = draw(
            st.one_of(
                st.integers(max_value=0),
                st.integers(min_value=limit + 1),
                st.booleans(),
                st.floats(allow_nan=True, allow_infinity=True),
                NOT_NUMBERS,
                HUGE,
            )
        )
        verdict = (ValueError,)
    if draw(st.integers(0, 3)) == 0:
        known = {*SIZE_KEYS, "preset"}
        keys_of_any_type = st.one_of(st.text(max_size=8), st.integers(), st.none())
        sizes[draw(keys_of_any_type.filter(lambda k: k not in known))] = 1
        verdict = (ValueError,)
    return sizes, verdict


def expected_sizes(mapping: Mapping[str, Any]) -> dict[str, int]:
    base = NetConfig.preset(mapping["preset"]) if "preset" in mapping else NetConfig()
    return {**asdict(base), **{k: v for k, v in mapping.items() if k != "preset"}}


BOARD_BAD: list[Any] = [38, 0, -1, True, False, 1e9, "37", None, 10**30, [37], 37.0, math.nan]
MARBLES_FINE: list[Any] = [["standard"], ("standard",), ["standard", "standard"]]
MARBLES_BAD: list[Any] = [
    [],
    "standard",
    ["x"],
    [None],
    5,
    [["standard"]],
    ["standard", 1],
    [math.nan],
    ["STANDARD"],
]


# --- BoardNet and make_network ---------------------------------------------------------------


@st.composite
def network_arguments(draw: st.DrawFn) -> tuple[str, Any]:
    """(a kind, the network argument or its recipe) of BoardNet/make_network."""
    kind = draw(
        st.sampled_from(
            [
                "preset",
                "unknown",
                "text",
                "mapping",
                "config",
                "builtin",
                "file",
                "path",
                "bad-file",
                "missing",
                "not-a-network",
                "zertznet",
            ]
        )
    )
    if kind == "preset":
        return kind, draw(st.sampled_from(PRESETS))
    if kind == "unknown":
        return kind, draw(st.sampled_from(["Tiny", "huge", "tiny ", " builtin", "large!", "\0"]))
    if kind == "text":
        return kind, draw(st.text(max_size=12))
    if kind == "mapping":
        return kind, draw(size_mappings())
    if kind == "config":
        return kind, NetConfig(channels=draw(st.integers(1, 8)), blocks=draw(st.integers(1, 2)))
    if kind in ("file", "path"):
        return kind, "real"
    if kind == "bad-file":
        return kind, draw(st.sampled_from(BAD_FILES))
    if kind == "missing":
        return kind, draw(st.sampled_from(["nowhere.safetensors", "/nonexistent/net"]))
    if kind == "not-a-network":
        return kind, draw(st.sampled_from([None, 5, 3.5, b"tiny", ["tiny"], object()]))
    if kind == "zertznet":
        return kind, draw(st.sampled_from([[37], [37, 61], [61]]))
    return kind, "builtin"


def build_network(files: Files, kind: str, recipe: Any, board: Any) -> tuple[Any, Verdict]:
    """The network argument of ``kind`` and its verdict for ``board`` (a board it does not play
    is refused with ValueError)."""
    wrong_board: Verdict = (ValueError, TypeError)
    if kind in ("preset", "config"):
        return recipe, FINE
    if kind == "unknown":
        return recipe, (ValueError,)
    if kind == "text":
        if recipe in NetConfig.SIZES:
            return recipe, FINE
        if recipe == "builtin":
            return recipe, FINE if board == 37 else wrong_board
        # A name of something that exists here ("" or "." is the current folder) may be read.
        return recipe, EITHER if os.path.lexists(recipe) else (ValueError, OSError)
    if kind == "mapping":
        sizes, verdict = recipe
        return sizes, verdict
    if kind in ("file", "path", "builtin"):
        network: Any = "builtin" if kind == "builtin" else network_file(files, recipe)
        network = str(network) if kind == "file" else network
        return network, FINE if board == 37 else wrong_board
    if kind == "bad-file":
        return str(network_file(files, recipe)), BAD_FILE_ERRORS.get(recipe, (ValueError,))
    if kind == "missing":
        return recipe, (ValueError,)
    if kind == "not-a-network":
        return recipe, (TypeError,)
    assert kind == "zertznet"
    net = ZertzNet(NetConfig(channels=4, blocks=1), boards=recipe)
    return net, FINE if board in recipe else wrong_board


def board_argument() -> st.SearchStrategy[Drawn]:
    return st.one_of(
        fine(st.sampled_from(BOARDS)), bad(st.sampled_from(BOARD_BAD), ValueError, TypeError)
    )


def marbles_argument() -> st.SearchStrategy[Drawn]:
    return st.one_of(
        fine(st.none()),
        fine(st.sampled_from(MARBLES_FINE)),
        st.sampled_from([(["blitz"], "blitz"), (["standard", "blitz"], "blitz")]),
        bad(st.sampled_from(MARBLES_BAD), ValueError, TypeError),
    )


def marbles_verdict(kind: str, recipe: Any, verdict: Verdict) -> Verdict:
    """The blitz set: fine for a fresh network, refused by one read or copied (standard)."""
    if verdict != "blitz":
        return verdict
    fresh = kind in ("preset", "mapping", "config") or (
        kind == "text" and recipe in NetConfig.SIZES
    )
    return FINE if fresh else (ValueError,)


@fuzz_settings(25)
@given(
    network=network_arguments(),
    board=board_argument(),
    marbles=marbles_argument(),
    through_boardnet=st.booleans(),
)
def test_boardnet_takes_any_network_argument_or_refuses_it(
    files: Files,
    network: tuple[str, Any],
    board: Drawn,
    marbles: Drawn,
    through_boardnet: bool,
) -> None:
    kind, recipe = network
    rings, board_verdict = board
    marble_sets, marble_verdict = marbles
    argument, network_verdict = build_network(files, kind, recipe, rings)
    if board_verdict != FINE and network_verdict == EITHER:
        # A bad board is refused, maybe for the network (a folder) first.
        network_verdict = (ValueError, OSError)
    before = weights(argument) if isinstance(argument, ZertzNet) else None
    if through_boardnet:
        result = attempt(BoardNet, argument, board=rings, marbles=marble_sets)
    else:
        result = attempt(make_network, argument, rings, marble_sets)
    what = describe(BoardNet if through_boardnet else make_network, (argument,), {"board": rings})
    verdicts = {
        "network": network_verdict,
        "board": board_verdict,
        "marbles": marbles_verdict(kind, recipe, marble_verdict),
    }
    check_outcome(result, verdicts, what)
    if before is not None:
        assert same_weights(argument, before), f"{what} changed the network it was given"
    if isinstance(result, Refused):
        return
    net = result.net if isinstance(result, BoardNet) else result
    assert isinstance(net, ZertzNet), f"{what} answered {result!r}"
    assert rings in net.boards
    if marble_sets is not None:
        assert set(marble_sets) <= set(net.marbles)
    if kind == "mapping":
        assert asdict(net.net_config()) == expected_sizes(recipe[0])
    if kind == "zertznet":
        assert net is not argument and all(
            p.data_ptr() != q.data_ptr()
            for p, q in zip(net.parameters(), argument.parameters(), strict=True)
        )
    if isinstance(result, BoardNet):
        assert result.board == rings
        planes, globals_ = zertz.Game(rings).encode()
        with torch.no_grad():
            logits, value = result.eval()(
                {
                    "planes": torch.from_numpy(planes)[None],
                    "globals": torch.from_numpy(globals_)[None],
                }
            )
        assert logits.shape == (1, action_space_size(rings)) and value.shape == (1,)
        assert bool(torch.isfinite(logits).all()) and -1 <= float(value) <= 1


# --- clone -----------------------------------------------------------------------------------

DATASETS_BAD: dict[str, tuple[type[Exception], ...]] = {
    "missing": (FileNotFoundError,),
    "empty": (ValueError,),
    "file": (OSError,),
    "fifo": (OSError,),
    "zero": (OSError,),
    "empty-path": (ValueError,),
    "fifo-manifest": (ValueError,),
    "random-manifest": (ValueError,),
    "corrupt-shard": (ValueError,),
    "truncated-shard": (ValueError,),
    "fifo-shard": (ValueError,),
    "zero-shard": (ValueError,),
    "no-train": (ValueError,),
}

CLONE_EXTRA: dict[str, tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]] = {
    "boards": (
        fine(st.sampled_from([None, [], [37], (37,), [37, 37]])),
        bad(
            st.sampled_from([[38], [61], "37", [True], [37.0], 37, [None], [10**30], [37, 61]]),
            ValueError,
            TypeError,
        ),
    ),
    "progress": (fine(st.booleans()), fine(st.booleans())),
}


#: The kinds of dataset and records, and the network (their verdicts are the test's).
CLONE_INPUTS: dict[str, tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]] = {
    "dataset": (fine(st.just("good")), fine(st.sampled_from(sorted(DATASETS_BAD)))),
    "records": (
        fine(st.sampled_from(["none", "records"])),
        fine(st.sampled_from(["a-path", "missing", "fifo", "not-paths"])),
    ),
    "network": (fine(st.sampled_from(["zertznet", "boardnet"])), NOT_A_NETWORK),
}


@fuzz_settings(25)
@given(kwargs=keywords({**LEARNING, **CLONE_EXTRA, **CLONE_INPUTS}))
def test_clone_takes_any_arguments_or_refuses_them(files: Files, kwargs: dict[str, Drawn]) -> None:
    kw = {name: value for name, (value, _) in kwargs.items()}
    verdicts: dict[str, Verdict] = {name: v for name, (_, v) in kwargs.items()}
    body = BoardNet(tiny_student(), board=37)
    net = body.net  # (a copy)
    network = kw.pop("network")
    if network in ("zertznet", "boardnet"):
        network = net if network == "zertznet" else body  # a BoardNet's network learns
    dataset = kw.pop("dataset")
    folder = dataset_folder(files, dataset)
    records = kw.pop("records")
    kw["records"] = {
        "none": (),
        "records": [files.records],
        "a-path": str(files.records),
        "missing": [files.root / "no-records"],
        "fifo": [fifo(files.fresh("records-fifo"))],
        "not-paths": [5],
    }[records]
    verdicts["dataset"] = DATASETS_BAD.get(dataset, FINE)
    verdicts["records"] = FINE  # read only where the dataset is made
    if dataset in ("missing", "empty") and records != "none":
        # The dataset is made from the records: good ones make it good.
        verdicts["dataset"] = FINE if records == "records" else EITHER
        verdicts["records"] = FINE if records == "records" else (ValueError, OSError, TypeError)
    if records == "a-path":
        verdicts["records"] = (TypeError,)
    before = weights(net)
    result = attempt(clone, network, folder, **kw)
    what = describe(clone, (network, folder), kw)
    check_outcome(result, verdicts, what)
    if isinstance(result, Refused):
        if not isinstance(result.exc, NonFiniteError):
            assert same_weights(net, before), f"{what} was refused but changed the network"
        return
    assert isinstance(result, dict), f"{what} answered {result!r}"
    assert result["steps"] == kw["steps"] and result["samples"] > 0
    assert all(math.isfinite(result[k]) for k in ("policy_loss", "value_loss", "captures_loss"))
    assert not net.training and not same_weights(net, before)


# --- distill ---------------------------------------------------------------------------------

GAMES_BAD: dict[str, tuple[type[Exception], ...]] = {
    "file": (OSError,),
    "fifo": (OSError,),
    "empty-path": (ValueError,),
    "other-output": (FileExistsError,),
    "corrupt-shard": (ValueError,),
    "empty-shard": (ValueError,),
    "fifo-shard": (ValueError,),
    "zero-shard": (ValueError,),
}

#: The self-play keywords: (fine, bad) values, always checked for their type and least value, but
#: for the engine's upper bounds only where the teacher is asked to play.
SELFPLAY: dict[str, tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]] = {
    "games_played": (
        fine(st.integers(1, 2)),
        bad(
            st.one_of(
                st.sampled_from([0, -1, True, 1.5, math.nan, "2", None, 2**64]),
                st.integers(max_value=-1),
            ),
            ValueError,
            TypeError,
        ),
    ),
    "simulations": (
        fine(st.integers(2, 3)),
        bad(st.sampled_from([0, 1, -1, True, 2.0, math.inf, None, 2**64]), ValueError, TypeError),
    ),
    "threads": (
        fine(st.integers(0, 2)),
        bad(st.sampled_from([-1, False, 1.0, math.nan, "1", None, 2**64]), ValueError, TypeError),
    ),
    "teacher": (
        fine(st.sampled_from(["builtin", "real"])),
        st.one_of(
            bad(st.sampled_from(["nope", "tiny", "", *BAD_FILES]), ValueError, OSError),
            # Not a path: refused (TypeError) before anything is played, games or not.
            bad(st.sampled_from([None, 5, b"builtin", ["builtin"]]), TypeError),
        ),
    ),
}

DISTILL_EXTRA: dict[str, tuple[st.SearchStrategy[Drawn], st.SearchStrategy[Drawn]]] = {
    "board": (
        fine(st.sampled_from([None, 37])),
        bad(st.sampled_from([38, 0, -1, True, "37", 61, 10**30, [37]]), ValueError, TypeError),
    ),
    "progress": (fine(st.booleans()), fine(st.booleans())),
    "games": (
        fine(st.sampled_from(["teacher", "new", "empty"])),
        fine(st.sampled_from(sorted(GAMES_BAD))),
    ),
    "network": (fine(st.just("student")), NOT_A_NETWORK),
}


def teacher_argument(files: Files, name: Any) -> Any:
    if name == "real":
        return str(files.network)
    if name in BAD_FILES:
        return network_file(files, name)
    return name


@fuzz_settings(20)
@given(
    kwargs=keywords({**LEARNING, **SELFPLAY, **DISTILL_EXTRA}),
)
def test_distill_takes_any_arguments_or_refuses_them(
    files: Files, kwargs: dict[str, Drawn]
) -> None:
    kw = {name: value for name, (value, _) in kwargs.items()}
    games = kw.pop("games")
    plays = games in ("new", "empty")
    # Without shards the teacher is asked to play, and the engine checks its settings first
    # (before it finds that the folder cannot hold games).
    asks = plays or games in ("file", "fifo", "other-output")
    verdicts: dict[str, Verdict] = {}
    for name, (value, verdict) in kwargs.items():
        # Each is checked for its type and least value at once; the engine's upper bounds only
        # where the teacher plays.
        huge = isinstance(value, int) and not isinstance(value, bool) and value >= 2**32
        if name in SELFPLAY and verdict != FINE and huge and not asks:
            verdict = EITHER  # not used: the games are there
        verdicts[name] = verdict
    verdicts["games"] = GAMES_BAD.get(games, FINE)
    net = tiny_student()
    network = kw.pop("network")
    if network == "student":
        network = net
    folder = games_folder(files, games)
    kw["teacher"] = teacher_argument(files, kw["teacher"])
    before = weights(net)
    shards_before = sorted(files.teacher_games.glob(shard_glob()))
    result = attempt(distill, network, folder, **kw)
    what = describe(distill, (network, folder), kw)
    # The teacher's folder is learnt as it is, never written to.
    assert sorted(files.teacher_games.glob(shard_glob())) == shards_before
    check_outcome(result, verdicts, what)
    if isinstance(result, Refused):
        if not isinstance(result.exc, NonFiniteError):
            assert same_weights(net, before), f"{what} was refused but changed the network"
        return
    assert isinstance(result, dict), f"{what} answered {result!r}"
    assert result["steps"] == kw["steps"] and result["samples"] > 0
    assert result["games"] == (kw["games_played"] if plays else 0)
    assert sorted(Path(folder).glob(shard_glob())), f"{what}: no shards in {folder}"
    assert not net.training and not same_weights(net, before)


# --- FIFOs ---------------------------------------------------------------------------------


FIFO_CASES = [
    "boardnet",
    "make_network",
    "clone-dataset",
    "clone-manifest",
    "clone-shard",
    "clone-records",
    "distill-games",
    "distill-shard",
    "distill-teacher",
]


@pytest.mark.parametrize("case", FIFO_CASES)
def test_a_fifo_is_refused_without_being_opened(files: Files, case: str) -> None:
    """Wherever a FIFO stands for a file or a folder, the call says so at once: it never opens
    it (which would wait for a writer for ever)."""
    student = tiny_student()
    quick = {"steps": 1, "progress": False}
    play = {"games_played": 1, "simulations": 2, "threads": 1, **quick}
    call: tuple[Callable[..., object], tuple[Any, ...], dict[str, Any]]
    if case in ("boardnet", "make_network"):
        path = network_file(files, "fifo")
        call = (BoardNet, (path,), {"board": 37})
        if case == "make_network":
            call = (make_network, (str(path), 37), {})
    elif case == "clone-dataset":
        path = Path(dataset_folder(files, "fifo"))
        call = (clone, (student, path), quick)
    elif case in ("clone-manifest", "clone-shard"):
        folder = Path(dataset_folder(files, case.replace("clone", "fifo")))
        shards = sorted((folder / "train").glob(shard_glob(37)))
        path = folder / "dataset.json" if case == "clone-manifest" else shards[0]
        call = (clone, (student, folder), quick)
    elif case == "clone-records":
        path = fifo(files.fresh("records.sgf"))
        call = (clone, (student, files.fresh("made")), {"records": [path], **quick})
    elif case == "distill-games":
        path = Path(games_folder(files, "fifo"))
        call = (distill, (student, path), play)
    elif case == "distill-shard":
        folder = Path(games_folder(files, "fifo-shard"))
        path = folder / "shard-00-00000.npz"
        call = (distill, (student, folder), play)
    else:
        path = network_file(files, "fifo")
        call = (distill, (student, files.fresh("games")), {"teacher": path, **play})
    assert path.is_fifo()
    fn, args, kwargs = call
    with never_opened(path):
        result = attempt(fn, *args, **kwargs)
    if case == "clone-records":
        # Not a record: the dataset made of it holds no game, and says so.
        assert isinstance(result, Refused) and "holds no shards" in str(result.exc), result
        return
    assert isinstance(result, Refused), f"{describe(fn, args, kwargs)} took a FIFO: {result!r}"
    assert isinstance(result.exc, OSError | ValueError) and str(path) in str(result.exc)


# --- regressions -----------------------------------------------------------------------------


def test_regression_rates_weights_and_seed_are_checked_before_learning(files: Files) -> None:
    """value_weight and captures_weight were not checked (NaN was a "diverged" loss, a huge int
    an OverflowError, None a TypeError of torch's), a huge int rate was an OverflowError, and a
    bad seed torch's RuntimeError or "Overflow when unpacking long long"."""
    learners: list[tuple[Callable[..., dict[str, Any]], Path]] = [
        (clone, files.dataset),
        (distill, files.teacher_games),
    ]
    for learn, where in learners:
        for name, value in [
            ("value_weight", math.nan),
            ("value_weight", -1.0),
            ("value_weight", 10**30 * 10**300),
            ("captures_weight", None),
            ("captures_weight", math.inf),
            ("captures_weight", "1"),
            ("learning_rate", 2**1100),
            ("learning_rate", True),
            ("weight_decay", -(2**1100)),
            ("seed", True),
            ("seed", 1.5),
            ("seed", -1),
            ("seed", 2**64),
            ("seed", None),
        ]:
            net = tiny_student()
            before = weights(net)
            with pytest.raises(ValueError, match=f"^{name} must be"):
                learn(net, where, steps=1, progress=False, **{name: value})
            assert same_weights(net, before)
    # Within the bounds: taken.
    stats = clone(
        tiny_student(), files.dataset, steps=1, seed=2**64 - 1, value_weight=0, progress=False
    )
    assert stats["steps"] == 1


def test_regression_the_checks_come_before_the_work(files: Files) -> None:
    """Every argument is checked before anything is read or learnt: a bad one fails at once
    whatever the rest asks (10**30 steps, a million games; under the watchdog)."""
    endless = {"steps": 10**30, "progress": False}
    cases: list[
        tuple[Callable[..., object], tuple[Any, ...], dict[str, Any], type[Exception], str]
    ] = [
        (clone, (files.dataset,), {"value_weight": math.nan}, ValueError, "value_weight"),
        (clone, (files.fresh("none"),), {}, FileNotFoundError, "no such dataset"),
        (
            distill,
            (files.fresh("games"),),
            {"games_played": 10**6, "captures_weight": -1},
            ValueError,
            "captures_weight",
        ),
    ]
    for fn, args, kwargs, kind, words in cases:
        result = attempt(fn, tiny_student(), *args, **endless, **kwargs)
        assert isinstance(result, Refused) and isinstance(result.exc, kind), result
        assert words in str(result.exc)


def test_regression_an_empty_path_is_not_the_current_folder(
    files: Files, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``distill(net, "")`` played the teacher's games into the current folder."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="games must name a folder"):
        distill(
            tiny_student(), "", games_played=1, simulations=2, threads=1, steps=1, progress=False
        )
    with pytest.raises(ValueError, match="dataset must name a folder"):
        clone(tiny_student(), "", records=[files.records], steps=1, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_regression_a_teacher_that_is_not_a_path_is_refused(files: Files) -> None:
    """``teacher=None`` played the games with a search that no network guides."""
    games = files.fresh("teacherless")
    with pytest.raises(TypeError, match="teacher must be"):
        distill(
            tiny_student(),
            games,
            teacher=None,  # type: ignore[arg-type]
            games_played=1,
            simulations=2,
            steps=1,
            progress=False,
        )
    assert not games.exists()


def test_regression_records_as_one_path_are_refused(files: Files) -> None:
    """``records="folder"`` was read a character at a time ("cannot read a: No such file")."""
    out = files.fresh("one-path")
    with pytest.raises(TypeError, match="records must be a list of paths"):
        clone(tiny_student(), out, records=str(files.records), steps=1, progress=False)
    assert not out.exists()
    stats = clone(tiny_student(), out, records=[files.records], steps=1, progress=False)
    assert stats["steps"] == 1


def test_regression_marbles_of_a_network_read_or_copied_are_checked(files: Files) -> None:
    """``marbles`` was ignored for a network file, "builtin" or a ZertzNet, whatever it held."""
    for network in (files.network, "builtin", tiny_student()):
        assert make_network(network, 37, ["standard"]).marbles == ["standard"]
        with pytest.raises(ValueError, match="plays marbles \\['standard'\\], not \\['blitz'\\]"):
            BoardNet(network, board=37, marbles=["blitz"])
        with pytest.raises(ValueError, match="marbles must be a non-empty list"):
            make_network(network, 37, ["nope"])
    assert BoardNet("tiny", board=37, marbles=["blitz"]).net.marbles == ["blitz"]


def test_regression_sizes_that_are_not_sizes_are_a_value_error() -> None:
    """Unknown keys of several types raised TypeError ("'<' not supported between instances of
    'str' and 'int'", from sorting them), and a size past the floats OverflowError."""
    with pytest.raises(ValueError, match="unknown network keys \\['a', 1\\]"):
        BoardNet({1: 2, "a": 3}, board=37)  # type: ignore[dict-item]
    with pytest.raises(ValueError, match=r"network\.channels must be between 1 and"):
        BoardNet({"channels": 2**1100}, board=37)
    # A board that only looks like one is named as it was given; 37.0 is not taken for 37.
    with pytest.raises(TypeError, match="board must be an int \\(rings\\), not '37'"):
        make_network(tiny_student(), "37")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not 37\.0"):
        make_network(tiny_student(), 37.0)  # type: ignore[arg-type]


def test_a_teacher_whose_value_head_is_wider_than_its_trunk_plays(files: Files) -> None:
    """The engine's native pass once panicked on such a network (its value head's channels
    written past a buffer sized for the trunk's), and a match with it hung."""
    teacher = ZertzNet(NetConfig(channels=8, blocks=1, value_channels=16), boards=[37])
    path = export(teacher, files.fresh("wide").with_suffix(".safetensors"))
    result = attempt(
        distill,
        tiny_student(),
        files.fresh("wide-games"),
        teacher=str(path),
        games_played=1,
        simulations=2,
        threads=1,
        steps=1,
        progress=False,
    )
    assert isinstance(result, dict) and result["games"] == 1
    played = zertz.match(f"nn:{path}:1", "random", games=2, threads=1)
    assert played["wins"] + played["draws"] + played["losses"] == 2
