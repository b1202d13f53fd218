"""The ``rummy-referee`` command.

``rummy-referee serve [--host H] [--port P] [--workers N] [--threads N]`` runs the app under
gunicorn with the settings of :mod:`service.gunicorn_conf` (which ``gunicorn.conf.py`` at the
repository root re-exports), as a child process ``python -m gunicorn -c
python:service.gunicorn_conf``: the module is part of the installed package, so it is found
from an editable install, a plain ``pip install .`` and the Docker image alike. The options
are passed to gunicorn through RUMMY_BIND, RUMMY_WORKERS and RUMMY_THREADS.

Without REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS, ``serve`` starts a redis-server of
its own (data in ``$RUMMY_DATA_DIR/redis``, AOF on), hands its URL to gunicorn as REDIS_URL,
and stops it when gunicorn has exited; with any of them it uses that Redis. The data
directory is one ``serve``'s at a time: a second one started on it (another terminal, the
same checkout) exits with status 1, naming the first one's pid. SIGINT, SIGTERM,
SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGTTIN and SIGTTOU are passed on to gunicorn (SIGTERM:
graceful stop, SIGHUP: reload the workers).

``rummy-referee version`` prints the installed version.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.metadata
import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from contextlib import ExitStack, suppress
from pathlib import Path
from types import FrameType
from urllib.parse import urlsplit

from service.config import DEFAULT_BIND, ConfigError, Settings

__all__ = ["GUNICORN_CONFIG", "gunicorn_command", "main"]

PROG = "rummy-referee"
LOCK_NAME = "rummy-referee.lock"
"""The file in the embedded redis-server's data directory that ``serve`` holds locked
while it runs, so that a second ``serve`` refuses the directory."""
GUNICORN_CONFIG = "python:service.gunicorn_conf"
FORWARDED_SIGNALS = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGTTIN,
    signal.SIGTTOU,
)


def version() -> str:
    try:
        return importlib.metadata.version(PROG)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a checkout
        return "unknown"


def gunicorn_command() -> list[str]:
    """The command that runs gunicorn with the service's settings."""
    return [sys.executable, "-m", "gunicorn", "--config", GUNICORN_CONFIG]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 < value < 65536:
        raise argparse.ArgumentTypeError(f"must be 1-65535, got {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="The referee for Rummy as a web service."
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    default_host, _, default_port = DEFAULT_BIND.rpartition(":")
    serve = commands.add_parser(
        "serve",
        help="serve the API under gunicorn",
        description=(
            "Serve the API under gunicorn. Without REDIS_URL (or REDIS_CLUSTER_NODES or "
            "REDIS_SENTINELS), start a redis-server (data in $RUMMY_DATA_DIR/redis, AOF on) "
            "and stop it on exit. Settings come from the environment (RUMMY_*, REDIS_*); "
            "options override them."
        ),
    )
    serve.add_argument(
        "--host", help=f"address to listen on (default: from RUMMY_BIND, else {default_host})"
    )
    serve.add_argument(
        "--port",
        type=_port,
        help=f"port to listen on (default: from RUMMY_BIND, else {default_port})",
    )
    serve.add_argument(
        "--workers", type=_positive_int, help="worker processes (default: RUMMY_WORKERS or CPUs)"
    )
    serve.add_argument(
        "--threads", type=_positive_int, help="threads per worker (default: RUMMY_THREADS or 4)"
    )
    commands.add_parser("version", help="print the version")
    check = commands.add_parser(
        "verify",
        help="replay a game's log through the engine and check its deal commitments",
        description=(
            "Recompute each revealed deal's commitment and replay the game's move log "
            "through the engine, comparing every event (needs REDIS_URL). Exit 0 when "
            "verified, 1 when not, 2 when the game cannot be read."
        ),
    )
    check.add_argument("game_id", help="the game to verify")
    return parser


def _bind(current: str | None, host: str | None, port: int | None) -> str | None:
    """RUMMY_BIND from ``--host``/``--port`` over the current RUMMY_BIND (None: unchanged)."""
    if host is None and port is None:
        return None
    base = current.strip() if current and current.strip() else DEFAULT_BIND
    if base.startswith("unix:"):
        base = DEFAULT_BIND
    base_host, _, base_port = base.rpartition(":")
    if host is not None:
        base_host = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"{base_host}:{port if port is not None else base_port}"


class _Supervisor:
    """Signal handlers that pass signals on to gunicorn, or keep them until it runs."""

    def __init__(self) -> None:
        self.child: subprocess.Popen[bytes] | None = None
        self.pending: list[int] = []

    def install(self, stack: ExitStack) -> None:
        for signum in FORWARDED_SIGNALS:
            previous = signal.signal(signum, self._handle)
            stack.callback(signal.signal, signum, previous)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.child is None:
            self.pending.append(signum)
            return
        with suppress(ProcessLookupError):
            self.child.send_signal(signum)

    def stop_requested(self) -> int | None:
        for signum in self.pending:
            if signum in (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP):
                return signum
        return None

    def run(self, cmd: list[str], env: dict[str, str]) -> int:
        child = subprocess.Popen(cmd, env=env)
        self.child = child
        for signum in self.pending:
            with suppress(ProcessLookupError):
                child.send_signal(signum)
        self.pending.clear()
        returncode = child.wait()
        return 128 - returncode if returncode < 0 else returncode


class DataDirInUse(Exception):
    """Another ``serve`` holds the embedded redis-server's data directory."""


def _lock_data_dir(data_dir: Path, stack: ExitStack) -> None:
    """Hold ``data_dir`` for this process until ``stack`` closes: an exclusive ``flock``
    on its :data:`LOCK_NAME`, which names the holder's pid (the kernel releases it however
    the process ends). Raise :class:`DataDirInUse` when another process holds it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    lock = (data_dir / LOCK_NAME).open("a+")  # not truncated: the holder's pid stays
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock.seek(0)
        holder = lock.read().strip() or "unknown"
        lock.close()
        raise DataDirInUse(
            f"the data directory {data_dir} is in use by another {PROG} serve (pid "
            f"{holder}); stop that one first, or give this one a directory of its own "
            "(RUMMY_DATA_DIR=...), or a Redis of its own (REDIS_URL=...)") from None
    stack.callback(lock.close)
    lock.seek(0)
    lock.truncate()
    lock.write(f"{os.getpid()}\n")
    lock.flush()


def _start_redis(settings: Settings, stack: ExitStack) -> str:
    """Start the embedded redis-server (stopped when ``stack`` closes), once this process
    holds its data directory; return its URL."""
    from service.redis_server import RedisServer

    data_dir = (settings.data_dir / "redis").resolve()
    _lock_data_dir(data_dir, stack)
    server = RedisServer(data_dir, appendonly=True, appendfsync="always")
    server.start()
    stack.callback(server.stop)
    host = urlsplit(server.url).hostname or "127.0.0.1"
    print(
        f"{PROG}: no REDIS_URL; started redis-server {server.binary} on {host}:{server.port} "
        f"(data in {data_dir}, AOF on; pid {server.pid})",
        flush=True,
    )
    return server.url


def serve(args: argparse.Namespace) -> int:
    env = dict(os.environ)
    bind = _bind(env.get("RUMMY_BIND"), args.host, args.port)
    if bind is not None:
        env["RUMMY_BIND"] = bind
    if args.workers is not None:
        env["RUMMY_WORKERS"] = str(args.workers)
    if args.threads is not None:
        env["RUMMY_THREADS"] = str(args.threads)
    try:
        settings = Settings.from_env(env)
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr, flush=True)
        return 2

    supervisor = _Supervisor()
    with ExitStack() as stack:
        supervisor.install(stack)
        returncode = _serve_with(settings, env, supervisor, stack)
    return returncode


def _serve_with(
    settings: Settings, env: dict[str, str], supervisor: _Supervisor, stack: ExitStack
) -> int:
    if settings.redis_mode is None:  # no REDIS_URL, REDIS_CLUSTER_NODES nor REDIS_SENTINELS
        try:
            env["REDIS_URL"] = _start_redis(settings, stack)
        except DataDirInUse as exc:
            print(f"{PROG}: {exc}", file=sys.stderr, flush=True)
            return 1
        except Exception as exc:
            print(f"{PROG}: could not start redis-server: {exc}", file=sys.stderr, flush=True)
            return 1
        signum = supervisor.stop_requested()
        if signum is not None:
            return 128 + signum
    return supervisor.run(gunicorn_command(), env)


def verify_game(game_id: str) -> int:
    """``rummy-referee verify GAME_ID``: print the verification report as JSON."""
    from service.referee import RefereeError
    from service.referee.lobby import LobbyReferee
    from service.store import GameStore, StoreError, make_store_client

    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    if settings.redis_mode is None:
        print(f"{PROG}: verify needs REDIS_URL (the Redis that holds the game), or "
              "REDIS_CLUSTER_NODES or REDIS_SENTINELS", file=sys.stderr)
        return 2
    try:
        client = make_store_client(settings)
    except Exception as exc:  # a cluster client reads the slot map at once
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    try:
        report = LobbyReferee(GameStore(client)).verify(game_id)
    except (RefereeError, StoreError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    finally:
        client.close()
    print(json.dumps(report, indent=2))
    return 0 if report["verified"] else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if len(words) == 2 and words[0] == "verify" and words[1].startswith("-") \
            and words[1] not in ("-h", "--help"):
        words.insert(1, "--")  # a game id may begin with "-" (secrets.token_urlsafe)
    args = parser.parse_args(words)
    if args.command == "serve":
        return serve(args)
    if args.command == "version":
        print(f"{PROG} {version()}")
        return 0
    if args.command == "verify":
        return verify_game(args.game_id)
    parser.print_help(sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
