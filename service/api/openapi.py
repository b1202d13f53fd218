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


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
