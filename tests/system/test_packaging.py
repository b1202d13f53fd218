"""How the service is configured, packaged and started.

Dockerfile (hadolint), docker-compose.yml (``docker-compose config``), gunicorn settings,
``Settings.from_env`` and ``rummy-referee serve`` as a real process tree (gunicorn plus, when
there is no REDIS_URL, its own redis-server), checked through /proc.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import json
import os
import re
import runpy
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
import requests
import yaml

from service.config import ConfigError, Settings, default_workers
from service.redis_server import RedisServer
from tests.support.modules import MODULES, module_name
from tests.support.serving import Server, descendants, proc_stat

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"

EMBEDDED_LINE = re.compile(
    r"rummy-referee: no REDIS_URL; started redis-server (?P<binary>\S+) on "
    r"127\.0\.0\.1:(?P<port>\d+) \(data in (?P<dir>.+), AOF on; pid (?P<pid>\d+)\)"
)


# --- helpers ---------------------------------------------------------------------------------


def _tool(name: str) -> str:
    beside = BIN / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found is None:
        pytest.fail(
            f"{name} not found beside {sys.executable} nor on PATH: run python3 dev.py test"
        )
    return found


def _docker_compose() -> str:
    configured = os.environ.get("RUMMY_DOCKER_COMPOSE")
    default = ROOT / ".venv-compose" / "bin" / "docker-compose"
    candidate = Path(configured) if configured else default
    if not (candidate.is_file() and os.access(candidate, os.X_OK)):
        pytest.fail(
            f"docker-compose not found at {candidate} (env RUMMY_DOCKER_COMPOSE): "
            "run python3 dev.py test, which installs it"
        )
    return str(candidate)


def _dockerfile_stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile as stages of (INSTRUCTION, arguments), continuation lines joined."""
    stages: list[list[tuple[str, str]]] = []
    logical = ""
    for raw in DOCKERFILE.read_text().splitlines():
        line = raw.strip()
        if not logical and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            logical += line[:-1] + " "
            continue
        logical += line
        keyword, _, rest = logical.partition(" ")
        logical = ""
        if keyword.upper() == "FROM":
            stages.append([])
        stages[-1].append((keyword.upper(), rest.strip()))
    return stages


def _compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE_FILE.read_text())
    assert isinstance(data, dict)
    return data


def _still_there(pid: int, starttime: int) -> bool:
    stat = proc_stat(pid)
    return stat is not None and stat[2] == starttime


