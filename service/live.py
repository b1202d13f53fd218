"""Watchers of games woken by the commits that change them (docs/operations.md, "Live
tables").

Every commit publishes ``<game id> <version> <log record>`` on its game's channel
(``<namespace>:{<game id>}:moved``, from the commit script itself, so no move can commit
unannounced). Each worker process holds one :class:`Hub`: one pub/sub connection to Redis,
read by one thread of its own, subscribed to the channels of the games watched in the
process (an open event stream, a waiting long poll) and to no other, so Redis sends a
worker only the messages of its own watchers' games: a worker's share of the pub/sub
traffic follows what it watches, not every commit of every server. The hub subscribes to
a game's channel when the game's first watcher in the process comes, unsubscribes a little
after its last one goes (:data:`LINGER_SECONDS`: a long poll's client comes back at once),
and hands each message's record, decoded once, to the game's watchers. A stream sends the
records it was handed, and reads Redis only for what it was not (at its start, after a
gap); a long poll reads the view again when woken. Nothing reads Redis on a timer. Classic
pub/sub reaches every subscriber of the Redis, every node of a Redis Cluster included, so
a move committed through any server wakes its watchers on all of them.

Under gunicorn's gevent worker, whose monkey-patching makes threads and their events
cooperative, the hub's thread is a greenlet and a watcher costs an :class:`threading.Event`
(a gevent one) and no OS thread; under gthread a watcher still holds the request's thread.

A watcher is registered before it first reads its game, and a message published before its
game's subscription took effect would not reach it: so the hub wakes a game's watchers when
Redis confirms the game's subscription, and they read what was committed before. Whenever
the hub loses its connection (Redis restarting, a failover) it wakes every watcher, which
reads what it missed, and subscribes again to every game watched.
"""

from __future__ import annotations

import collections
import contextlib
import importlib
import logging
import os
import select
import signal
import socket
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import orjson
from redis.exceptions import RedisError

from service.store.client import StoreClient

__all__ = ["Announced", "Hub", "Watch", "stop_all", "stop_on_term"]

_log = logging.getLogger("rummy.live")

KEPT_ENTRIES = 64
"""Announced log entries a watch keeps until its watcher takes them (more: the oldest are
dropped, and the watcher reads them from Redis)."""

RETRY_SECONDS = 1.0
"""How long the hub waits before it subscribes again after losing its connection."""

LINGER_SECONDS = 10.0
"""How long the hub stays subscribed to a game after its last watcher here went: a client
that long-polls a game comes back at once, and finds the subscription there (no
subscribing again, no wake for it, no read more)."""

MAX_LINGERING = 1024
"""The most games a hub stays subscribed to with no watcher (beyond: the oldest go)."""

_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()

Announced = tuple[int, dict[str, Any], dict[Any, Any]]
"""An entry a commit announced: its version, its log record (decoded once for every
watcher of the process), and what the watchers made of it, shared by them all (a stream's
frame for each viewer: made by the first stream to send it, reused by the others)."""


class Watch:
    """One watcher of one game: :meth:`wait` returns once a commit of the game (or the hub
    resubscribing, or stopping) has woken it since it last returned; :meth:`take` gives the
    log entries the commits announced meanwhile, so that a stream need not read them."""

    __slots__ = ("_entries", "_event", "game_id", "sink")

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self._event = threading.Event()
        self._entries: collections.deque[Announced] = collections.deque(maxlen=KEPT_ENTRIES)
        self.sink: Callable[[Announced], bool] | None = None
        """Set by a watcher while it waits, when it can take an entry without being woken
        (a stream whose events the hub may write itself, :mod:`service.api.streams`): the
        hub hands it each entry, and wakes the watcher with those it does not take."""

    def wake(self, entry: Announced | None = None) -> None:
        if entry is not None:
            sink = self.sink
            if sink is not None and not self._entries and self._sunk(sink, entry):
                return
            self._entries.append(entry)
        self._event.set()

    @staticmethod
    def _sunk(sink: Callable[[Announced], bool], entry: Announced) -> bool:
        try:
            return sink(entry)
        except Exception:  # the watcher meets the entry itself, and answers as it does
            _log.exception("live hub: a watcher's sink failed; the watcher is woken")
            return False

    def take(self) -> list[Announced]:
        """The entries announced since the last take, oldest first
        (the oldest may have been dropped: the taker checks that none is missing)."""
        taken = []
        while self._entries:
            taken.append(self._entries.popleft())
        return taken

    def wait(self, timeout: float) -> bool:
        """Whether woken within ``timeout`` seconds. The wake is used up: a commit
        announced after this returns wakes the next wait, so a watcher that reads the game
        after each wait misses none. A wake that comes as the time runs out counts:
        ``Event.wait`` then reports the timeout with the flag set, and clearing it unasked
        lost the wake (the watcher slept on, its entry taken only at the next one)."""
        self._event.wait(max(0.0, timeout))
        if not self._event.is_set():
            return False
        self._event.clear()
        return True


