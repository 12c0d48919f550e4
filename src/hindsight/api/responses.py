"""Responses serialised once.

A handler that returns a model makes FastAPI dump it, validate it again against the
response model and encode the result: three passes where pydantic's own JSON encoder needs
one (measured: about 0.5 ms of a 2 ms working-memory append). The hot routes return this
instead; `response_model` on the route still documents the shape.
"""

from __future__ import annotations

from fastapi import Response
from pydantic import BaseModel


def json_response(model: BaseModel, status_code: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status_code, media_type="application/json")
