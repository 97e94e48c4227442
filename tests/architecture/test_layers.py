"""The layering rule over the whole source tree (docs/design.md, "Layers"): a folder of
``heritage_eval`` imports only folders below it — imports inside functions included —
and no two folders import each other, directly or through others.

The order is ``stats`` < ``core`` < ``models``, ``metrics``, ``cliargs`` < ``benchmarks``,
``viewer``, ``report`` < ``paper``, ``curate`` < ``cli``, ``api``, ``suite``, ``plugin``;
folders on one level may import each other as long as no circle forms. The imports are
read from the source with :mod:`ast` (every ``import`` and ``from … import`` node,
relative ones resolved), so a lazy import cannot hide an edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "heritage_eval"

LEVEL = {"stats": 0, "core": 1, "schemas": 1, "models": 2, "metrics": 2, "cliargs": 2,
         "benchmarks": 3, "viewer": 3, "report": 3, "paper": 4, "curate": 4,
         "cli": 5, "api": 5, "suite": 5, "plugin": 5}


def _folder(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "heritage_eval" else None


def import_edges(root: Path = SRC) -> list[tuple[str, str, str]]:
    """(importing folder, imported folder, "file:line") for every cross-folder import."""
    edges = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
        src = _folder(module)
        if src is None:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    targets = [".".join(base + ([node.module] if node.module else []))]
                elif node.module:
                    targets = [node.module]
            for target in targets:
                dst = _folder(target)
                if dst is not None and dst != src:
                    edges.append((src, dst, f"{path.relative_to(root)}:{node.lineno}"))
    return edges


def test_every_folder_has_a_level() -> None:
    # a new folder must be placed in the order before it can import anything
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and not p.name.startswith("_")
               and p.name != "__pycache__"}
    folders |= {p.stem for p in SRC.glob("*.py") if p.stem != "__init__"}
    assert folders - set(LEVEL) == set()


def test_no_import_runs_upward() -> None:
    upward = [f"{where}: {a} imports {b}" for a, b, where in import_edges()
              if LEVEL[b] > LEVEL[a]]
    assert upward == []


def test_no_import_circle_between_folders() -> None:
    graph: dict[str, set[str]] = {}
    for a, b, _ in import_edges():
        graph.setdefault(a, set()).add(b)

    def reaches(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    assert sorted(f for f in graph if f in reaches(f)) == []


def test_core_never_sees_argparse() -> None:
    # the engine, executors and backends take typed configuration objects only
    users = [str(p.relative_to(SRC)) for p in (SRC / "core").rglob("*.py")
             if any(isinstance(n, ast.Import | ast.ImportFrom)
                    and "argparse" in ([a.name for a in n.names] if isinstance(n, ast.Import)
                                       else [n.module or ""])
                    for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))))]
    assert users == []


@pytest.mark.parametrize("source, expected", [
    # a lazy import inside a function is an edge too; a relative import is resolved
    ("def f():\n    from heritage_eval.cli import main\n", ("core", "cli")),
    ("from ..report import tables\n", ("core", "report")),
])
def test_the_checker_sees_lazy_and_relative_imports(tmp_path: Path, source: str,
                                                    expected: tuple[str, str]) -> None:
    root = tmp_path / "heritage_eval"
    (root / "core").mkdir(parents=True)
    (root / "core" / "mod.py").write_text(source)
    assert [(a, b) for a, b, _ in import_edges(root)] == [expected]
