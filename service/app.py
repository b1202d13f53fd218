"""The application factory: ``create_app()`` builds the Flask app (nothing at import time).

gunicorn loads ``service.app:create_app()`` once per worker process, so each worker gets
its own Redis connection pool.
"""

from __future__ import annotations

import http
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import swagger_ui_bundle
from flask import Blueprint, Flask, Response, json
from flask_cors import CORS
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from werkzeug.middleware.proxy_fix import ProxyFix

from service import sheets
from service.api import (
    fastpath,
    live_routes,
    lobby_routes,
    observe,
    oneof,
    problems,
    routes,
    schemas,
    security,
    sheet_routes,
    spec,
    streams,
    web,
)
from service.config import ConfigError, Settings
from service.live import Hub
from service.referee import (
    Contention,
    Forbidden,
    KeyReused,
    StaleVersion,
    Unauthorized,
    UnknownGame,
)
from service.rules import Code
from service.store import GameStore, StoreError, StoreFull, StoreUnavailable, make_store_client

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment
    from flask.ctx import RequestContext

API_VERSION = "1.0.0"

OPENAPI_INFO: dict[str, Any] = {
    "description": (
        "The referee for Rummy as a web service: validates proposed moves against the rules "
        "of each variant, applies legal ones atomically, and keeps score. Rule ids (e.g. "
        "`C-STOCK`, `BASIC-RUMMY`) refer to the rules reference, `docs/rules.md` in the "
        "project's repository; every refusal is `application/problem+json` with a stable "
        "`code` and the `rule` it enforces. The API in depth: `docs/api.md`."
    ),
}


class ServiceFlask(Flask):
    """Flask remembering which of the views and hooks it calls are plain functions, and
    telling each request its body limit (:meth:`request_context`).

    Flask asks ``inspect.iscoroutinefunction`` of each view and hook before every call
    (:meth:`~flask.Flask.ensure_sync`): eleven times a move, five times a call that only reads.
    The answer never changes for a function, so it is asked once. A bound method is
    remembered by its function (a ``MethodView`` binds its method anew for every request); a
    callable made for one request (``after_this_request``) is forgotten with the rest beyond
    :data:`PLAIN_CALLABLES`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._plain: set[object] = set()

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        key = getattr(func, "__func__", func)
        try:
            if key in self._plain:
                return func
        except TypeError:  # an unhashable callable: asked every time, as Flask does
            return super().ensure_sync(func)
        synced = super().ensure_sync(func)
        if synced is func:
            if len(self._plain) >= PLAIN_CALLABLES:
                self._plain.clear()
            self._plain.add(key)
        return synced

    def request_context(self, environ: WSGIEnvironment) -> RequestContext:
        """Flask's, its request told the body limit (``MAX_CONTENT_LENGTH``) at once: Flask's
        request otherwise reads the config through the ``current_app`` proxy (twice) each
        time it is asked, and reading a move's body asks twice."""
        ctx = super().request_context(environ)
        ctx.request.max_content_length = self.config["MAX_CONTENT_LENGTH"]
        return ctx


PLAIN_CALLABLES = 1024
"""Plain functions :class:`ServiceFlask` remembers (all are forgotten beyond)."""


def create_app(settings: Settings | None = None) -> Flask:
    """Build the app for ``settings`` (default: from the environment)."""
    settings = settings or Settings.from_env()
    if settings.redis_mode is None:
        raise ConfigError(["REDIS_URL: must be set, or REDIS_CLUSTER_NODES or REDIS_SENTINELS "
                           "(rummy-referee serve starts a redis-server when none is)"])
    app = ServiceFlask("service")
    app.request_class = fastpath.BodyRequest
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        API_TITLE="Rummy referee",
        API_VERSION=API_VERSION,
        OPENAPI_VERSION=spec.OPENAPI_VERSION,
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="/docs",
        OPENAPI_SWAGGER_UI_URL="/docs/static/",
        API_SPEC_OPTIONS={"info": OPENAPI_INFO, "servers": spec.SERVERS},
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    observe.configure_logging(settings.log_level, settings.log_format)

    client = make_store_client(settings)
    store = GameStore(client, ttl_seconds=settings.game_ttl_seconds,
                      idempotency_ttl_seconds=settings.idempotency_ttl_seconds)
    from service.referee.lobby import LobbyReferee

    app.extensions["referee"] = LobbyReferee(store)
    app.extensions["sheets"] = sheets.Sheets(GameStore(
        client, ttl_seconds=settings.game_ttl_seconds, namespace=sheets.NAMESPACE,
        idempotency_ttl_seconds=settings.idempotency_ttl_seconds))
    app.extensions["streams"] = streams.StreamSlots(settings)
    app.extensions["live"] = Hub(client, store.moved_channel)

    api = RefereeApi(app, spec_kwargs={"marshmallow_plugin": oneof.OneOfPlugin(),
                                       "extra_plugins": [spec.SurfacePlugin()]})
    api.ma_plugin.converter.add_attribute_function(schemas.component_ref)
    api.ma_plugin.converter.add_attribute_function(schemas.no_null_default)
    api.spec.components.security_scheme(
        "seatToken", {"type": "http", "scheme": "bearer",
                      "description": "a seat token from POST /v1/games or POST /v1/join"})
    api.spec.components.security_scheme(
        "hostToken", {"type": "http", "scheme": "bearer",
                      "description": "the host token from POST /v1/games"})
    api.spec.components.security_scheme(
        "sheetToken", {"type": "http", "scheme": "bearer",
                       "description": "a sheet's token from POST /v1/scoresheets"})
    api.register_blueprint(routes.blp)
    api.register_blueprint(routes.stateless)
    api.register_blueprint(sheet_routes.sheets_blp)
    api.register_blueprint(routes.ops)
    api.register_blueprint(lobby_routes.blp)
    api.register_blueprint(live_routes.blp)
    app.register_blueprint(Blueprint(
        "swagger_assets", __name__,
        static_folder=str(Path(swagger_ui_bundle.swagger_ui_path)),
        static_url_path="/docs/static"))
    app.extensions["api"] = api

    app.extensions["settings"] = settings
    if settings.proxy_hops:
        # the client's address (rate limits per address, log lines) from X-Forwarded-For
        hops = settings.proxy_hops
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)
    observe.install(app, settings.metrics)
    security.install(app, settings, store)
    web.register(app)
    problems.register(app)
    _register_referee_errors(app)
    lobby_routes.register(app)
    if settings.cors_origins:
        _install_cors(app, settings.cors_origins)
    return app


