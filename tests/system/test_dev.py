"""What a fresh checkout's install does: ``setup.py`` compiles the rules engine only when
``RUMMY_COMPILE=1`` asks, every module of it (its subpackages' too); ``dev.py`` reinstalls
when any of those sources changes, and says what it is doing before each long step."""

from __future__ import annotations

import os
import runpy
import sys
import types
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _setup_py() -> dict[str, Any]:
    """setup.py's names, loaded without running ``setup()`` (which it does as a script)."""
    return runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")


def _dev_py() -> dict[str, Any]:
    return runpy.run_path(str(ROOT / "dev.py"), run_name="dev_under_test")


def _engine(tmp_path: Path) -> Path:
    """A rules engine of three modules, one of them in a subpackage, and ``verify.py``."""
    rules = tmp_path / "service" / "rules"
    (rules / "variants").mkdir(parents=True)
    for name in ("__init__.py", "turn.py", "verify.py", "variants/__init__.py",
                 "variants/basic.py"):
        (rules / name).write_text(f"# {name}\n")
    return rules


class _Mypyc:
    """``mypyc.build`` with a ``mypycify`` that records what it was asked to compile."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def mypycify(self, paths: list[str], opt_level: str) -> list[Any]:
        self.asked.append(paths)
        return [types.SimpleNamespace(name=p, optional=False) for p in paths]


@pytest.fixture
def mypyc(monkeypatch: pytest.MonkeyPatch) -> _Mypyc:
    recorder = _Mypyc()
    build = types.ModuleType("mypyc.build")
    build.mypycify = recorder.mypycify  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mypyc.build", build)
    return recorder


@pytest.mark.parametrize("environ", [{}, {"RUMMY_COMPILE": "0"}, {"RUMMY_COMPILE": ""}])
def test_setup_leaves_the_engine_interpreted_unless_asked(
        tmp_path: Path, mypyc: _Mypyc, environ: dict[str, str]) -> None:
    rules = _engine(tmp_path)
    assert _setup_py()["rules_extensions"](environ, rules) == []
    assert mypyc.asked == []
    assert not (rules / "compiled-from.sha256").exists()


def test_setup_compiles_every_module_of_the_engine_with_rummy_compile_1(
        tmp_path: Path, mypyc: _Mypyc) -> None:
    rules = _engine(tmp_path)
    extensions = _setup_py()["rules_extensions"]({"RUMMY_COMPILE": "1"}, rules)
    compiled = sorted(Path(p).resolve().relative_to(rules).as_posix() for p in mypyc.asked[0])
    assert compiled == ["__init__.py", "turn.py", "variants/__init__.py", "variants/basic.py"]
    assert extensions and all(e.optional for e in extensions)  # no C compiler: build on
    digests = (rules / "compiled-from.sha256").read_text().splitlines()
    assert sorted(line.split("  ")[1] for line in digests) == compiled


def test_dev_reinstalls_when_a_module_of_a_subpackage_of_the_engine_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dev = _dev_py()
    rules = _engine(tmp_path)
    for name in ("pyproject.toml", "setup.py"):
        (tmp_path / name).write_text(name)
    stamp = dev["_stamp"]
    monkeypatch.setitem(stamp.__globals__, "ROOT", tmp_path)
    monkeypatch.delenv("RUMMY_COMPILE", raising=False)
    before = stamp("test")
    (rules / "variants" / "basic.py").write_text("# changed\n")
    changed = stamp("test")
    assert changed != before
    monkeypatch.setenv("RUMMY_COMPILE", "0")
    assert stamp("test") == changed  # unset and 0 alike: interpreted
    monkeypatch.setenv("RUMMY_COMPILE", "1")
    assert stamp("test") != changed
    assert stamp("") != stamp("test")


def test_dev_says_what_it_does_before_each_step_of_a_first_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The first ``python3 dev.py serve`` or ``test`` installs for a minute or more: a line
    before each step says what is happening and about how long it takes."""
    dev = _dev_py()
    names = dev["ensure_venv"].__globals__
    venv_dir = tmp_path / ".venv"

    class Builder:
        def __init__(self, with_pip: bool) -> None:
            pass

        def create(self, path: Path) -> None:
            print("<created>")
            (Path(path) / "bin").mkdir(parents=True)
            (Path(path) / "bin" / "python").write_text("")

    def run(*cmd: Any, env: Any = None) -> None:
        print("<ran>", " ".join(str(c) for c in cmd))

    for name, value in {"VENV": venv_dir, "BIN": venv_dir / "bin", "_run": run,
                        "_drop_compiled": lambda: None}.items():
        monkeypatch.setitem(names, name, value)
    monkeypatch.setattr(names["venv"], "EnvBuilder", Builder)
    monkeypatch.delenv("RUMMY_COMPILE", raising=False)

    names["ensure_venv"]("")
    lines = capsys.readouterr().out.splitlines()
    said = [i for i, line in enumerate(lines) if line.startswith("dev.py: ")]
    created = lines.index("<created>")
    installed = next(i for i, line in enumerate(lines) if line.startswith("<ran>")
                     and " -e " in line)
    assert "creating .venv" in lines[created - 1], lines
    last_said = lines[max(i for i in said if i < installed)]
    assert last_said.startswith("dev.py: installing"), lines
    assert "first time: about a minute" in last_said, lines
    assert "compil" not in "\n".join(lines[i] for i in said)  # not asked for
    assert lines[-1].startswith("dev.py: "), lines  # and says when it is done

    names["ensure_venv"]("")  # up to date: nothing to say
    assert capsys.readouterr().out == ""

    monkeypatch.setenv("RUMMY_COMPILE", "1")
    names["ensure_venv"]("")
    lines = capsys.readouterr().out.splitlines()
    assert "creating .venv" not in "\n".join(lines)
    assert any("mypyc" in line for line in lines if line.startswith("dev.py: ")), lines


