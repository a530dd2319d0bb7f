"""The graphs that scripts/check-structure.py reads: the test command runs its checks (no import
circle in the Python package or in any Rust crate, at any level; no long file without its
reason; no long commit subject), and these tests hold that the graphs see what they must."""

from __future__ import annotations

import subprocess
from pathlib import Path

from test_scripts_hostile import script

structure = script("check-structure")


def test_the_import_graph_finds_a_circle_through_functions_and_type_checking(
    tmp_path: Path,
) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("from pkg.sub import b\n")
    (package / "a.py").write_text("from pkg.sub import b\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from ..c import C\n"
    )
    (package / "c.py").write_text("def f() -> None:\n    import pkg.a\n")
    graph = structure.import_graph(package, "pkg")
    assert graph["pkg.a"] == {"pkg.sub.b": "pkg/a.py:1"}
    assert graph["pkg.sub.b"] == {"pkg.c": "pkg/sub/b.py:4"}
    assert structure.circles(graph) == [["pkg.a", "pkg.c", "pkg.sub.b"]]
    (package / "c.py").write_text("import pkg\n")
    graph = structure.import_graph(package, "pkg")
    assert structure.circles(graph) == [["pkg", "pkg.c", "pkg.sub.b"]]


def test_the_rust_import_graphs_find_circles_at_every_level(tmp_path: Path) -> None:
    (tmp_path / "b" / "e").mkdir(parents=True)
    (tmp_path / "lib.rs").write_text("mod a;\nmod b;\nmod c;\nuse crate::a::X;\n")
    (tmp_path / "a.rs").write_text("// crate::c is only named here\nuse crate::{b::Y, a};\n")
    (tmp_path / "b" / "mod.rs").write_text("mod d;\nmod e;\nuse super::c::Z;\n")
    # A submodule's use of its parent's items is no edge; its sibling's is one, a level down.
    (tmp_path / "b" / "d.rs").write_text("use super::Y;\nfn f() { super::super::a::g() }\n")
    (tmp_path / "b" / "e" / "mod.rs").write_text("mod f;\nuse super::{d::W,\n    Y};\n")
    (tmp_path / "b" / "e" / "f.rs").write_text("use crate::b::Y;\n")
    (tmp_path / "c.rs").write_text("pub struct Z;\nuse self::inner::Q;\n")
    graphs = structure.rust_import_graphs(tmp_path)
    assert graphs[""] == {"a": {"b": "a.rs:2"}, "b": {"c": "b/mod.rs:3", "a": "b/d.rs:2"}, "c": {}}
    assert graphs["b"] == {"d": {}, "e": {"d": "b/e/mod.rs:2"}}
    assert graphs["b::e"] == {"f": {}}
    assert structure.circles(graphs[""]) == [["a", "b"]]
    (tmp_path / "b" / "d.rs").write_text("use crate::b::e::f::T;\n")
    graphs = structure.rust_import_graphs(tmp_path)
    assert structure.circles(graphs["b"]) == [["d", "e"]]


def test_the_settings_reference_is_current() -> None:
    # docs/settings.md is generated from the settings' declarations (Rust's and the
    # training config's): a setting added, or a default or doc changed, needs it written again.
    reference = script("settings-reference")
    text = reference.reference()
    for name in ("games", "full_simulations", "c_puct", "captures_weight"):
        assert f"| `{name}` |" in text, name
    assert reference.main([]) == 0, "run scripts/settings-reference.py --write"


def test_a_long_commit_subject_is_found(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "A subject of any length before the rule " * 3)
    base = git("rev-parse", "HEAD")
    git("commit", "-q", "--allow-empty", "-m", "Add a short subject", "-m", "The body " * 20)
    assert structure.long_subjects(tmp_path, base) == []
    git("commit", "-q", "--allow-empty", "-m", "x" * 73)
    (found,) = structure.long_subjects(tmp_path, base)
    assert found.endswith("a subject of 73 characters (at most 72)")
    assert structure.long_subjects(tmp_path, "0" * 40) == []  # not in the history: skipped
