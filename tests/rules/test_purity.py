"""The rules engine is pure: no module under service/rules imports I/O, web or storage
libraries, or any part of the service outside service.rules (STYLE.md, "A pure core").

Every import is read with ``ast`` (top-level and inside functions, absolute and relative).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.modules import MODULES, PACKAGE, imported_modules, module_name

FORBIDDEN = ("flask", "flask_smorest", "flask_cors", "redis", "marshmallow", "webargs",
             "apispec", "requests", "socket", "os", "subprocess", "io", "pathlib",
             "gunicorn", "importlib")


def problems(source: str, module: str, is_package: bool = False) -> list[str]:
    out = []
    for line, name in imported_modules(source, module, is_package):
        top = name.split(".")[0]
        if top in FORBIDDEN or name == "__import__":
            out.append(f"{module}:{line} imports {name}")
        elif top == "service" and name != PACKAGE and not name.startswith(PACKAGE + "."):
            out.append(f"{module}:{line} imports {name} (outside {PACKAGE})")
    return out


def test_the_rules_package_has_the_engine_modules() -> None:
    names = {p.stem for p in MODULES}
    assert {"__init__", "cards", "melds", "ruleset", "engine", "scoring", "state", "moves",
            "views", "errors"} <= names


@pytest.mark.parametrize("path", [pytest.param(p, id=f"pure core {module_name(p)}")
                                  for p in MODULES])
def test_rules_module_is_pure(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert problems(source, module_name(path), path.name == "__init__.py") == []


@pytest.mark.parametrize(("source", "bad"), [
    pytest.param("import os\n", True, id="pure core check catches import os"),
    pytest.param("import os.path\n", True, id="pure core check catches import os.path"),
    pytest.param("from flask import Flask\n", True, id="pure core check catches flask"),
    pytest.param("from redis.client import Redis\n", True, id="pure core check catches redis"),
    pytest.param("import marshmallow as m\n", True, id="pure core check catches marshmallow"),
    pytest.param("from io import StringIO\n", True, id="pure core check catches io"),
    pytest.param("import requests, socket\n", True, id="pure core check catches socket"),
    pytest.param("from pathlib import Path\n", True, id="pure core check catches pathlib"),
    pytest.param("def f():\n    import subprocess\n", True,
                 id="pure core check catches an import inside a function"),
    pytest.param("from service.store import GameStore\n", True,
                 id="pure core check catches service.store"),
    pytest.param("from service import app\n", True, id="pure core check catches service.app"),
    pytest.param("import service.api\n", True, id="pure core check catches import service.api"),
    pytest.param("from .. import config\n", True,
                 id="pure core check catches a relative import out of the package"),
    pytest.param("from ..api import views\n", True,
                 id="pure core check catches a relative import of service.api"),
    pytest.param("__import__('socket')\n", True, id="pure core check catches __import__"),
    pytest.param("from service.rules.cards import Card\n", False,
                 id="pure core check allows service.rules"),
    pytest.param("from service.rules import cards\n", False,
                 id="pure core check allows from service.rules import"),
    pytest.param("from service import rules\n", False,
                 id="pure core check allows from service import rules"),
    pytest.param("from service import rules, config\n", True,
                 id="pure core check catches service.config beside service.rules"),
    pytest.param("from . import cards\n", False, id="pure core check allows relative imports"),
    pytest.param("import random, secrets, math\n", False,
                 id="pure core check allows the standard library's pure modules"),
])
def test_the_purity_check_itself(source: str, bad: bool) -> None:
    found = problems(source, f"{PACKAGE}.fake")
    assert bool(found) is bad, found
