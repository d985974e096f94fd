"""Arrows point one way: no import circle between modules or between packages, and no
package imports another package's private module.

Found with :mod:`ast` in every module of ``src/jobbench``. Every ``import`` and ``from …
import`` counts wherever it sits (module level, inside a function, under
``TYPE_CHECKING``): a lazy import is still a dependency. A *package* is a first-level
package of ``jobbench`` (``jobbench.judge``, ``jobbench.runner``, …; the root modules such as
``jobbench.cli`` are ``jobbench``). A *private module* is one whose dotted name has a part
starting with ``_`` below its package (``jobbench.scoring._stats``); only modules of the same
package may import it. ``ALLOWED`` lists the exceptions, each with its reason, and must stay
exact.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "jobbench"

ALLOWED: dict[tuple[str, str], str] = {
    ("jobbench.cli", f"jobbench.{pkg}._cli"): "the root CLI collects each stage's commands"
    for pkg in ("calibrate", "extract", "gates", "judge", "report", "runner", "selection", "tasks")
}


def _modules() -> dict[str, Path]:
    out = {}
    for p in SRC.rglob("*.py"):
        parts = list(p.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _edges(mods: dict[str, Path]) -> set[tuple[str, str]]:
    """(importer, imported module) for every import of a jobbench module."""
    edges = set()
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                full = [f"{mod}.{a.name}" for a in node.names]
                targets = [f if f in mods else mod for f in full]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            edges |= {(name, t) for t in targets if t in mods and t != name}
    return edges


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2]) if module.count(".") >= 1 else module


def _root_package(module: str, mods: dict[str, Path]) -> str:
    # jobbench.cli and jobbench.records are modules of the root package "jobbench"
    parts = module.split(".")
    if len(parts) > 1 and (SRC / parts[1] / "__init__.py").is_file():
        return ".".join(parts[:2])
    return "jobbench"


def _cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _private_owner(module: str) -> str | None:
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def test_the_walker_sees_known_edges() -> None:
    edges = _edges(_modules())
    assert ("jobbench.runner._run", "jobbench.runner._executor") in edges
    assert ("jobbench.judge._grade", "jobbench.scoring") in edges
    assert _cycles({("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")}) == [["a", "b", "c"]]


def test_no_module_circle() -> None:
    assert _cycles(_edges(_modules())) == []


def test_no_package_circle() -> None:
    mods = _modules()
    pkg_edges = set()
    for a, b in _edges(mods):
        pa, pb = _root_package(a, mods), _root_package(b, mods)
        if pa != pb and pa != "jobbench" and pb != "jobbench":
            pkg_edges.add((pa, pb))
    assert _cycles(pkg_edges) == []


def test_no_cross_package_private_import() -> None:
    found = set()
    for a, b in _edges(_modules()):
        owner = _private_owner(b)
        if owner is None or owner == "jobbench":
            continue
        if _package(a) != _package(owner):
            found.add((a, b))
    assert found - set(ALLOWED) == set(), sorted(found - set(ALLOWED))
    assert set(ALLOWED) - found == set(), "ALLOWED has entries that no longer match"
