"""The import graph of the ``sage`` package, and its cycles.

    python tests/import_graph.py [--edges]

Every ``import`` and ``from ... import`` in every module of ``sage`` counts, wherever it is written: at the top, inside
a function (a lazy import) or under ``if TYPE_CHECKING:`` (a cycle that only type checkers see is still a cycle a
reader has to keep in mind).  Importing ``sage.a.b`` also runs ``sage/a/__init__.py``, so it counts as importing
that package too (except the packages the importing module itself lives in, which are always imported
first).  The strongly connected components of the graph (Tarjan's algorithm) with more than one module
are the import cycles: no module in them can be understood, or imported, without the others.

Prints the cycles with the imports that close them (``file:line``), or that there are none; exits 1 when there is
one.  ``tests/test_code_quality.py`` runs the same check.
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "sage"


@dataclass(frozen=True)
class Edge:
    """``source`` imports ``target`` at ``path:line``."""

    source: str
    target: str
    path: str
    line: int


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path = ROOT, package: str = PACKAGE) -> dict[str, Path]:
    """Every module of the package by dotted name (packages by their own name)."""
    return {module_name(p, root): p for p in sorted((root / package).rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` is or lies in (``sage.x.func`` -> ``sage.x``)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _with_parents(name: str) -> list[str]:
    """``sage.a.b`` -> ``[sage.a.b, sage.a, sage]``: importing a module runs its packages' ``__init__`` first."""
    out = [name]
    while "." in name:
        name = name.rpartition(".")[0]
        out.append(name)
    return out


def imports_of(name: str, path: Path, known: dict[str, Path], root: Path = ROOT) -> list[Edge]:
    """The imports of one module that lead to modules of the package."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_package = path.name == "__init__.py"
    here = name if is_package else name.rpartition(".")[0]
    rel = str(path.relative_to(root))
    own = set(_with_parents(name))
    edges: set[Edge] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            # ``from pkg import mod`` imports the module ``pkg.mod``; ``from mod import func`` imports ``mod``
            targets = [f"{base}.{alias.name}" for alias in node.names] if base else []
        else:
            continue
        for target in targets:
            found = _resolve(target, known)
            if found is None:
                continue
            for module in _with_parents(found):
                if module not in own and module in known:
                    edges.add(Edge(name, module, rel, node.lineno))
    return sorted(edges, key=lambda e: (e.line, e.target))


def graph(root: Path = ROOT, package: str = PACKAGE) -> tuple[dict[str, set[str]], list[Edge]]:
    known = modules(root, package)
    edges = [e for name, path in known.items() for e in imports_of(name, path, known, root)]
    adjacency: dict[str, set[str]] = {name: set() for name in known}
    for e in edges:
        adjacency[e.source].add(e.target)
    return adjacency, edges


def strongly_connected(adjacency: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, each sorted, largest first."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(adjacency[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            out.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(adjacency) + 100))
    for v in sorted(adjacency):
        if v not in index:
            visit(v)
    return sorted(out, key=lambda c: (-len(c), c))


def cycles(root: Path = ROOT, package: str = PACKAGE) -> list[tuple[list[str], list[Edge]]]:
    """The import cycles: each strongly connected component of more than one module, with the edges inside it."""
    adjacency, edges = graph(root, package)
    out = []
    for component in strongly_connected(adjacency):
        if len(component) > 1:
            members = set(component)
            inside = [e for e in edges if e.source in members and e.target in members]
            out.append((component, inside))
    return out


def report(found: list[tuple[list[str], list[Edge]]], n_modules: int, n_edges: int) -> str:
    lines = [f"{n_modules} modules, {n_edges} imports between them: "
             + (f"{len(found)} import cycle(s)" if found else "no import cycles")]
    for component, inside in found:
        lines.append(f"\ncycle of {len(component)} modules: {', '.join(component)}")
        for e in sorted(inside, key=lambda e: (e.path, e.line)):
            lines.append(f"  {e.path}:{e.line}  {e.source} -> {e.target}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--edges", action="store_true", help="also list every import edge")
    args = ap.parse_args(argv)
    adjacency, edges = graph()
    found = cycles()
    print(report(found, len(adjacency), len({(e.source, e.target) for e in edges})))
    if args.edges:
        print()
        for e in sorted(edges, key=lambda e: (e.source, e.target, e.line)):
            print(f"{e.source} -> {e.target}  ({e.path}:{e.line})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
