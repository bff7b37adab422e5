"""What a run and its attempts can end as, and the one table that says what each ending and
each error means on every surface: the command line's exit code and the HTTP API's status.

- `AttemptStatus`: how one attempt ended (the attempt record's `status`); `RunStatus`: the
  run's, which is its last attempt's, or `created` before any and `cancelled` after a cancel.
- `EXIT_CODES`: the command line's exit codes, one row per meaning (docs/cli.md prints it).
- `ATTEMPT_EXIT`: the row each attempt status exits with.
- `ERRORS`: per error class, checked in order with isinstance, the row it exits with (None:
  the command's own default), the HTTP status it answers with (None: 400) and the attempt
  status it ends an attempt with when it stops one (None: failed).

`frostline.runtime.outcome`, `frostline.runtime.execute`, `frostline.cli.common` and the
service's error handlers all read these tables; none keeps a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from frostline.errors import (
    AlreadyAnswered,
    AnswerInvalid,
    ApprovalForbidden,
    AttemptUnresolved,
    DefinitionError,
    Divergence,
    FrostlineError,
    GateStopped,
    LimitExceeded,
    ModelError,
    NoEventWait,
    NothingToCancel,
    ResultTooDeep,
    RunBusy,
    RunExists,
    RunFinished,
    RunNotFound,
    SandboxUnavailable,
    ScriptRejected,
    SignalLimit,
    StoreNotFound,
    StoreRefused,
    StoreUnavailable,
    UnknownWait,
    ValueNotStorable,
    Waiting,
)


class AttemptStatus(StrEnum):
    """How one attempt ended (`running` while it runs)."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DIVERGED = "diverged"
    GATE_STOPPED = "gate_stopped"
    UNRESOLVED = "unresolved"
    REJECTED = "rejected"
    WAITING = "waiting"
    CANCELLED = "cancelled"


class RunStatus(StrEnum):
    """A run's status: its last attempt's, `created` before any, `cancelled` after a cancel;
    `authoring` while a model writes its first script (frostline.embedded.authoring): such a
    row only holds the name, is listed nowhere, and becomes `created` once a draft is
    accepted, or is removed."""

    AUTHORING = "authoring"
    CREATED = "created"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    DIVERGED = "diverged"
    GATE_STOPPED = "gate_stopped"
    UNRESOLVED = "unresolved"
    REJECTED = "rejected"
    WAITING = "waiting"
    CANCELLED = "cancelled"


# name -> (code, meaning). docs/cli.md's table is this one; tests/cli/test_exit_codes.py holds
# every command to it. `run`'s codes 0-6 and 10 are the attempt statuses (ATTEMPT_EXIT).
EXIT_CODES: dict[str, tuple[int, str]] = {
    "ok": (0, "success: the run succeeded, the gate accepted, the certificate is consistent"),
    "failed": (1, "the operation ran and failed: the script raised, a verification found "
                  "differences, a graph query fails, a graph run was rejected"),
    "usage": (2, "bad input: a flag, a file, an unknown run or store, a malformed definition"),
    "stopped": (3, "stopped before spending: by the gate, or no repair candidate was accepted"),
    "diverged": (4, "a committed identity was reached with another capability or payload"),
    "unresolved": (5, "a side-effecting call may have run but never committed; reconcile it"),
    "rejected": (6, "the static checker rejected the script (or its spend bound)"),
    "store_unavailable": (7, "the store cannot be reached, opened or written; nothing was "
                             "dispatched after the failure"),
    "sandbox_unavailable": (8, "the sandbox cannot be established here; fix the machine or "
                               "pass --runner process"),
    "stuck": (9, "a graph run ended in no terminal state (stuck, or the step limit)"),
    "waiting": (10, "the run waits for an approval, an event or a timer; answer it, then "
                    "`frostline resume`"),
}

# The row each attempt status exits with (a running attempt has no exit code yet; a
# cancelled one exits `failed`, the default).
ATTEMPT_EXIT: dict[str, str] = {
    AttemptStatus.SUCCEEDED: "ok",
    AttemptStatus.FAILED: "failed",
    AttemptStatus.GATE_STOPPED: "stopped",
    AttemptStatus.DIVERGED: "diverged",
    AttemptStatus.UNRESOLVED: "unresolved",
    AttemptStatus.REJECTED: "rejected",
    AttemptStatus.WAITING: "waiting",
}

