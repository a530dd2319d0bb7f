"""The package: public names, private native module, typing files."""

from __future__ import annotations

import ast
import inspect
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import zertz
import zertz._zertz as native
import zertz_engine._engine as engine

import settings_stub


def test_public_names() -> None:
    # Pure Python: shards in zertz.data; the training side (torch) imported on first use.
    python_side = {
        "load_shards": "zertz.data",
        "export": "zertz.exported",
        "train": "zertz.training.loop",
        "plot": "zertz.plots",
    }
    for name in zertz.__all__:
        if name in python_side:
            assert getattr(zertz, name).__module__ == python_side[name]
            continue
        module = engine if name in zertz.ENGINE_NAMES else native
        assert getattr(zertz, name) is getattr(module, name)
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = zertz.no_such_name
    assert "_zertz" not in zertz.__all__
    assert zertz.Game.__module__ == "zertz"
    assert zertz.__version__.count(".") == 2


def test_typing_files_ship_with_the_package() -> None:
    folder = Path(zertz.__file__).parent
    assert (folder / "py.typed").is_file()
    assert (folder / "_zertz.pyi").is_file()


def test_boards() -> None:
    assert zertz.BOARDS == (37, 40, 43, 44, 48, 61)
    sizes = [zertz.action_space_size(b) for b in zertz.BOARDS]
    assert sizes == [4441, 5161, 5935, 6205, 7345, 11713]


def test_the_readme_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The front door's Python example, as a newcomer pastes it (from any folder).
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    blocks = readme.split("```python\n")
    assert len(blocks) == 2, "the README has one Python example"
    code = blocks[1].split("```")[0]
    monkeypatch.chdir(tmp_path)
    printed: list[object] = []
    exec(compile(code, "README.md", "exec"), {"print": printed.append})
    (summary,) = printed
    assert isinstance(summary, dict)
    assert summary["games"] == summary["wins"] + summary["draws"] + summary["losses"] == 10


def test_import_zertz_needs_no_torch_and_the_engine_comes_on_first_use() -> None:
    # The environment's module links no libtorch: `import zertz` imports neither torch nor the
    # engine; the engine's names import both when first asked for. Without the engine, they
    # raise ImportError saying what to install.
    code = (
        "import sys, zertz\n"
        "assert 'torch' not in sys.modules and 'zertz_engine' not in sys.modules\n"
        "zertz.VecEnv(2).reset()\n"
        "assert zertz.match('greedy', 'random', games=2, threads=1)['games'] == 2\n"
        "assert 'torch' in sys.modules and 'zertz_engine' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    missing = (
        "import sys\n"
        "sys.modules['zertz_engine'] = None\n"
        "import zertz\n"
        "try:\n"
        "    zertz.selfplay\n"
        "except ImportError as e:\n"
        "    assert 'zertz[train]' in str(e), e\n"
        "else:\n"
        "    raise AssertionError('no ImportError')\n"
    )
    subprocess.run([sys.executable, "-c", missing], check=True, timeout=60)


def stub_defaults(name: str, method: str | None = None, stub: Path | None = None) -> dict[str, Any]:
    """The keyword defaults of function ``name`` (or of its ``method`` where ``name`` is a class)
    in the stub ``stub`` (by default ``_zertz.pyi``)."""
    stub = stub or Path(native.__file__).parent / "_zertz.pyi"
    tree = ast.parse(stub.read_text())
    body = tree.body
    if method is not None:
        (cls,) = [n for n in body if isinstance(n, ast.ClassDef) and n.name == name]
        body, name = cls.body, method
    (fn,) = [n for n in body if isinstance(n, ast.FunctionDef) and n.name == name]
    args = fn.args
    named = list(zip(args.args[len(args.args) - len(args.defaults) :], args.defaults, strict=True))
    named += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d]
    return {a.arg: ast.literal_eval(d) for a, d in named}


def test_the_match_settings_are_the_engines_in_the_stub_and_the_bindings() -> None:
    # The engine's MatchSettings owns the settings of a match: the stub's keywords are generated
    # from its description (python/tests/settings_stub.py), so that a setting added or a default
    # changed in Rust fails here until the stub is generated again.
    settings = native.match_settings()
    names = [s["name"] for s in settings]
    assert {"games", "board", "seed", "threads", "out", "answer_time", "move_time"} <= set(names)
    assert all(s["doc"] and s["type"] for s in settings)
    assert settings_stub.main([]) == 0, "the stub is stale: run python/tests/settings_stub.py"
    stub = stub_defaults("match", stub=settings_stub.STUB)
    assert {k: stub[k] for k in names} == {s["name"]: s["default"] for s in settings}
    # The bindings take every setting by keyword, and refuse a name that is none.
    summary = zertz.match("greedy", "random", games=2, threads=1, blitz=True, max_actions=5)
    assert (summary["games"], summary["blitz"]) == (2, True)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'gmes'.*games"):
        zertz.match("greedy", "random", gmes=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="games must be int, not float"):
        zertz.match("greedy", "random", games=2.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^games: "):
        zertz.match("greedy", "random", games=-1)


def test_the_selfplay_settings_are_the_engines_in_the_stub_and_the_bindings(
    tmp_path: Path,
) -> None:
    # The engine's SelfPlayConfig owns the settings of self-play: the stub's keywords and their
    # docs are generated from its description, each a keyword of zertz.selfplay over the config.
    settings = native.selfplay_settings()
    names = [s["name"] for s in settings]
    assert {"games", "threads", "seed", "full_simulations", "temperature"} <= set(names)
    assert "search" not in names  # a table: given in config
    defaults = native.selfplay_config()
    assert {s["name"]: s["default"] for s in settings} == {k: defaults[k] for k in names}
    assert settings_stub.main([]) == 0, "the stub is stale: run python/tests/settings_stub.py"
    summary = zertz.selfplay(
        tmp_path / "run",
        "uniform",
        config={"games": 5, "search": {"preset": "rollout"}},
        games=1,
        threads=1,
        full_simulations=2,
        fast_simulations=2,
        full_search_probability=1,
        max_actions=20,
    )
    assert summary["games"] == 1 and summary["search"]["c_puct"] == 4.0, summary
    refusals: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"gmes": 2}, TypeError, r"unexpected keyword argument 'gmes'.*games"),
        ({"search": {}}, TypeError, r"'search' \(search is a table: give it in config\)"),
        ({"games": "2"}, TypeError, "games must be int, not str"),
        ({"games": None}, TypeError, "games must be int, not NoneType"),
        ({"temperature": math.nan}, ValueError, r"^temperature: must be a finite number"),
        ({"temperature": -1.0}, ValueError, r"^temperature: "),
        ({"full_simulations": 1}, ValueError, r"^full_simulations: must be at least 2"),
    ]
    for kwargs, error, needle in refusals:
        with pytest.raises(error, match=needle):
            zertz.selfplay(tmp_path / "refused", "uniform", **kwargs)
        assert not (tmp_path / "refused").exists()


def test_the_step_limit_of_every_rl_front_end_is_the_engines() -> None:
    # One default, vecenv's DEFAULT_MAX_STEPS: the VecEnv's signature and stub are checked
    # against it, and the Gymnasium and PettingZoo environments take it by name.
    limit = zertz.DEFAULT_MAX_STEPS
    assert inspect.signature(zertz.VecEnv).parameters["max_steps"].default == limit
    assert stub_defaults("VecEnv", "__new__")["max_steps"] == limit
