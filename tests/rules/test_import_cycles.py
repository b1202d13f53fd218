"""No import circle anywhere in ``service/``: the modules' imports, read with ``ast``
(top-level and inside functions, absolute and relative), form no cycle.

``from x import y`` depends on module ``x.y`` when there is one, else on ``x``. The package
a module lives in is not counted as a dependency of it: Python runs a package's
``__init__`` before any of its modules, whoever imports them.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def modules_of(root: Path, package: str = "service") -> dict[str, tuple[str, bool]]:
    """Each module under ``root / package``: its name -> (source, is a package)."""
    out: dict[str, tuple[str, bool]] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        out[name] = (path.read_text(encoding="utf-8"), is_package)
    return out


def dependencies(modules: Mapping[str, tuple[str, bool]]) -> dict[str, set[str]]:
    """The modules each module imports, among ``modules``."""
    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, (source, is_package) in modules.items():
        package = module if is_package else module.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(source)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    base = ".".join([*parts[:len(parts) - node.level + 1],
                                     *([node.module] if node.module else [])])
                else:
                    base = node.module or ""
                names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                         for alias in node.names]
            for name in names:
                target = known(name)
                if target is not None and target != module:
                    found.add(target)
        graph[module] = found
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Each group of modules that import each other, round (Tarjan's strongly connected
    components of more than one module, or of one importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in graph.get(v, ()):
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_service_has_no_import_cycle() -> None:
    graph = dependencies(modules_of(ROOT))
    assert "service.rules.engine" in graph["service.rules.legal"]  # the graph is read
    assert cycles(graph) == []


def _fake(**sources: str) -> dict[str, tuple[str, bool]]:
    return {name.replace("__", "."): (text, False) for name, text in sources.items()}


@pytest.mark.parametrize(("modules", "expected"), [
    pytest.param(_fake(p__a="import p.b\n", p__b="import p.a\n"), [["p.a", "p.b"]],
                 id="two modules importing each other"),
    pytest.param(_fake(p__a="def f():\n    from p.b import g\n", p__b="from p.a import f\n"),
                 [["p.a", "p.b"]], id="an import inside a function counts"),
    pytest.param(_fake(p__a="from p import b\n", p__b="from p.c import x\n",
                       p__c="from p.a import y\n"), [["p.a", "p.b", "p.c"]],
                 id="a circle of three, through a submodule import"),
    pytest.param({"p": ("from p.a import x\n", True), "p.a": ("from . import b\n", False),
                  "p.b": ("from .a import y\n", False)}, [["p.a", "p.b"]],
                 id="relative imports"),
    pytest.param(_fake(p__a="import p.b\n", p__b="import json\n"), [], id="no circle"),
    pytest.param({"p": ("from p.a import x\n", True), "p.a": ("from p.b import y\n", False),
                  "p.b": ("z = 1\n", False)}, [],
                 id="a package's own modules do not depend on it"),
])
def test_the_cycle_check_itself(modules: dict[str, tuple[str, bool]],
                                expected: list[list[str]]) -> None:
    assert cycles(dependencies(modules)) == expected
