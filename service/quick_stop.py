"""Ctrl-C stops a gunicorn worker at once, even with event streams open.

SIGINT and SIGQUIT are gunicorn's quick shutdown: its gthread worker shuts its thread pool
down and exits. Two things kept a worker alive until the master's ``graceful_timeout``,
when the master SIGKILLs it and says "Perhaps out of memory?":

- Python waits for the pool's threads as it exits, and an event stream holds one for
  minutes (``RUMMY_SSE_MAX_SECONDS``);
- a terminal's Ctrl-C sends SIGINT to every process of the foreground group, the workers
  included, and the master then sends them SIGQUIT: the second signal's handler runs
  inside the first's, and waits forever on the lock the first holds
  (``ThreadPoolExecutor.shutdown``).

:func:`install` wraps the worker's handler of both signals: the first signal starts a
timer that ends the process ``GRACE_SECONDS`` later, whatever its threads are doing, then
runs gunicorn's handler; a second signal does nothing more.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from types import FrameType
from typing import Any

__all__ = ["GRACE_SECONDS", "install"]

GRACE_SECONDS = 1.0
"""How long the requests in flight get to finish after SIGINT or SIGQUIT."""


def _exit_soon() -> None:
    time.sleep(GRACE_SECONDS)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def install(worker: Any) -> None:
    """In a gunicorn worker (``post_worker_init``): SIGINT and SIGQUIT end it within
    :data:`GRACE_SECONDS`."""
    quit_now = getattr(worker, "handle_quit", None)
    if quit_now is None:  # not one of gunicorn's workers
        return
    quitting = False

    def handle_quit(signum: int, frame: FrameType | None) -> None:
        nonlocal quitting
        if quitting:
            return  # gunicorn's handler, entered again, would wait on its own lock
        quitting = True
        threading.Thread(target=_exit_soon, name="quick-stop", daemon=True).start()
        quit_now(signum, frame)

    signal.signal(signal.SIGINT, handle_quit)
    signal.signal(signal.SIGQUIT, handle_quit)
