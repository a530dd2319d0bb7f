"""The house rules of the tree's structure, checked by the test command (scripts/test.sh):

- no import circle among the modules of the Python package ``zertz``: a module that needs what
  another needs of it takes it from a module below both. Every import counts, even in a function
  or under ``if TYPE_CHECKING:``;
- no circle among the modules of a Rust crate, at any level (the top modules of a crate, and the
  submodules of each module). A module and its own submodules are one module at the level
  above;
- a source file of more than 600 lines holds one room, and its first 30 lines say which and why
  ("Why one file of this size: ..."); a file of two rooms is two files. Test files are lists of
  independent tests, and are not held to it;
- a commit's subject is at most 72 characters (CONTRIBUTING.md), for every commit after
  ``SUBJECTS_SINCE`` but merges (the older history is as it was written). Without git, or in a
  shallow clone without that commit, this is skipped, and says so.

    .venv/bin/python scripts/check-structure.py

Prints what breaks a rule, and exits 1 if anything does. python/tests/test_structure.py tests the
graphs that the checks read.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

#: The repository's root (the Rust workspace).
ROOT = Path(__file__).resolve().parents[1]

#: The most lines of a source file that does not say why it is one file.
MOST_LINES = 600

#: The longest commit subject.
MOST_SUBJECT = 72

#: The commit after which every subject is held to MOST_SUBJECT.
SUBJECTS_SINCE = "f45ce68"

Graph = dict[str, dict[str, str]]


def import_graph(folder: Path, package: str) -> Graph:
    """The modules of the package ``package`` in ``folder``, each with the modules of the package
    it imports, and where (``file:line`` of the first import): every import counts, at the top,
    in a function or under ``if TYPE_CHECKING:``. ``from P import M`` imports the module ``P.M``
    where there is one (else ``P``); an extension module is known by its stub (``.pyi``)."""
    files: dict[str, Path] = {}
    for path in sorted(folder.rglob("*.py*")):  # x.py before x.pyi
        if path.suffix in (".py", ".pyi"):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            files.setdefault(".".join(parts).removesuffix(".__init__"), path)
    graph: Graph = {}
    for name, path in files.items():
        here = name if path.stem == "__init__" else name.rpartition(".")[0]
        edges: dict[str, str] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = here.split(".")[: len(here.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                names = [f"{base}.{alias.name}" for alias in node.names]
                targets = [name if name in files else base for name in names]
            else:
                continue
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    where = f"{path.relative_to(folder.parent)}:{node.lineno}"
                    edges.setdefault(target, where)
        graph[name] = edges
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The circles of ``graph``: its strongly connected components of more than one module
    (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _rust_modules(src: Path) -> dict[tuple[str, ...], Path]:
    """The modules of the Rust crate whose sources are ``src``, by path from the crate root
    (``()`` is ``lib.rs`` or ``main.rs``): ``x.rs`` and ``x/mod.rs`` are ``x``, ``x/y.rs`` is
    ``x::y``."""
    modules: dict[tuple[str, ...], Path] = {}
    for path in sorted(src.rglob("*.rs")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
            parts = parts[:-1]
        modules.setdefault(tuple(parts), path)
    return modules


def rust_import_graphs(src: Path) -> dict[str, Graph]:
    """The graphs of the Rust crate whose sources are ``src``, one for each module that has
    submodules (``""`` for the crate root, ``"mcts"``, ``"mcts::tree"``): its children, each
    with the children it names, and where (``file:line`` of the first). A file names a module by
    ``crate::a::b``, ``crate::{a, ...}``, ``super::x`` (``super::{x, ...}``) and ``self::x``; a
    name in a submodule counts for the child that holds it, and comments do not count."""
    modules = _rust_modules(src)
    graphs: dict[str, Graph] = {}
    for module in modules:
        if module:
            parent = "::".join(module[:-1])
            graphs.setdefault(parent, {}).setdefault(module[-1], {})

    def resolve(path: list[str]) -> tuple[str, ...]:
        """The longest module that ``path`` (from the crate root) names."""
        for n in range(len(path), -1, -1):
            if tuple(path[:n]) in modules:
                return tuple(path[:n])
        return ()

    word = r"[a-z_][a-z0-9_]*"
    pattern = re.compile(rf"\b(crate|self|super(?:::super)*)::((?:{word}::)*{word}|\{{[^}}]*\}})")
    for here, path in modules.items():
        rel = path.relative_to(src)
        code = "\n".join(line.split("//")[0] for line in path.read_text().splitlines())
        for match in pattern.finditer(code):
            start, rest = match.groups()
            n = code.count("\n", 0, match.start()) + 1
            ups = start.count("super")
            if ups > len(here):
                continue
            base = list(here) if start == "self" else list(here[: len(here) - ups])
            if start == "crate":
                base = []
            if rest.startswith("{"):
                items = [item.strip().split("::") for item in rest[1:-1].split(",")]
            else:
                items = [rest.split("::")]
            named = [base + [p for p in item if re.fullmatch(word, p)] for item in items]
            for target_path in named:
                target = resolve(target_path)
                common = 0
                while common < min(len(here), len(target)) and here[common] == target[common]:
                    common += 1
                # A module and its own submodules are one module at the level above.
                if common == len(here) or common == len(target):
                    continue
                level = "::".join(here[:common])
                graphs[level][here[common]].setdefault(target[common], f"{rel}:{n}")
    return graphs


def python_circles() -> list[str]:
    """The import circles of the package ``zertz``, one line per import in one."""
    graph = import_graph(ROOT / "python" / "zertz", "zertz")
    # The graph sees imports of every kind, or its silence would mean nothing.
    assert "zertz.training.selfplay" in graph["zertz.training.loop"]  # from P import M
    assert "zertz.agents" in graph["zertz"]  # under TYPE_CHECKING
    assert "zertz._zertz" in graph["zertz.observation"]  # an extension module, by its stub
    return [
        f"zertz: {v} imports {w} ({graph[v][w]})"
        for c in circles(graph)
        for v in c
        for w in graph[v]
        if w in c
    ]


def rust_circles() -> list[str]:
    """The circles among the modules of each crate of the workspace, one line per use in one."""
    members = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["members"]
    found: list[str] = []
    for member in members:
        for level, graph in rust_import_graphs(ROOT / member / "src").items():
            where = f"{member}{'::' + level if level else ''}"
            found += [
                f"{where}: {v} uses {w} ({graph[v][w]})"
                for circle in circles(graph)
                for v in circle
                for w in graph[v]
                if w in circle
            ]
    # The graphs see the crates' modules, or their silence would mean nothing.
    search = rust_import_graphs(ROOT / "search" / "src")
    assert "evaluator" in search[""]["batching"] and "gumbel" in search["mcts"]["tree"]
    return found


def long_files() -> list[str]:
    """The source files of more than MOST_LINES lines whose first lines do not say why."""
    skipped = {"target", "tests", ".venv", ".git", "node_modules", "benches", "__pycache__"}
    files = []
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = [d for d in subfolders if d not in skipped]
        files += [
            Path(folder) / n
            for n in names
            if n.endswith((".rs", ".py")) and not n.startswith("test_") and n != "conftest.py"
        ]
    assert len(files) > 100, "the check sees the source files"
    lines = {p: len(p.read_text().splitlines()) for p in files}
    long = {p: n for p, n in lines.items() if n > MOST_LINES}
    assert len(long) >= 5, "the check sees the long files, or its silence would mean nothing"
    return [
        f"{p.relative_to(ROOT)} ({n} lines) does not say why it is one file (its first 30 lines "
        "hold no 'Why one file of this size:')"
        for p, n in long.items()
        if "Why one file of this size:" not in "\n".join(p.read_text().splitlines()[:30])
    ]


def long_subjects(root: Path = ROOT, since: str = SUBJECTS_SINCE) -> list[str]:
    """The commits of the repository ``root`` after ``since`` whose subjects are longer than
    MOST_SUBJECT."""
    try:
        log = subprocess.run(
            ["git", "log", "--no-merges", "--format=%h %s", f"{since}..HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"check-structure: commit subjects not checked ({e})", file=sys.stderr)
        return []
    return [
        f"commit {line.split(' ', 1)[0]}: a subject of {len(line.split(' ', 1)[1])} characters "
        f"(at most {MOST_SUBJECT})"
        for line in log.splitlines()
        if len(line.split(" ", 1)[1]) > MOST_SUBJECT
    ]


def main() -> int:
    broken = python_circles() + rust_circles() + long_files() + long_subjects()
    for line in broken:
        print(f"check-structure: {line}", file=sys.stderr)
    if not broken:
        print("check-structure: no import circle, no long file without its reason, no long subject")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