@pytest.mark.parametrize(("quick", "whole"), [(False, False), (True, False), (False, True)])
def test_dev_test_runs_lint_types_and_pytest_and_quick_leaves_out_the_slow_tests(
        monkeypatch: pytest.MonkeyPatch, quick: bool, whole: bool) -> None:
    """``python3 dev.py test`` runs ruff, mypy and every test (without arguments, those that
    are not slow spread over the CPUs, then the slow ones); ``--quick`` the same with
    ``-m "not slow"`` and without installing docker-compose or Chromium for the slow ones."""
    dev = _dev_py()
    names = dev["test"].__globals__
    done: list[str] = []

    codes = iter([3, 0] if whole else [0])

    class Finished:
        def __init__(self) -> None:
            self.returncode = next(codes)

    def run(*cmd: Any, env: Any = None) -> None:
        done.append(Path(str(cmd[0])).name)

    def pytest_run(cmd: list[str], **kwargs: Any) -> Finished:
        done.append("pytest " + " ".join(cmd[3:]))
        return Finished()

    monkeypatch.setitem(names, "_run", run)
    monkeypatch.setitem(names, "ensure_venv", lambda extras: done.append(f"venv {extras}"))
    monkeypatch.setitem(names, "ensure_compose", lambda: done.append("compose"))
    monkeypatch.setitem(names, "ensure_chromium", lambda: done.append("chromium"))
    monkeypatch.setattr(names["subprocess"], "run", pytest_run)

    args = [] if whole else ["--quick", "-x", "tests/rules"] if quick else ["-x", "tests/rules"]
    spread = (f"-n {min(os.cpu_count() or 1, 4)} --dist worksteal "
              if (os.cpu_count() or 1) > 1 else "")
    if whole:  # the first run fails (3): the second runs all the same, and 3 is returned
        assert dev["test"](args) == 3
        assert done == ["venv test", "compose", "chromium", "ruff", "mypy",
                        f"pytest -m not slow or random_run {spread}".rstrip(),
                        "pytest -m slow and not random_run"]
        return
    assert dev["test"](args) == 0
    if quick:
        assert done == ["venv test", "ruff", "mypy",
                        f"pytest -m not slow {spread}-x tests/rules"]
    else:
        assert done == ["venv test", "compose", "chromium", "ruff", "mypy",
                        "pytest -x tests/rules"]
