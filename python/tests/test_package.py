"""The package: public names, private native module, typing files."""

from __future__ import annotations

import ast
import inspect
import json
import math
import os
import re
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
        "load_network": "zertz.exported",
        "train": "zertz.training.loop",
        "plot": "zertz.plots",
        "player": "zertz.agents",
        "evaluate": "zertz.agents",
        "clone": "zertz.training.pretraining",
        "distill": "zertz.training.pretraining",
        "SearchBot": "zertz.search_policy",
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


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_reference_to_a_benchmarks_section_finds_it() -> None:
    # Docs link BENCHMARKS.md's sections by anchor, and code comments name them in quotes
    # (BENCHMARKS.md, "Quiet and busy"): each must be a heading there, or the reader finds
    # nothing when the file is reorganised.
    root = Path(__file__).parents[2]
    headings = [
        line.lstrip("#").strip()
        for line in (root / "BENCHMARKS.md").read_text().splitlines()
        if line.startswith("#")
    ]
    anchors = {_slug(h) for h in headings}
    kinds = ("*.md", "*.rs", "*.py", "*.sh", "*.toml")
    skip = {".venv", "target", ".git", "node_modules"}
    files = [
        f for kind in kinds for f in root.rglob(kind) if not skip & set(f.relative_to(root).parts)
    ]
    links, quoted = [], []
    for f in files:
        text = f.read_text(errors="replace")
        # Comment markers at the starts of lines go, so that a quote wrapped over lines is read.
        joined = re.sub(r"\n\s*(?://[/!]?|#)?\s*", " ", text)
        where = str(f.relative_to(root))
        links += [(where, a) for a in re.findall(r"BENCHMARKS\.md#([\w-]+)", text)]
        quoted += [
            (where, q) for q in re.findall(r"BENCHMARKS\.md(?:,|\s*\()\s*\"([^\"]+)\"", joined)
        ]
    assert links and quoted, "the references were not found: the test reads nothing"
    broken = [(f, a) for f, a in links if a not in anchors]
    broken += [(f, q) for f, q in quoted if q not in headings]
    assert not broken, f"references to BENCHMARKS.md sections that are not there: {broken}"


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


#: Runs the Python code that follows as a process without torch and the engine (the torch-free
#: wheel's environment): importing either raises ModuleNotFoundError, as where neither is
#: installed.
WITHOUT_TORCH = "import sys\nsys.modules['torch'] = sys.modules['zertz_engine'] = None\n"


def without_torch(code: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """Runs ``code`` in a process without torch and the engine, ``args`` its ``sys.argv[1:]``
    (in python/, matplotlib drawing into files)."""
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_TORCH + code, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=Path(__file__).parents[1],
        env={**os.environ, "MPLBACKEND": "Agg"},
    )


#: ``python -m zertz`` in such a process.
CLI = "import runpy\nrunpy.run_module('zertz', run_name='__main__', alter_sys=True)\n"