# The row a phase graph's traversal exits with (frostline.graph.engine.TraversalStatus's values):
# stuck and the step limit both end in no terminal state.
GRAPH_EXIT: dict[str, str] = {
    "accepted": "ok", "rejected": "failed", "stuck": "stuck", "step_limit": "stuck"}

# Rows whose failed attempt exits with its error's own code: faults of the machine, not of
# the script (a failed attempt otherwise exits `failed`).
MACHINE_FAULTS = frozenset({"store_unavailable", "sandbox_unavailable"})


@dataclass(frozen=True)
class ErrorRow:
    """What one kind of error means on each surface."""

    kind: type[FrostlineError]
    exit: str | None = None  # the EXIT_CODES row; None: the command's own default
    http: int | None = None  # the HTTP status; None: 400
    stops_as: AttemptStatus | None = None  # an attempt it stops ends so; None: failed


# Checked in order with isinstance: a subclass whose meaning differs comes before its base.
ERRORS: tuple[ErrorRow, ...] = (
    ErrorRow(StoreRefused, http=422),  # a data error: retrying cannot help; no outage
    ErrorRow(StoreUnavailable, "store_unavailable", 503),
    ErrorRow(SandboxUnavailable, "sandbox_unavailable"),
    ErrorRow(Divergence, "diverged", stops_as=AttemptStatus.DIVERGED),
    ErrorRow(AttemptUnresolved, "unresolved", stops_as=AttemptStatus.UNRESOLVED),
    ErrorRow(Waiting, "waiting", stops_as=AttemptStatus.WAITING),
    ErrorRow(ScriptRejected, "rejected", 422),
    ErrorRow(GateStopped, "stopped"),
    ErrorRow(ResultTooDeep, http=422),
    ErrorRow(ValueNotStorable, "usage", 422),
    ErrorRow(RunNotFound, "usage", 404),
    ErrorRow(StoreNotFound, "usage"),
    ErrorRow(UnknownWait, "usage", 404),
    ErrorRow(AnswerInvalid, "usage"),
    ErrorRow(NoEventWait, "usage", 409),
    ErrorRow(AlreadyAnswered, http=409),
    ErrorRow(ApprovalForbidden, http=403),
    ErrorRow(RunFinished, http=409),
    ErrorRow(SignalLimit, http=409),
    ErrorRow(RunExists, http=409),
    ErrorRow(DefinitionError, "usage", 400),
    ErrorRow(RunBusy, http=409),
    ErrorRow(NothingToCancel, http=409),
    ErrorRow(LimitExceeded, http=429),
    ErrorRow(ModelError, http=502),  # the model endpoint the server called failed
)
_NO_ROW = ErrorRow(FrostlineError)


def row_of(err: FrostlineError) -> ErrorRow:
    """The first row of `ERRORS` whose kind `err` is."""
    return next((row for row in ERRORS if isinstance(err, row.kind)), _NO_ROW)


def exit_of_error(err: FrostlineError, default: int) -> int:
    """The exit code of `err`: its row's, else `default` (the command's own)."""
    row = row_of(err).exit
    return default if row is None else EXIT_CODES[row][0]


def http_of_error(err: FrostlineError) -> int:
    """The HTTP status `err` answers with."""
    status = row_of(err).http
    return 400 if status is None else status


def status_of_stop(err: FrostlineError) -> AttemptStatus:
    """How an attempt that `err` stopped ends."""
    return row_of(err).stops_as or AttemptStatus.FAILED


# error code -> exit code of a failed attempt whose error is a fault of the machine
FAILURE_EXIT_CODES: dict[str, int] = {
    row.kind.code: EXIT_CODES[row.exit][0] for row in ERRORS if row.exit in MACHINE_FAULTS}


def exit_of_attempt(status: str, error: Mapping[str, Any] | None) -> int:
    """The command line's exit code of an attempt that ended with `status` and `error`."""
    if status == AttemptStatus.FAILED and error is not None:
        own = FAILURE_EXIT_CODES.get(str(error.get("code")))
        if own is not None:
            return own
    return EXIT_CODES[ATTEMPT_EXIT.get(status, "failed")][0]
