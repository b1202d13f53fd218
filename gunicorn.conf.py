"""gunicorn settings: all in service/gunicorn_conf.py, which is installed with the package."""

from service.gunicorn_conf import *  # noqa: F403
