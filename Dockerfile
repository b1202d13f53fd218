# The rummy-referee API under gunicorn. Redis is not in the image: set REDIS_URL
# (docker-compose.yml does, and starts a Redis with AOF persistence beside it).

# --- build: a venv with the project installed as dev.py installs it (pip install .) ---
# The full image, for its C compiler: with `docker build --build-arg RUMMY_COMPILE=1`,
# setup.py compiles the rules engine with mypyc (by default it runs from its sources). The
# runtime stage below is the slim image of the same Python and Debian release.
FROM python:3.11 AS build

ARG RUMMY_COMPILE=0
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1

RUN python -m venv /opt/venv
ENV PATH="/opt/venv/bin:$PATH"

WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY service ./service
RUN pip install --no-cache-dir .

# --- runtime: the venv only, run by an unprivileged user ---
FROM python:3.11-slim

# JSON log lines, one per request, whether or not the container has a terminal
ENV PATH="/opt/venv/bin:$PATH" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    RUMMY_BIND=0.0.0.0:8000 \
    RUMMY_LOG_FORMAT=json

RUN groupadd --system --gid 10001 rummy \
    && useradd --system --no-log-init --uid 10001 --gid 10001 --no-create-home \
       --home-dir /nonexistent --shell /usr/sbin/nologin rummy

COPY --from=build /opt/venv /opt/venv

WORKDIR /app
# rummy (numeric, so that a runtime enforcing runAsNonRoot can verify it)
USER 10001:10001

EXPOSE 8000

HEALTHCHECK --interval=15s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4)"]

# service/gunicorn_conf.py is what the repository's gunicorn.conf.py re-exports; it is
# installed with the package, so the venv is all the image needs.
CMD ["gunicorn", "--config", "python:service.gunicorn_conf", "--bind", "0.0.0.0:8000"]
