"""Request and response bodies of the HTTP API (pydantic), with their size caps.

Every body is validated here, at the edge: a bad request is a 4xx with a message, never a 5xx.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from frostline.contract.records import RUN_NAME_PATTERN

MAX_SCRIPT_CHARS = 256 * 1024
MAX_BODY_BYTES = 1024 * 1024
RUN_ID_PATTERN = RUN_NAME_PATTERN  # the one rule: frostline.contract.records
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}")
# The name of a [models.NAME] table of the server's configuration: never a path.
CONFIGURED_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# What a model is asked to write a script for (frostline.repair.author.MAX_TASK_CHARS).
MAX_TASK_CHARS = 20_000


def configured_endpoint(spec: str) -> str:
    """A model spec a client may send: a configured [models.NAME] (or model:NAME), or
    openai:MODEL. Replaying stored replies reads a file the spec names: never for a client."""
    kind, sep, name = spec.partition(":")
    configured = CONFIGURED_NAME.fullmatch(name if kind == "model" else spec)
    if not ((sep and kind == "openai" and MODEL_NAME.fullmatch(name))
            or (configured and (not sep or kind == "model"))):
        raise ValueError("name a model endpoint configured on the server, e.g. "
                         "'openai:gpt-4o-mini'; replaying stored replies from a file is a "
                         "command-line facility")
    return spec


class CreateRun(_Strict):
    """A run from a `script`, or from a `task` a configured `model` writes the script for."""

    script: str | None = Field(default=None, min_length=1, max_length=MAX_SCRIPT_CHARS)
    task: str | None = Field(default=None, min_length=1, max_length=MAX_TASK_CHARS,
                             description="what the script should do; the server's `model` "
                                         "writes it (instead of `script`)")
    model: str | None = Field(default=None, min_length=1, max_length=256,
                              description="with `task`: a model endpoint configured on the "
                                          "server, as for a repair")
    max_rewrites: int = Field(default=2, ge=0, le=10,
                              description="with `task`: rewrites after the first draft")
    args: dict[str, Any] = Field(default_factory=dict)
    envelope: dict[str, Any] = Field(default_factory=dict)
    run_id: str | None = Field(default=None, pattern=RUN_ID_PATTERN)

    @field_validator("model")
    @classmethod
    def _endpoint(cls, spec: str | None) -> str | None:
        return None if spec is None else configured_endpoint(spec)

    @model_validator(mode="after")
    def _script_or_task(self) -> CreateRun:
        if (self.script is None) == (self.task is None):
            raise ValueError("send either `script` (the script to run) or `task` with "
                             "`model` (a configured model writes the script), not both")
        if self.task is not None and self.model is None:
            raise ValueError("`task` needs `model`: a model endpoint configured on the server")
        if self.script is not None and self.model is not None:
            raise ValueError("`model` goes with `task`; a `script` runs as it is")
        return self


class GateRequest(_Strict):
    script: str = Field(min_length=1, max_length=MAX_SCRIPT_CHARS)
    relocation: Literal["stop", "rebind"] | None = Field(
        default=None, description="the relocation policy to gate under (default: the run's "
                                  "envelope); `rebind` dry-replays a candidate that only "
                                  "moves committed calls")


class AddAttempt(_Strict):
    script: str = Field(min_length=1, max_length=MAX_SCRIPT_CHARS)
    args: dict[str, Any] | None = None
    relocation: Literal["stop", "rebind"] | None = Field(
        default=None, description="this attempt's relocation policy (default: the run's "
                                  "envelope); see docs/contract.md")


class RepairRequest(_Strict):
    model: str = Field(min_length=1, max_length=256,
                       description="a model endpoint configured on the server: the NAME of a "
                                   "[models.NAME] table (or model:NAME), or openai:MODEL")
    max_rewrites: int = Field(default=3, ge=1, le=10)
    execute: bool = False

    @field_validator("model")
    @classmethod
    def _endpoint(cls, spec: str) -> str:
        return configured_endpoint(spec)


class ReconcileRequest(_Strict):
    identity: str = Field(min_length=3, max_length=2048)
    abandon: bool = False
    result: Any = None


class ApprovalAnswer(_Strict):
    approved: StrictBool = True
    reason: str | None = Field(default=None, max_length=2000)


class SignalBody(_Strict):
    data: Any = Field(description="the event's body: any JSON data")


class ErrorDetail(BaseModel):
    """What went wrong: a stable code, a message for people, and the error's own fields."""

    model_config = ConfigDict(extra="allow")
    code: str
    message: str


class ErrorBody(BaseModel):
    """Every error answer of the API (and every `--json` error of the command line)."""

    error: ErrorDetail