class Served(Server):
    """``rummy-referee serve`` (:class:`serving.Server`, 1 worker x 2 threads) in exactly the
    environment ``env``, remembering the processes below it, so that cleanup finds orphans
    too."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        super().__init__(tmp_path, None, workers=1, threads=2, base_env=env)
        self.seen: dict[int, tuple[str, int, int]] = {}

    def snapshot(self) -> dict[int, tuple[str, int, int]]:
        """The processes below serve now; remembered, so that cleanup finds orphans too."""
        tree = descendants(self.proc.pid)
        self.seen.update(tree)
        return tree

    def wait_ready(self, session: requests.Session | None = None) -> None:
        try:
            super().wait_ready(session)
        finally:
            self.snapshot()

    def kill_all(self) -> None:
        if self.proc.poll() is None:
            self.snapshot()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        for pid, (_, _, start) in self.seen.items():
            if _still_there(pid, start):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


@pytest.fixture
def serve_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and not k.startswith("RUMMY_")}
    env["RUMMY_DATA_DIR"] = str(tmp_path / "data")
    return env


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[Served]]:
    started: list[Served] = []
    yield started
    for one in started:
        one.kill_all()


# --- The compiled engine (setup.py) ---------------------------------------------------------


def test_the_rules_engine_runs_all_compiled_or_all_from_its_sources() -> None:
    """setup.py compiles the engine only with ``RUMMY_COMPILE=1``: every module of
    ``service/rules`` and its subpackages but ``verify``, each extension optional, so a
    failed compile would leave part of the engine interpreted without a word. Whichever way
    it was installed, the engine under test is one or the other, never a mix."""
    modules = sorted(module_name(p) for p in MODULES)
    files = {name: importlib.import_module(name).__file__ or "" for name in modules}
    interpreted = sorted(name for name, file in files.items() if file.endswith(".py"))
    assert interpreted in (modules, ["service.rules.verify"]), files


def _engine_classes_allowing_subclasses(compiled: list[Path]) -> dict[tuple[str, str], bool]:
    """Every class the compile makes native, by (module, name): whether it is marked
    ``@mypyc_attr(allow_interpreted_subclasses=True)``."""
    classes = {}
    for path in compiled:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                classes[module_name(path), node.name] = any(
                    isinstance(d, ast.Call) and getattr(d.func, "id", "") == "mypyc_attr"
                    and any(k.arg == "allow_interpreted_subclasses"
                            and isinstance(k.value, ast.Constant) and k.value.value is True
                            for k in d.keywords)
                    for d in node.decorator_list)
    return classes


def _subclassed_bases(path: Path) -> list[tuple[str, str, str]]:
    """The (module, name) of each base of each class in ``path`` that it imported from
    ``service.rules`` by name (``from service.rules.x import Name``, or ``from
    service.rules import x`` and ``x.Name``), with the subclass's name."""
    tree = ast.parse(path.read_text())
    names: dict[str, tuple[str, str]] = {}
    """Each name imported from service.rules: (its module, its name there)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("service.rules"):
            for alias in node.names:
                names[alias.asname or alias.name] = (node.module or "", alias.name)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in names:
                found.append((*names[base.id], node.name))
            elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) \
                    and base.value.id in names:  # a module imported by name: its .Name
                found.append((".".join(names[base.value.id]), base.attr, node.name))
    return found


def test_interpreted_classes_subclass_only_engine_classes_that_allow_it() -> None:
    """Compiled (``RUMMY_COMPILE=1``), a class of the engine is native, and mypyc refuses to
    make an instance of an interpreted subclass of it ("interpreted classes cannot inherit
    from compiled") unless the base is marked ``@mypyc_attr(allow_interpreted_subclasses=
    True)``: a subclass outside the compile would answer 500 there while every test passes
    on the engine's sources. Checked on the sources, so that the interpreted run sees it."""
    rules = ROOT / "service" / "rules"
    setup = runpy.run_path(str(ROOT / "setup.py"), run_name="setup_under_test")
    compiled = setup["rules_sources"](rules)
    allowed = _engine_classes_allowing_subclasses(compiled)
    interpreted = sorted(set((ROOT / "service").rglob("*.py")) - set(compiled))
    subclassed = [(path.relative_to(ROOT).as_posix(), module, name, subclass)
                  for path in interpreted for module, name, subclass in _subclassed_bases(path)]
    assert any(name == "Message" for _, _, name, _ in subclassed)  # the check finds them
    by_name = {name: allows for (_, name), allows in allowed.items()}  # a name re-exported
    refused = [entry for entry in subclassed
               if not allowed.get((entry[1], entry[2]), by_name.get(entry[2], True))]
    assert refused == []


# --- Dockerfile ------------------------------------------------------------------------------


