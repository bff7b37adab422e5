"""Request and response bodies of the HTTP API (pydantic), with their size caps.

Every body is validated here, at the edge: a bad request is a 4xx with a message, never a 5xx.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

MAX_SCRIPT_CHARS = 256 * 1024
MAX_BODY_BYTES = 1024 * 1024
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateRun(_Strict):
    script: str = Field(min_length=1, max_length=MAX_SCRIPT_CHARS)
    args: dict[str, Any] = Field(default_factory=dict)
    envelope: dict[str, Any] = Field(default_factory=dict)
    run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN)


class AddAttempt(_Strict):
    script: str = Field(min_length=1, max_length=MAX_SCRIPT_CHARS)
    args: dict[str, Any] | None = None


class RepairRequest(_Strict):
    model: str = Field(min_length=3, max_length=512, description="openai:MODEL or recorded:FILE")
    max_rewrites: int = Field(default=3, ge=1, le=10)
    execute: bool = False


class ReconcileRequest(_Strict):
    identity: str = Field(min_length=3, max_length=2048)
    abandon: bool = False
    result: Any = None


class ErrorBody(BaseModel):
    error: str
    message: str
    detail: Any = None
