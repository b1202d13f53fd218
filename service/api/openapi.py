"""Print the OpenAPI document the app generates (committed as ``openapi/openapi.json``; what
it says beyond the routes' decorators: :mod:`service.api.spec`).

    python -m service.api.openapi > openapi/openapi.json
"""

from __future__ import annotations

import json
import sys
from typing import Any

from service.config import Settings


def document() -> dict[str, Any]:
    """The OpenAPI document, generated from the schemas (no Redis needed)."""
    from service.app import create_app

    app = create_app(Settings(redis_url="redis://127.0.0.1:1/0"))
    spec: dict[str, Any] = app.extensions["api"].spec.to_dict()
    return spec


def ordered(node: Any, *, keep: bool = False) -> Any:
    """``node`` with the keys of every object sorted (a stable file, readable diffs) but
    those of an ``examples`` map (``keep``): tools show its first example first (Swagger UI's
    "Try it out", Redoc, editors), so it stays the one :mod:`service.api.examples` puts first
    (a first move, not a discard)."""
    if isinstance(node, dict):
        keys = list(node) if keep else sorted(node)
        return {key: ordered(node[key], keep=key == "examples" and not keep) for key in keys}
    if isinstance(node, list):
        return [ordered(item) for item in node]
    return node


def render() -> str:
    return json.dumps(ordered(document()), indent=2) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