def test_without_torch_the_training_side_says_what_to_install(tmp_path: Path) -> None:
    # zertz.export, zertz.train and zertz.training ended with "No module named 'torch'" and no
    # word of what to install, unlike zertz.match: each says it in one line, the same one.
    code = (
        "import zertz, zertz.training\n"
        "for name, get in [\n"
        "    ('zertz.match', lambda: zertz.match),\n"
        "    ('zertz.export', lambda: zertz.export),\n"
        "    ('zertz.train', lambda: zertz.train),\n"
        "    ('zertz.training', lambda: zertz.training.iterate),\n"
        "    ('zertz.training.loop', lambda: zertz.training.loop),\n"
        "]:\n"
        "    try:\n"
        "        get()\n"
        "    except ImportError as e:\n"
        "        print(e)\n"
        "    else:\n"
        "        raise AssertionError(name)\n"
        "try:\n"
        "    from zertz.training import train\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    proc = without_torch(code)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    whats = ["match", "export", "train", "training", "training.loop", "training"]
    assert len(lines) == len(whats), lines
    for line, what in zip(lines, whats, strict=True):
        assert line.startswith(f"zertz.{what}"), line
        assert "needs the engine, which links torch, and it is not installed" in line, line
        assert line.endswith(f" {zertz.optional.INSTALL_ENGINE}"), line
    # The commands that train or export say it too, in one line (status 2).
    commands: list[list[str | Path]] = [
        ["train", "--config", "../configs/train/tiny.toml", "--run", tmp_path / "run"],
        ["export", tmp_path / "checkpoint.pt", tmp_path / "model.safetensors"],
        ["random-model", tmp_path / "model.safetensors"],
    ]
    for args in commands:
        proc = without_torch(CLI, *args)
        assert proc.returncode == 2, proc
        assert proc.stderr.splitlines() == [
            f"error: python -m zertz {args[0]} {zertz.optional.INSTALL_ENGINE}"
        ]
    assert not (tmp_path / "run").exists()


def test_plot_table_and_human_ceiling_need_no_torch(games: Path, tmp_path: Path) -> None:
    # Reading a run folder and a dataset needs neither torch nor the engine.
    run = tmp_path / "run"
    run.mkdir()
    result = {"wins": 3, "draws": 0, "losses": 1, "score": 0.75, "elo": 190.8}
    row = {
        "iteration": 1,
        "step": 4,
        "policy_loss": 3.0,
        "value_loss": 0.5,
        "elo": 10.0,
        "evaluation": {
            "best": {**result, "elo_low": -100.0, "elo_high": 120.0},
            "random": {**result, "elo_low": -90.0, "elo_high": 500.0},
        },
    }
    (run / "metrics.jsonl").write_text(json.dumps(row) + "\n")
    data = tmp_path / "data"
    zertz.dataset([games], data, boards=[37], max_games=20)
    commands: list[list[str | Path]] = [
        ["table", run],
        ["plot", run, "--out", tmp_path / "curves.png"],
        ["human-ceiling", "--dataset", data, "--plies", "2", "--min-count", "2"],
    ]
    for args in commands:
        proc = without_torch(CLI, *args)
        assert proc.returncode == 0, proc.stderr
        if args[0] == "table":
            assert "network after iteration 1 (step 4)" in proc.stdout, proc.stdout
            assert "random" in proc.stdout
        elif args[0] == "plot":
            assert proc.stdout.strip() == str(tmp_path / "curves.png")
            assert (tmp_path / "curves.png").stat().st_size > 0
        else:
            assert proc.stdout.startswith("37 rings (20 games)"), proc.stdout


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
    # Rust's MatchSettings owns the settings of a match: the stub's keywords are generated
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
    # Rust's SelfPlayConfig owns the settings of self-play: the stub's keywords and their
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
    for name in ("VecEnv", "Episode"):
        cls = getattr(native, name)
        assert inspect.signature(cls).parameters["max_steps"].default == limit, name
        assert stub_defaults(name, "__new__")["max_steps"] == limit, name


#: The repository's root (the Rust workspace).
ROOT = Path(__file__).resolve().parents[2]


def test_the_player_grammar_is_the_engines_one_text() -> None:
    # One text of the spec grammar (zertz_arena::players::SPEC_GRAMMAR): Python shows it, and an
    # unknown spec's error says it.
    assert "alphabeta[:DEPTH]" in zertz.PLAYER_SPECS and ":time=SECONDS" in zertz.PLAYER_SPECS
    with pytest.raises(ValueError) as e:
        zertz.parse_player("alphazero")
    assert zertz.PLAYER_SPECS in str(e.value)


def test_the_board_list_is_written_in_prose_once() -> None:
    """The prose of the docs, the configs' comments, the web page and the code's docs names the
    boards by pointing at one list, docs/rules.md's, and that list is Rust's
    (``zertz.BOARDS``): a board added in Rust fails here until the one list says it.
    Shorter lists of boards (the records' 37, 48 and 61) are other facts. docs/settings.md is
    generated from Rust's own declarations (their docs say the list as Rust makes
    it), so it is not prose written by hand."""
    number = "|".join(str(b) for b in zertz.BOARDS)
    board = rf"`?\b(?:{number})\b`?"
    written = re.compile(rf"{board}(?:(?:, | or | and |, or |, and ){board}){{3,}}")
    prose = [
        *ROOT.glob("*.md"),
        *(p for p in (ROOT / "docs").glob("*.md") if p.name != "settings.md"),
        *(ROOT / "configs").rglob("*.toml"),
        *(ROOT / "python").glob("*.md"),
        *(ROOT / "serve" / "assets").glob("*.*"),
    ]
    code = [p for crate in ROOT.glob("*/src") for p in crate.rglob("*.rs")]
    assert len(prose) > 20 and len(code) > 50

    def comments(path: Path) -> str:
        """The text of a file, or of a Rust file's comments (its tests may say the list)."""
        lines = path.read_text().splitlines()
        if path.suffix == ".rs":
            lines = [x for x in lines if x.lstrip().startswith("//")]
        return "\n".join(lines)

    found = [
        (str(path.relative_to(ROOT)), [int(x) for x in re.findall(r"\d+", m.group(0))])
        for path in prose + code
        for m in written.finditer(comments(path))
    ]
    assert found == [("docs/rules.md", list(zertz.BOARDS))], found


def test_every_pin_of_torch_and_ray_is_the_development_one() -> None:
    """torch and Ray are pinned once for development (python/requirements-dev.txt: torch is the
    libtorch the engine links, and that of the GPU machines); every other file that pins them
    (the packages' extras, the cluster's set-up) pins the same version."""
    dev = (ROOT / "python" / "requirements-dev.txt").read_text()
    pins = {name: re.search(rf"^{name}==(\S+)$", dev, re.M) for name in ("torch", "ray")}
    assert all(pins.values()), pins
    files = [
        ROOT / "python" / "pyproject.toml",
        ROOT / "python" / "engine" / "pyproject.toml",
        ROOT / "configs" / "ray" / "aws.yaml",
    ]
    seen = 0
    for path in files:
        for name, pin in pins.items():
            assert pin is not None
            for version in re.findall(rf'"{name}(?:\[[a-z,]+\])?==([^"]+)"', path.read_text()):
                assert version == pin.group(1), f"{path.relative_to(ROOT)}: {name}=={version}"
                seen += 1
    assert seen >= 4  # torch in each file, Ray in the cluster's set-up
