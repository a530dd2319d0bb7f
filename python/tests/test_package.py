"""The package: public names, private native module, typing files."""

from __future__ import annotations

from pathlib import Path

import pytest

import zertz
import zertz._zertz as native


def test_public_names() -> None:
    # Pure Python: shards in zertz.data; the training side (torch) imported on first use.
    python_side = {
        "load_shards": "zertz.data",
        "export": "zertz.nn",
        "train": "zertz.training.loop",
        "plot": "zertz.plots",
    }
    for name in zertz.__all__:
        if name in python_side:
            assert getattr(zertz, name).__module__ == python_side[name]
            continue
        assert getattr(zertz, name) is getattr(native, name)
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
