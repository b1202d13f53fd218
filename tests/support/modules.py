"""The modules of service/rules and what each imports (read by the purity and i18n
tests)."""
from __future__ import annotations

import ast
from pathlib import Path

RULES_DIR = Path(__file__).resolve().parents[2] / "service" / "rules"


MODULES = sorted(RULES_DIR.rglob("*.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(RULES_DIR).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join((PACKAGE, *parts))


def imported_modules(source: str, module: str, is_package: bool = False
                     ) -> list[tuple[int, str]]:
    """``(line, absolute module name)`` of every import in ``source`` (the text of
    ``module``); ``from x import y`` yields ``x.y`` (y may be a submodule or a name in x)."""
    tree = ast.parse(source)
    package = module if is_package else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            found.extend((node.lineno, f"{name}.{alias.name}") for alias in node.names)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id == "__import__"):
            found.append((node.lineno, "__import__"))
    return found


PACKAGE = "service.rules"
