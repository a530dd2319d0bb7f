"""The package: public names, private native module, typing files."""

from __future__ import annotations

from pathlib import Path

import zertz
import zertz._zertz as native


def test_public_names() -> None:
    for name in zertz.__all__:
        if name == "load_shards":  # pure Python, in zertz.data
            assert zertz.load_shards.__module__ == "zertz.data"
            continue
        assert getattr(zertz, name) is getattr(native, name)
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
