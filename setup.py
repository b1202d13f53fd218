"""setuptools' build script beside ``pyproject.toml``, which holds everything else: with
``RUMMY_COMPILE=1``, the rules engine (``service/rules``) compiled with mypyc.

mypyc compiles the engine's type-annotated modules (``mypy --strict`` clean) to C extension
modules. The engine is the same code either way, and by default it runs from its sources.
Compiled, its own steps run about a quarter faster (the meld search, ``legal_moves``,
``apply``) and a move costs about 4% fewer instructions in all (bench/README.md), but
end to end the gain is within the noise: with ``python3 dev.py bench`` the move/ceiling
ratio was 0.6249 compiled and 0.6196 interpreted, at the same server-side cost per move,
while the compile takes about two minutes of a first install.

- ``RUMMY_COMPILE=1`` with a C compiler: every module of ``service/rules`` and of its
  subpackages but those in ``INTERPRETED`` is compiled; ``pip install -e .`` puts the
  compiled modules beside their sources, which ``python3 dev.py`` rebuilds when a source
  changes (and the tests refuse to run on a compiled module older than its source).
- Without a C compiler, each extension is optional: the build goes on, and the engine runs
  from its sources, as it always may.
- ``RUMMY_COMPILE`` unset, empty or ``0`` (the default): nothing is compiled.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent
RULES = ROOT / "service" / "rules"
INTERPRETED = frozenset({"verify.py"})
"""Left to the interpreter: ``verify.py`` subclasses ``random.Random`` (its replay of a
hand's recorded seeds), which a compiled class may not."""
COMPILED_FROM = "compiled-from.sha256"
"""The digest of each source compiled (``sha256sum`` lines, paths relative to
``service/rules``), written beside them by the build: the tests refuse a compiled module
whose source has changed since (tests/conftest.py)."""


def compile_requested(environ: Mapping[str, str]) -> bool:
    """Whether the build compiles the engine: ``RUMMY_COMPILE=1``."""
    return environ.get("RUMMY_COMPILE", "").strip() == "1"


def rules_sources(rules: Path) -> list[Path]:
    """The engine's modules to compile: every one below ``rules`` but ``INTERPRETED``."""
    return sorted(path for path in rules.rglob("*.py") if path.name not in INTERPRETED)


def rules_extensions(environ: Mapping[str, str] = os.environ,
                     rules: Path = RULES) -> list[Any]:
    """The engine's modules as mypyc extensions, each optional, with ``RUMMY_COMPILE=1``;
    none without it, or where mypyc cannot be imported."""
    if not compile_requested(environ):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build without its isolated environment, and no mypy installed
        return []
    paths = rules_sources(rules)
    extensions: list[Any] = mypycify([os.path.relpath(p, ROOT) for p in paths],
                                     opt_level="3")
    (rules / COMPILED_FROM).write_text("".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(rules).as_posix()}\n"
        for p in paths))
    for extension in extensions:
        extension.optional = True  # no C compiler: build on, the engine interpreted
    return extensions


if __name__ == "__main__":  # as setuptools runs it (a test imports it to read it)
    setup(ext_modules=rules_extensions())
