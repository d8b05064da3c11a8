"""The code's own checks, run by the test suite so that CI (which runs exactly the README's test command) runs them:
ruff (lint, import order, and no Streamlit in ``sage``), mypy over ``sage``, and no import cycle inside ``sage``.

The tools and their settings are pinned: ``requirements-dev.txt`` and ``pyproject.toml``.
"""

from __future__ import annotations

import subprocess
import sys

from tests.import_graph import ROOT, cycles, graph, report


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean():
    proc = _run("ruff", "check", ".")
    assert proc.returncode == 0, f"ruff check . found problems:\n{proc.stdout}{proc.stderr}"


def test_mypy_is_clean():
    proc = _run("mypy")  # files and options: [tool.mypy] in pyproject.toml
    assert proc.returncode == 0, f"mypy found problems:\n{proc.stdout}{proc.stderr}"


def test_no_module_of_sage_imports_one_that_imports_it_back():
    adjacency, edges = graph()
    found = cycles()
    assert not found, report(found, len(adjacency), len(edges))


def test_the_import_graph_sees_lazy_and_type_checking_imports(tmp_path):
    """The cycle check must not miss what a reader would see: an import inside a function or under
    ``if TYPE_CHECKING`` closes a cycle as much as one at the top."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (package / "b.py").write_text("def f():\n    from . import c\n")
    (package / "c.py").write_text("from pkg.a import A\n")
    (package / "d.py").write_text("from . import a\n")
    [(component, edges)] = cycles(tmp_path, "pkg")
    assert component == ["pkg.a", "pkg.b", "pkg.c"]
    assert {(e.source, e.target) for e in edges} == {("pkg.a", "pkg.b"), ("pkg.b", "pkg.c"), ("pkg.c", "pkg.a")}


def test_the_cycle_command_runs():
    proc = subprocess.run([sys.executable, "tests/import_graph.py"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0 and "no import cycles" in proc.stdout, proc.stdout + proc.stderr
