"""gunicorn settings for the service (``gunicorn -c python:service.gunicorn_conf``).

It lives in the package so that it is installed with it (``pip install .`` in the Docker
image); ``gunicorn.conf.py`` at the repository root re-exports it, so a plain ``gunicorn``
started in the repository finds it too. gunicorn reads the module-level names that are
gunicorn settings and ignores the others.

The settings come from the environment (:class:`service.config.Settings`; docs/operations.md,
"Configuration"), which must say where Redis is (``REDIS_URL``, ``REDIS_CLUSTER_NODES`` or
``REDIS_SENTINELS``): ``rummy-referee serve`` sets REDIS_URL when none is set (starting an
embedded redis-server), and so does docker-compose.yml. The hooks are
:mod:`service.gunicorn_hooks`; the settings tuned away from gunicorn's defaults are
:mod:`service.tuning`'s, each for a figure in bench/README.md.
"""

import os

from service import gunicorn_hooks as hooks
from service import tuning

_settings = hooks.load_settings()  # or exit 2, saying what is wrong

wsgi_app = "service.app:create_app()"
proc_name = "rummy-referee"
worker_class = _settings.worker_class  # RUMMY_WORKER_CLASS
workers = _settings.workers
threads = _settings.threads
worker_connections = tuning.worker_connections(_settings)  # gevent: its streams and more
bind = [_settings.bind]
reuse_port = tuning.reuse_port(_settings)  # a listening socket per worker

# A worker silent for this long is killed and replaced; requests only wait on Redis, whose
# socket timeout (RUMMY_REDIS_SOCKET_TIMEOUT) is far shorter.
timeout = 30
# On SIGTERM, in-flight requests get this long to finish.
graceful_timeout = 10
keepalive = 5

# Logs go to the console (12-factor). The service writes one line per request itself
# (service.api.observe), so gunicorn's access line, which says the same again, is off
# unless RUMMY_ACCESS_LOG asks for it (then on stdout); its error log goes to stderr.
accesslog = "-" if _settings.access_log else None
logger_class = hooks.RedactingLogger  # no stream ticket or token in an access line
errorlog = "-"
loglevel = _settings.log_level.lower()
capture_output = False

# The worker heartbeat file: tmpfs where there is one (a container's overlay fs can stall).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

# gunicorn >= 25.1 opens a control socket under $XDG_RUNTIME_DIR or ~/.gunicorn by default;
# nothing here uses it, and the image's user has no home. Older gunicorns ignore the name.
control_socket_disable = True

hooks.configure(_settings, reuse_port=reuse_port)
on_starting = hooks.on_starting
when_ready = hooks.when_ready
pre_fork = hooks.pre_fork
post_fork = hooks.post_fork
post_worker_init = hooks.post_worker_init
pre_request = hooks.pre_request
child_exit = hooks.child_exit
on_exit = hooks.on_exit
