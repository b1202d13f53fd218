"""Watchers of games woken by the commits that change them (docs/operations.md, "Live
tables").

Every commit publishes ``<game id> <version>`` on the store's channel (``<namespace>:moved``,
from the commit script itself, so no move can commit unannounced). Each worker process holds
one :class:`Hub`: one pub/sub connection to Redis, read by one thread of its own, which wakes
the local watchers of the game named (an open event stream, a waiting long poll). A watcher
reads Redis only when woken, never on a timer. Classic pub/sub reaches every subscriber of
the Redis, every node of a Redis Cluster included, so a move committed through any server
wakes its watchers on all of them.

Under gunicorn's gevent worker, whose monkey-patching makes threads and their events
cooperative, the hub's thread is a greenlet and a watcher costs an :class:`threading.Event`
(a gevent one) and no OS thread; under gthread a watcher still holds the request's thread.

A message lost while the hub was not subscribed (Redis restarting, a failover) would leave a
watcher asleep: so whenever the hub (re)subscribes, it wakes every watcher, which reads what
it missed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import weakref
from collections.abc import Iterator
from types import FrameType
from typing import Any

from redis.exceptions import RedisError

from service.store.client import StoreClient

__all__ = ["Hub", "Watch", "stop_all", "stop_on_term"]

_log = logging.getLogger("rummy.live")

RETRY_SECONDS = 1.0
"""How long the hub waits before it subscribes again after losing its connection."""

_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()


class Watch:
    """One watcher of one game: :meth:`wait` returns once a commit of the game (or the hub
    resubscribing, or stopping) has woken it since it last returned."""

    __slots__ = ("_event", "game_id")

    def __init__(self, game_id: str) -> None:
        self.game_id = game_id
        self._event = threading.Event()

    def wake(self) -> None:
        self._event.set()

    def wait(self, timeout: float) -> bool:
        """Whether woken within ``timeout`` seconds. The wake is used up: a commit
        announced after this returns wakes the next wait, so a watcher that reads the game
        after each wait misses none."""
        woken = self._event.wait(max(0.0, timeout))
        self._event.clear()
        return woken


class Hub:
    """The watchers of this process and the one subscription that wakes them."""

    def __init__(self, client: StoreClient, channel: str) -> None:
        self._client = client
        self._channel = channel
        self._lock = threading.Lock()
        self._watchers: dict[str, set[Watch]] = {}
        self._pid: int | None = None
        self.stopping = False
        """Set by :func:`stop_all` (the worker was told to stop): streams end, waits end."""
        self.subscribed = threading.Event()
        _HUBS.add(self)

    @property
    def watchers(self) -> int:
        with self._lock:
            return sum(len(w) for w in self._watchers.values())

    @contextlib.contextmanager
    def watch(self, game_id: str) -> Iterator[Watch]:
        """A :class:`Watch` of ``game_id`` for the ``with`` block (registered before the
        block starts: read the game after entering it, then wait)."""
        self._start()
        watch = Watch(game_id)
        with self._lock:
            self._watchers.setdefault(game_id, set()).add(watch)
        try:
            yield watch
        finally:
            with self._lock:
                watchers = self._watchers.get(game_id)
                if watchers is not None:
                    watchers.discard(watch)
                    if not watchers:
                        del self._watchers[game_id]

    def stop(self) -> None:
        """Wake every watcher for good: the process is stopping."""
        self.stopping = True
        self._wake_all()

    def _start(self) -> None:
        """Start the subscriber in this process (once; again in a forked child)."""
        if self._pid == os.getpid():
            return
        with self._lock:
            if self._pid == os.getpid():
                return
            self._pid = os.getpid()
            self._watchers.clear()  # a forked child's copies wait on nothing
        threading.Thread(target=self._run, name="live-hub", daemon=True).start()

    def _wake(self, game_id: str) -> None:
        with self._lock:
            watchers = list(self._watchers.get(game_id, ()))
        for watch in watchers:
            watch.wake()

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
                pubsub.subscribe(self._channel)
                while not self.stopping:
                    self._handle(pubsub.get_message(timeout=1.0))
            except (RedisError, OSError) as exc:
                self.subscribed.clear()
                _log.warning("live hub: lost its subscription (%s); subscribing again", exc)
                self._wake_all()  # they read what they may have missed, then wait again
                threading.Event().wait(RETRY_SECONDS)
            finally:
                if pubsub is not None:
                    with contextlib.suppress(RedisError, OSError):
                        pubsub.close()

    def _handle(self, message: dict[str, Any] | None) -> None:
        if message is None:
            return
        if message["type"] == "subscribe":
            self.subscribed.set()
            self._wake_all()  # what was committed before the subscription counted
        elif message["type"] == "message":
            data = message["data"]
            text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data)
            self._wake(text.partition(" ")[0])


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