def test_hadolint_passes_on_the_dockerfile() -> None:
    result = subprocess.run(
        [_tool("hadolint"), "--no-color", "--failure-threshold", "style", str(DOCKERFILE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_dockerfile_is_multi_stage_and_the_runtime_stage_gets_only_the_venv() -> None:
    stages = _dockerfile_stages()
    assert len(stages) >= 2
    build, runtime = stages[0], stages[-1]
    assert " AS " in build[0][1].upper()
    assert ("RUN", "pip install --no-cache-dir .") in build
    copies = [args for keyword, args in runtime if keyword == "COPY"]
    assert copies == ["--from=build /opt/venv /opt/venv"]


def test_dockerfile_runs_as_non_root_user_with_a_healthcheck_without_curl() -> None:
    runtime = _dockerfile_stages()[-1]
    users = [args for keyword, args in runtime if keyword == "USER"]
    assert users, "the runtime stage has no USER"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    user_index = max(i for i, (keyword, _) in enumerate(runtime) if keyword == "USER")
    assert all(keyword != "RUN" for keyword, _ in runtime[user_index:])

    healthchecks = [args for keyword, args in runtime if keyword == "HEALTHCHECK"]
    assert len(healthchecks) == 1
    check = healthchecks[0]
    assert "CMD" in check and "NONE" not in check.split()
    assert "urllib" in check and "/healthz" in check and "curl" not in check

    assert ("EXPOSE", "8000") in runtime
    cmd = json.loads(next(args for keyword, args in runtime if keyword == "CMD"))
    assert cmd[0] == "gunicorn"
    assert "python:service.gunicorn_conf" in cmd
    assert cmd[cmd.index("--bind") + 1] == "0.0.0.0:8000"


def test_dockerignore_keeps_the_build_inputs_and_drops_local_state() -> None:
    patterns = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".git", ".venv", "data"} <= patterns
    assert not patterns & {"*", "service", "pyproject.toml", "setup.py", "README.md",
                           "!service"}


# --- docker-compose.yml ----------------------------------------------------------------------


def test_docker_compose_config_is_valid() -> None:
    result = subprocess.run(
        [_docker_compose(), "-f", str(COMPOSE_FILE), "config", "-q"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_redis_is_durable_and_the_api_waits_for_it_to_be_healthy() -> None:
    services = _compose()["services"]
    redis = services["redis"]
    assert str(redis["image"]).startswith("redis:7")
    command = redis["command"]
    args = command if isinstance(command, list) else command.split()
    pairs = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("--")}
    assert pairs["--appendonly"] == "yes"
    assert pairs["--appendfsync"] == "everysec"
    assert pairs["--maxmemory-policy"] == "noeviction"
    test = " ".join(redis["healthcheck"]["test"])
    assert "redis-cli" in test and "ping" in test
    volume = redis["volumes"][0].split(":")
    assert volume[0] in _compose()["volumes"] and volume[1] == "/data"

    api = services["api"]
    assert api["build"] == "."
    assert api["environment"]["REDIS_URL"] == "redis://redis:6379/0"
    assert "8000:8000" in api["ports"]
    assert api["depends_on"] == {"redis": {"condition": "service_healthy"}}


# --- gunicorn.conf.py ------------------------------------------------------------------------

_DUMP_CONF = """
import json, runpy, sys, types
ns = runpy.run_path(sys.argv[1])
print(json.dumps({k: v for k, v in ns.items() if not k.startswith("_")
                  and not isinstance(v, (type, types.ModuleType, types.FunctionType))}))
"""


def _load_conf(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _DUMP_CONF, str(ROOT / "gunicorn.conf.py")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


def test_gunicorn_conf_reads_the_environment_and_sets_only_gunicorn_settings(
    serve_env: dict[str, str],
) -> None:
    from gunicorn.config import KNOWN_SETTINGS

    env = serve_env | {
        "REDIS_URL": "redis://127.0.0.1:1/0",
        "RUMMY_WORKERS": "3",
        "RUMMY_THREADS": "5",
        "RUMMY_BIND": "0.0.0.0:9999",
        "RUMMY_LOG_LEVEL": "warning",
    }
    result = _load_conf(env)
    assert result.returncode == 0, result.stderr
    conf = json.loads(result.stdout)
    known = {setting.name for setting in KNOWN_SETTINGS}
    assert set(conf) <= known, set(conf) - known
    assert conf["wsgi_app"] == "service.app:create_app()"
    assert conf["worker_class"] == "gthread"
    assert (conf["workers"], conf["threads"], conf["bind"]) == (3, 5, ["0.0.0.0:9999"])
    assert conf["loglevel"] == "warning"
    assert conf["accesslog"] is None and conf["errorlog"] == "-"
    assert conf["control_socket_disable"] is True
    asked = _load_conf(env | {"RUMMY_ACCESS_LOG": "1"})
    assert json.loads(asked.stdout)["accesslog"] == "-", asked.stderr
    assert 0 < conf["graceful_timeout"] < conf["timeout"]


def test_gunicorn_conf_freezes_what_a_worker_has_loaded(serve_env: dict[str, str]) -> None:
    """post_worker_init: the objects a worker holds once it has loaded the app are frozen
    (never scanned by the cyclic collector again), and its youngest generation is collected
    every ``YOUNG_COLLECTION`` allocations, not Python's 700."""
    code = ("import gc, runpy, sys; conf = runpy.run_path(sys.argv[1]); "
            "import service.app; service.app.create_app; before = gc.get_freeze_count(); "
            "assert gc.get_threshold()[0] == 700; "
            "conf['post_worker_init'](None); print(before, gc.get_freeze_count()); "
            "from service.tuning import YOUNG_COLLECTION; "
            "assert gc.get_threshold() == (YOUNG_COLLECTION, 10, 10), gc.get_threshold()")
    result = subprocess.run([sys.executable, "-c", code, str(ROOT / "gunicorn.conf.py")],
                            env=serve_env | {"REDIS_URL": "redis://127.0.0.1:1/0"}, cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    before, after = (int(n) for n in result.stdout.split())
    assert before == 0
    assert after > 10_000


_STUCK_WORKER = """
import os, signal, sys, threading, time
from service import quick_stop

class Worker:
    calls = 0
    def handle_quit(self, signum, frame):
        Worker.calls += 1
        print("quit", Worker.calls, flush=True)
        os.kill(os.getpid(), signal.SIGQUIT)  # the master's SIGQUIT, in the handler
        threading.Event().wait()  # as gunicorn's handler does when entered twice

quick_stop.install(Worker())
os.kill(os.getpid(), signal.SIGINT)
"""


def test_a_worker_stopped_by_ctrl_c_exits_within_its_grace_whatever_it_waits_on() -> None:
    """gunicorn's quick-shutdown handler runs once, however many of SIGINT and SIGQUIT
    come, and the worker is gone within ``quick_stop.GRACE_SECONDS`` even when that
    handler (or a thread of the worker) never returns."""
    from service import quick_stop

    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", _STUCK_WORKER], cwd=ROOT,
                            capture_output=True, text=True, timeout=30, check=False)
    took = time.monotonic() - started
    assert (result.returncode, result.stdout) == (0, "quit 1\n"), result.stderr
    assert quick_stop.GRACE_SECONDS <= took < quick_stop.GRACE_SECONDS + 2


def test_gunicorn_conf_says_only_what_production_needs() -> None:
    """The settings module is short: the hooks' bodies and the tuning live in modules of
    their own (:mod:`service.serving_hooks`, :mod:`service.tuning`)."""
    lines = (ROOT / "service" / "gunicorn_conf.py").read_text().splitlines()
    assert len(lines) < 80, len(lines)


def test_every_tuning_knob_is_justified_by_a_figure_in_the_benchmark_readme() -> None:
    """Each serving setting that differs from gunicorn's default is named in bench/README.md
    "Serving settings", with what it was measured to be worth."""
    readme = (ROOT / "bench" / "README.md").read_text()
    section = readme.split("## Serving settings", 1)[1].split("\n## ", 1)[0]
    bullets = {b.split("\n", 1)[0]: b for b in section.split("\n- ")[1:]}
    for knob in ("RUMMY_PIN_WORKERS", "RUMMY_REUSE_PORT", "RUMMY_KEEPALIVE_REQUESTS",
                 "RUMMY_ACCESS_LOG", "gc.freeze()", "hands its socket over"):
        found = [b for head, b in bullets.items() if knob in head]
        assert found, knob
        assert re.search(r"\d", found[0]), knob  # a measured figure


def test_the_service_tells_no_history_of_benchmark_rounds() -> None:
    history = re.compile(r"\brounds? \d+|\bbenchmark rounds?\b|\bsince round\b", re.I)
    told = [f"{path.relative_to(ROOT)}:{number}"
            for path in sorted((ROOT / "service").rglob("*.py"))
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if history.search(line)]
    assert told == []


def test_gunicorn_conf_refuses_to_start_without_redis_url_or_with_bad_settings(
    serve_env: dict[str, str],
) -> None:
    result = _load_conf(serve_env)
    assert result.returncode == 2
    assert "REDIS_URL is not set" in result.stderr
    result = _load_conf(serve_env | {"REDIS_URL": "redis://h/0", "RUMMY_THREADS": "0"})
    assert result.returncode == 2
    assert "RUMMY_THREADS" in result.stderr


# --- Settings.from_env -----------------------------------------------------------------------


def test_settings_defaults() -> None:
    settings = Settings.from_env({})
    assert settings == Settings()
    assert settings.redis_url is None
    assert settings.data_dir == Path("data")
    assert settings.game_ttl_seconds == 7 * 24 * 3600
    assert settings.max_body_bytes == 65536
    assert settings.cors_origins == ()
    assert settings.redis_socket_timeout == 2.0
    assert settings.log_level == "INFO"
    assert settings.workers == default_workers() >= 1
    assert settings.threads == 4
    assert settings.keepalive_requests == 100
    assert settings.bind == "127.0.0.1:8000"
    assert settings.access_log is False
    assert settings.pin_workers is None  # auto
    assert settings.log_format == "auto"  # text on a terminal, else JSON


def test_every_setting_has_its_own_environment_variable() -> None:
    env_vars = Settings.env_vars()
    assert set(env_vars) == {f.name for f in fields(Settings)}
    assert len(set(env_vars.values())) == len(env_vars)


def test_settings_read_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUMMY_THREADS", "7")
    monkeypatch.setenv("RUMMY_LOG_LEVEL", "")  # empty: the default
    assert Settings.from_env().threads == 7
    assert Settings.from_env().log_level == "INFO"


@pytest.mark.parametrize(
    ("var", "text", "attr", "value"),
    [
        ("REDIS_URL", "redis://redis:6379/0", "redis_url", "redis://redis:6379/0"),
        ("REDIS_URL", "rediss://:pw@h:6380", "redis_url", "rediss://:pw@h:6380"),
        ("REDIS_URL", "unix:///run/redis.sock", "redis_url", "unix:///run/redis.sock"),
        ("RUMMY_DATA_DIR", "/var/lib/rummy", "data_dir", Path("/var/lib/rummy")),
        ("RUMMY_GAME_TTL_SECONDS", " 60 ", "game_ttl_seconds", 60),
        ("RUMMY_MAX_BODY_BYTES", "1024", "max_body_bytes", 1024),
        ("RUMMY_CORS_ORIGINS", "*", "cors_origins", ("*",)),
        (
            "RUMMY_CORS_ORIGINS",
            "https://a.example, http://localhost:3000,",
            "cors_origins",
            ("https://a.example", "http://localhost:3000"),
        ),
        ("RUMMY_REDIS_SOCKET_TIMEOUT", "0.25", "redis_socket_timeout", 0.25),
        ("RUMMY_LOG_LEVEL", "debug", "log_level", "DEBUG"),
        ("RUMMY_WORKERS", "3", "workers", 3),
        ("RUMMY_THREADS", "16", "threads", 16),
        ("RUMMY_KEEPALIVE_REQUESTS", "0", "keepalive_requests", 0),
        ("RUMMY_KEEPALIVE_REQUESTS", "1000", "keepalive_requests", 1000),
        ("RUMMY_BIND", "[::1]:8080", "bind", "[::1]:8080"),
        ("RUMMY_BIND", "unix:/run/rummy.sock", "bind", "unix:/run/rummy.sock"),
        ("RUMMY_ACCESS_LOG", "1", "access_log", True),
        ("RUMMY_ACCESS_LOG", "0", "access_log", False),
        ("RUMMY_PIN_WORKERS", "yes", "pin_workers", True),
        ("RUMMY_PIN_WORKERS", "0", "pin_workers", False),
        ("RUMMY_PIN_WORKERS", " Auto ", "pin_workers", None),
        ("RUMMY_LOG_FORMAT", "JSON", "log_format", "json"),
        ("RUMMY_LOG_FORMAT", "text", "log_format", "text"),
        ("RUMMY_LOG_FORMAT", "auto", "log_format", "auto"),
    ],
)
def test_settings_parse_good_values(var: str, text: str, attr: str, value: object) -> None:
    assert getattr(Settings.from_env({var: text}), attr) == value


@pytest.mark.parametrize(
    ("var", "text"),
    [
        ("REDIS_URL", "http://redis:6379"),
        ("REDIS_URL", "localhost:6379"),
        ("REDIS_URL", "redis://redis:99999/0"),
        ("REDIS_URL", "unix://"),
        ("RUMMY_GAME_TTL_SECONDS", "0"),
        ("RUMMY_GAME_TTL_SECONDS", "-5"),
        ("RUMMY_GAME_TTL_SECONDS", "7d"),
        ("RUMMY_MAX_BODY_BYTES", "0"),
        ("RUMMY_MAX_BODY_BYTES", "64k"),
        ("RUMMY_CORS_ORIGINS", "example.com"),
        ("RUMMY_CORS_ORIGINS", "https://example.com/"),
        ("RUMMY_CORS_ORIGINS", "ftp://example.com"),
        ("RUMMY_CORS_ORIGINS", "*,https://example.com"),
        ("RUMMY_REDIS_SOCKET_TIMEOUT", "0"),
        ("RUMMY_REDIS_SOCKET_TIMEOUT", "-1"),
        ("RUMMY_REDIS_SOCKET_TIMEOUT", "inf"),
        ("RUMMY_REDIS_SOCKET_TIMEOUT", "soon"),
        ("RUMMY_LOG_LEVEL", "verbose"),
        ("RUMMY_LOG_LEVEL", "10"),
        ("RUMMY_WORKERS", "0"),
        ("RUMMY_WORKERS", "two"),
        ("RUMMY_THREADS", "0"),
        ("RUMMY_THREADS", "1.5"),
        ("RUMMY_KEEPALIVE_REQUESTS", "-1"),
        ("RUMMY_KEEPALIVE_REQUESTS", "many"),
        ("RUMMY_BIND", "8000"),
        ("RUMMY_BIND", "localhost:http"),
        ("RUMMY_BIND", "0.0.0.0:70000"),
        ("RUMMY_BIND", "unix:"),
        ("RUMMY_ACCESS_LOG", "maybe"),
        ("RUMMY_LOG_FORMAT", "yaml"),
        ("RUMMY_PIN_WORKERS", "2"),
    ],
)
def test_settings_reject_bad_values_naming_the_variable(var: str, text: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env({var: text})
    message = str(caught.value)
    assert var in message
    assert "must" in message  # says what is allowed
    assert caught.value.errors and all(e.startswith(var) for e in caught.value.errors)


def test_settings_report_every_bad_variable_and_hide_redis_passwords() -> None:
    with pytest.raises(ConfigError) as caught:
        Settings.from_env(
            {"REDIS_URL": "http://user:s3cret@h/0", "RUMMY_THREADS": "0", "RUMMY_WORKERS": "many"}
        )
    message = str(caught.value)
    assert "REDIS_URL" in message and "RUMMY_THREADS" in message and "RUMMY_WORKERS" in message
    assert "s3cret" not in message


# --- rummy-referee ---------------------------------------------------------------------------


def test_version_command() -> None:
    result = subprocess.run(
        [_tool("rummy-referee"), "version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert re.fullmatch(r"rummy-referee \d+\.\d+\.\d+\S*\n", result.stdout)


def test_serve_with_a_bad_configuration_exits_2_naming_the_variable(
    tmp_path: Path, serve_env: dict[str, str]
) -> None:
    result = subprocess.run(
        [_tool("rummy-referee"), "serve"],
        env=serve_env | {"RUMMY_MAX_BODY_BYTES": "lots"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "RUMMY_MAX_BODY_BYTES" in result.stderr
    assert "started redis-server" not in result.stdout
    assert not (tmp_path / "data").exists()


@pytest.mark.slow
def test_serve_without_redis_url_runs_its_own_redis_and_leaves_nothing_behind(
    tmp_path: Path, serve_env: dict[str, str], served: list[Served]
) -> None:
    server = Served(tmp_path, serve_env)
    served.append(server)
    server.wait_ready()

    match = EMBEDDED_LINE.search(server.output())
    assert match, server.output()
    assert Path(match["dir"]) == (tmp_path / "data" / "redis").resolve()
    redis_pid = int(match["pid"])
    tree = server.snapshot()
    assert redis_pid in tree and tree[redis_pid][0].startswith("redis-server"), tree
    assert tree[redis_pid][1] == server.proc.pid  # a child of serve, not of gunicorn
    assert any(pid != redis_pid for pid in tree)  # gunicorn and its worker
    assert int(match["port"]) != 6379

    assert server.terminate() == 0
    left = [pid for pid, (_, _, start) in tree.items() if _still_there(pid, start)]
    assert not left, f"still running after serve exited: {left}\n{server.output()}"
    assert (tmp_path / "data" / "redis").is_dir()


@pytest.mark.slow
def test_serve_with_redis_url_uses_that_redis(
    tmp_path: Path, serve_env: dict[str, str], served: list[Served]
) -> None:
    with RedisServer(tmp_path / "own-redis") as redis:
        server = Served(tmp_path, serve_env | {"REDIS_URL": redis.url})
        served.append(server)
        server.wait_ready()
        assert "started redis-server" not in server.output()
        tree = server.snapshot()
        assert not [pid for pid, (comm, _, _) in tree.items() if "redis" in comm], tree
        assert server.terminate() == 0
        assert redis.running