class Closings:
    """Wakes a watch when its client closes its connection (a FIN or a reset), so that a
    stream ends and frees its slot at once, not at its next heartbeat. Under gevent, a
    greenlet per connection waits for it to become readable (a request sent after the
    stream's is no close: it stops watching); else one thread of the process waits on an
    ``epoll`` for ``EPOLLRDHUP``, which only a peer's close raises."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._epoll: Any = None
        self._watches: dict[int, Watch] = {}

    def add(self, sock: socket.socket, watch: Watch) -> Callable[[], None] | None:
        """Watch ``sock`` for ``watch``: the function that stops it, or None."""
        try:
            fd = sock.fileno()
        except (OSError, ValueError):
            return None
        if fd < 0:
            return None
        if green():
            return self._add_green(sock, watch)
        return self._add_epoll(fd, watch)

    @staticmethod
    def _add_green(sock: socket.socket, watch: Watch) -> Callable[[], None]:
        gevent: Any = sys.modules["gevent"]
        wait_read = importlib.import_module("gevent.socket").wait_read

        def wait() -> None:
            with contextlib.suppress(Exception):
                wait_read(sock.fileno())
                real: Any = getattr(sock, "_sock", sock)
                try:
                    closed = real.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if closed:
                    watch.wake()

        waiter = gevent.spawn(wait)
        return lambda: waiter.kill(block=False)

    def _add_epoll(self, fd: int, watch: Watch) -> Callable[[], None] | None:
        epoll_type = getattr(select, "epoll", None)
        rdhup = getattr(select, "EPOLLRDHUP", None)
        if epoll_type is None or rdhup is None:
            return None
        with self._lock:
            if self._epoll is None:
                self._epoll = epoll_type()
                threading.Thread(target=self._run, args=(self._epoll,), name="live-closings",
                                 daemon=True).start()
            try:
                self._epoll.register(fd, rdhup)
            except OSError:
                return None
            self._watches[fd] = watch

        def stop() -> None:
            with self._lock:
                if self._watches.get(fd) is watch:
                    del self._watches[fd]
                    with contextlib.suppress(OSError, ValueError):
                        self._epoll.unregister(fd)

        return stop

    def _run(self, epoll: Any) -> None:
        while True:
            try:
                events = epoll.poll(5.0)
            except InterruptedError:
                continue
            except (OSError, ValueError):  # closed
                return
            for fd, _mask in events:
                with self._lock:
                    watch = self._watches.pop(fd, None)
                    with contextlib.suppress(OSError, ValueError):
                        epoll.unregister(fd)
                if watch is not None:
                    watch.wake()


class Hub:
    """The watchers of this process and the one subscription that wakes them: to the
    channels of the games they watch (``channel_of`` names a game's)."""

    def __init__(self, client: StoreClient, channel_of: Callable[[str], str]) -> None:
        self._client = client
        self._channel_of = channel_of
        self._lock = threading.Lock()
        """Guards the watchers, the channels and every command sent on the connection."""
        self._watchers: dict[str, set[Watch]] = {}
        self._games: dict[bytes, str] = {}
        """The game of each channel subscribed to: those watched here, and those
        lingering."""
        self._lingering: collections.OrderedDict[str, float] = collections.OrderedDict()
        """The games subscribed to with no watcher here, each with the time (monotonic)
        their subscription ends, the soonest first."""
        self.linger_seconds = LINGER_SECONDS
        self._connection: Any = None
        """The subscription's connection while the hub reads it (else None: the games
        watched meanwhile are subscribed to when it connects again)."""
        self._pid: int | None = None
        self.stopping = False
        """Set by :func:`stop_all` (the worker was told to stop): streams end, waits end."""
        self.subscribed = threading.Event()
        """Set while the hub's connection is up and read."""
        self._closing = Closings()
        _HUBS.add(self)

    @property
    def watchers(self) -> int:
        with self._lock:
            return sum(len(w) for w in self._watchers.values())

    @property
    def games(self) -> int:
        """The games the hub is subscribed to: those watched here, and those lingering."""
        with self._lock:
            return len(self._games)

    @contextlib.contextmanager
    def watch(self, game_id: str, sock: socket.socket | None = None) -> Iterator[Watch]:
        """A :class:`Watch` of ``game_id`` for the ``with`` block (registered before the
        block starts: read the game after entering it, then wait; where the game was not
        subscribed to yet, it is woken once its subscription takes effect, to read what
        came before). With ``sock`` (the client's connection) it is also woken when the
        client closes its end: the watcher then finds its client gone, without a poll of
        its own."""
        self._start()
        watch = Watch(game_id)
        with self._lock:
            self._unsubscribe_lingering()
            watchers = self._watchers.get(game_id)
            if watchers is None:
                if self._lingering.pop(game_id, None) is None:  # else still subscribed
                    channel = self._channel_of(game_id).encode()  # first: it may refuse
                    self._games[channel] = game_id
                    self._send("SUBSCRIBE", channel)
                watchers = self._watchers[game_id] = set()
            watchers.add(watch)
        closing = self._closing.add(sock, watch) if sock is not None else None
        try:
            yield watch
        finally:
            if closing is not None:
                closing()
            with self._lock:
                watchers = self._watchers.get(game_id)
                if watchers is not None:
                    watchers.discard(watch)
                    if not watchers:
                        del self._watchers[game_id]
                        self._lingering[game_id] = time.monotonic() + self.linger_seconds
                self._unsubscribe_lingering()

    def stop(self) -> None:
        """Wake every watcher for good: the process is stopping."""
        self.stopping = True
        self._wake_all()

    def _unsubscribe_lingering(self) -> None:
        """Unsubscribe from the lingering games whose time is up, and from the oldest beyond
        :data:`MAX_LINGERING` (with the lock held)."""
        now = time.monotonic()
        channels = []
        while self._lingering:
            game_id, until = next(iter(self._lingering.items()))
            if until > now and len(self._lingering) <= MAX_LINGERING:
                break
            del self._lingering[game_id]
            channel = self._channel_of(game_id).encode()
            del self._games[channel]
            channels.append(channel)
        if channels:
            self._send("UNSUBSCRIBE", *channels)

    def _send(self, command: str, *channels: bytes) -> None:
        """Send ``command`` for ``channels`` on the subscription's connection, if it is up
        (with the lock held: one command at a time, in the order of the watchers' comings
        and goings). Its reply comes to the reading thread. A connection that fails here is
        closed, so the reader meets the failure, connects again and subscribes to every
        game then watched."""
        connection = self._connection
        if connection is None:
            return
        try:
            connection.send_command(command, *channels, check_health=False)
        except (RedisError, OSError):
            self._connection = None
            with contextlib.suppress(RedisError, OSError):
                connection.disconnect()

    def _start(self) -> None:
        """Start the subscriber in this process (once; again in a forked child)."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._watchers.clear()  # a forked child's copies wait on nothing
            self._games.clear()
            self._lingering.clear()
            self._connection = None
        threading.Thread(target=self._run, name="live-hub", daemon=True).start()

    def _wake(self, game_id: str, version: str, record: bytes) -> None:
        with self._lock:
            watchers = list(self._watchers.get(game_id, ()))
            if not watchers:  # a lingering game's: its subscription may be up
                self._unsubscribe_lingering()
                return
        entry: Announced | None = None
        with contextlib.suppress(ValueError):
            entry = (int(version), orjson.loads(record), {})  # once for every watcher
        for watch in watchers:
            watch.wake(entry)

    def _wake_all(self) -> None:
        with self._lock:
            watchers = [w for ws in self._watchers.values() for w in ws]
        for watch in watchers:
            watch.wake()

    def _run(self) -> None:
        while not self.stopping:
            pubsub: Any = None
            try:
                pubsub = self._client.pubsub()
                # opens the connection (a Redis Cluster's: any node, classic pub/sub reaches
                # them all); its PONG tells the hub it reads the connection
                pubsub.execute_command("PING")
                connection = pubsub.connection
                with self._lock:
                    self._connection = connection
                    if self._games:
                        self._send("SUBSCRIBE", *self._games)
                # the replies read off the connection as they come: the whole of
                # PubSub.get_message (its health check, retry wrapper, timing and message
                # dictionary) cost a worker 22 µs more a message (bench/README.md, "Live
                # tables")
                read = connection.read_response
                while not self.stopping:
                    self._handle(read(disconnect_on_error=False, timeout=None))
            except Exception as exc:  # the hub's thread must not end
                # a lost connection; or one a watcher's send dropped (redis-py closes it)
                # while this thread was reading it, which redis-py's reader may meet as
                # another error than a ConnectionError
                with self._lock:
                    self._connection = None
                self.subscribed.clear()
                _log.warning("live hub: lost its subscription (%s); subscribing again", exc,
                             exc_info=not isinstance(exc, RedisError | OSError))
                self._wake_all()  # they read what they may have missed, then wait again
                threading.Event().wait(RETRY_SECONDS)
            finally:
                if pubsub is not None:
                    with contextlib.suppress(RedisError, OSError):
                        pubsub.close()

    def _handle(self, reply: Any) -> None:
        """A reply on the subscription's connection (RESP2: ``[kind, channel, data]``, and
        the ``PONG`` of the ``PING`` that opened it)."""
        if not isinstance(reply, list) or len(reply) != 3:
            if reply == b"PONG":
                self.subscribed.set()
            return
        kind, channel, data = reply
        if kind == b"message":
            raw = data if isinstance(data, bytes) else str(data).encode()
            game_id, _, rest = raw.partition(b" ")
            version, _, record = rest.partition(b" ")
            self._wake(game_id.decode("utf-8", "replace"), version.decode("ascii", "replace"),
                       record)
        elif kind == b"subscribe":
            with self._lock:
                game = self._games.get(channel)
                watchers = [] if game is None else list(self._watchers.get(game, ()))
            for watch in watchers:  # what was committed before the subscription counted
                watch.wake()


def green() -> bool:
    """Whether this process runs under gevent's monkey-patching (gunicorn's gevent worker)."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("socket"))


def stop_on_term() -> None:
    """In a gunicorn worker (``post_worker_init``): SIGTERM stops this process's hubs
    (:func:`stop_all`, from a thread or greenlet of its own: a signal handler must not wait
    on a lock)
    before gunicorn's own handler runs. Its streams then end within moments instead of
    holding the worker until gunicorn's ``graceful_timeout``."""
    previous = signal.getsignal(signal.SIGTERM)

    def handle_term(signum: int, frame: FrameType | None) -> None:
        if green():  # the handler runs in gevent's loop, where nothing may block
            sys.modules["gevent"].spawn(stop_all)
        else:
            threading.Thread(target=stop_all, name="live-stop", daemon=True).start()
        if callable(previous):
            previous(signum, frame)

    signal.signal(signal.SIGTERM, handle_term)


def stop_all() -> None:
    """Every hub of this process stops (the worker got SIGTERM): its streams end at once, so
    their clients reconnect to another server, and its waiting long polls answer."""
    for hub in list(_HUBS):
        hub.stop()
