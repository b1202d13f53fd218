"""setuptools' build script beside ``pyproject.toml``, which holds everything else: the rules
engine (``service/rules``) compiled with mypyc.

mypyc compiles the engine's type-annotated modules (``mypy --strict`` clean) to C extension
modules. The engine is the same code either way; compiled, its own steps run about a
quarter faster (the meld search, ``legal_moves``, ``apply``), and a move costs about 4% fewer
instructions in all (bench/README.md).

- With a C compiler (the image's build stage, CI, a developer's machine) every module of
  ``service/rules`` but those in ``INTERPRETED`` is compiled; ``pip install -e .`` puts the
  compiled modules beside their sources, which ``python3 dev.py`` rebuilds when a source
  changes (and the tests refuse to run on a compiled module older than its source).
- Without one, each extension is optional: the build goes on, and the engine runs from its
  sources, as it always may.
- ``RUMMY_COMPILE=0`` builds without compiling.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).resolve().parent
RULES = ROOT / "service" / "rules"
INTERPRETED = frozenset({"verify.py"})
"""Left to the interpreter: ``verify.py`` subclasses ``random.Random`` (its replay of a
hand's recorded seeds), which a compiled class may not."""
COMPILED_FROM = RULES / "compiled-from.sha256"
"""The digest of each source compiled (``sha256sum`` lines), written by the build: the
tests refuse a compiled module whose source has changed since (tests/conftest.py)."""


def rules_extensions() -> list[Any]:
    """The engine's modules as mypyc extensions, each optional; none with
    ``RUMMY_COMPILE=0``, or where mypyc cannot be imported."""
    if os.environ.get("RUMMY_COMPILE", "1") == "0":
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # a build without its isolated environment, and no mypy installed
        return []
    paths = sorted(path for path in RULES.glob("*.py") if path.name not in INTERPRETED)
    extensions: list[Any] = mypycify([str(p.relative_to(ROOT)) for p in paths],
                                     opt_level="3")
    COMPILED_FROM.write_text("".join(
        f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in paths))
    for extension in extensions:
        extension.optional = True  # no C compiler: build on, the engine interpreted
    return extensions


setup(ext_modules=rules_extensions())