CORS_ALLOW_HEADERS = ("Authorization", "Content-Type", "If-Match", "If-None-Match",
                      "Idempotency-Key", "X-API-Key", "Last-Event-ID", "Prefer",
                      "Accept-Language")
"""The request headers a browser on another origin may send (the preflight allows them)."""
CORS_EXPOSE_HEADERS = ("ETag", "Location", "Retry-After", "Idempotent-Replayed",
                       "Content-Language", "RateLimit", "RateLimit-Policy",
                       "Preference-Applied")
"""The response headers its scripts may read."""
CORS_MAX_AGE = 7200
"""How long a browser may keep a preflight's answer (seconds; Chromium's own cap)."""


def _install_cors(app: Flask, origins: tuple[str, ...]) -> None:
    """CORS for ``origins`` (``RUMMY_CORS_ORIGINS``): ``*`` answers every origin with
    ``*``; a list answers each listed origin with itself, so every answer then says
    ``Vary: Origin`` (a cache must not hand one origin's answer to another), whether or not
    the request had an ``Origin``."""
    anyone = origins == ("*",)
    CORS(app, origins=list(origins), send_wildcard=anyone, max_age=CORS_MAX_AGE,
         expose_headers=list(CORS_EXPOSE_HEADERS), allow_headers=list(CORS_ALLOW_HEADERS))
    if not anyone:
        @app.after_request
        def vary_on_origin(response: Response) -> Response:
            response.vary.add("Origin")
            return response


class RefereeApi(Api):  # type: ignore[misc]
    """flask-smorest's Api documenting every error as problem+json (ProblemSchema)."""

    ERROR_SCHEMA = schemas.ProblemSchema
    _openapi: tuple[bytes, str] | None = None
    """``GET /openapi.json``'s body and its ``ETag``, once made."""

    def _register_responses(self) -> None:
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if not 100 <= status < 200 and status not in (204, 304):
                response["schema"] = self.ERROR_SCHEMA
            prepare_response(response, self.spec, problems.PROBLEM_MIMETYPE)
            self.spec.components.response(status.name, response, lazy=True)
        default = {"description": "An error (RFC 9457 problem details)",
                   "schema": self.ERROR_SCHEMA}
        prepare_response(default, self.spec, problems.PROBLEM_MIMETYPE)
        self.spec.components.response("DEFAULT_ERROR", default, lazy=True)

    def _openapi_json(self) -> Response:
        """``GET /openapi.json``: the document, made once per worker (flask-smorest makes it
        anew for each request, about 4 ms, on a route no rate limit covers), answered as
        :func:`~service.api.routes.deployment_document` (``ETag``, ``Cache-Control``, 304):
        it changes only with a deployment, and code generators and the docs page fetch it
        often."""
        if self._openapi is None:
            raw = json.dumps(self.spec.to_dict(), indent=2, sort_keys=False).encode()
            self._openapi = raw, routes.digest(raw)
        return routes.deployment_document(*self._openapi)


def _register_referee_errors(app: Flask) -> None:
    P = problems.Problem
    app.register_error_handler(UnknownGame, lambda e: P(
        404, "Not Found", problems.detail_of(e)).response())
    app.register_error_handler(Unauthorized, lambda e: P(
        401, "Unauthorized", str(e), headers={"WWW-Authenticate": "Bearer"}).response())
    app.register_error_handler(Forbidden, lambda e: P(403, "Forbidden", str(e)).response())
    app.register_error_handler(StaleVersion, lambda e: P(
        412, "Precondition Failed", problems.detail_of(e), current_version=e.current,
        headers={"ETag": f'"{e.current}"'}).response())
    app.register_error_handler(KeyReused, lambda e: P(
        422, "Idempotency key reused", str(e),
        code=Code.IDEMPOTENCY_KEY_REUSED.value).response())
    app.register_error_handler(Contention, lambda e: P(
        503, "Service Unavailable", problems.detail_of(e),
        headers={"Retry-After": "1"}).response())
    def store_down(error: StoreError) -> Response:
        observe.STORE_ERRORS.labels(type(error).__name__).inc()
        if isinstance(error, StoreFull):  # nothing was written; it will not pass in a second
            return P(503, "Service Unavailable", routes.STORE_FULL,
                     headers={"Retry-After": routes.STORE_FULL_RETRY_AFTER}).response()
        if isinstance(error, StoreUnavailable):
            detail = ("the game store could not be reached or a write's outcome is unknown; "
                      "retry with the same Idempotency-Key")
        else:
            detail = "the game store failed; retry"
        return P(503, "Service Unavailable", detail, headers={"Retry-After": "1"}).response()

    app.register_error_handler(StoreError, store_down)
