"""One root for every error frostline raises, with branches that match how callers react.

    FrostlineError
    ├── DefinitionError            bad declared input: fix the file and try again
    │   ├── EnvelopeError          an envelope key or value is wrong
    │   ├── CatalogError           a capability entry is malformed or unknown
    │   ├── ConfigError            the configuration file is malformed (names file and key)
    │   └── GraphLoadError         a phase-graph file is malformed (graph package)
    ├── ScriptRejected             the static checker found error-severity violations
    ├── GateStopped                a candidate changes or removes a frozen callsite
    ├── RunNotFound                no run with that id in the store
    ├── StoreNotFound              a read named a store that does not exist (none was created)
    └── RunError                   something stopped a run while it executed
        ├── Divergence             a committed identity reached with another capability/payload
        ├── AttemptUnresolved      a side-effecting call may have run but never committed
        ├── StoreUnavailable       the store failed; nothing was dispatched (fail closed)
        │   └── StoreRefused       the database refused a write for good (a data error):
        │                          retrying cannot help, so the attempt fails
        ├── RetriesExhausted       a job handed back after store failures too many times
        ├── PrefixConflict         two stored records disagree about one identity
        ├── RunBusy                another process holds the run's lock
        │   └── AlreadyQueued      the run already has a job waiting or running
        ├── NothingToCancel        a cancel named a run with no job queued or running
        ├── ProviderError          the provider rejected or failed a call
        │   └── ApprovalRejected   a person rejected a call that needed approval
        ├── Waiting                the attempt reached a wait with no answer (status waiting)
        ├── WaitRefused            an answer cannot be taken (AlreadyAnswered, UnknownWait,
        │                          RunFinished, AnswerInvalid, ApprovalForbidden, SignalLimit,
        │                          NoEventWait)
        ├── ProviderUnavailable    a configured provider cannot be started or reached
        ├── ValueNotStorable       a value no store can hold (NUL, a lone surrogate, not
        │   │                      JSON, too deep): refused before anything is stored
        │   └── ResultTooDeep      a result nests too deeply to be kept and shown again
        └── CallDenied             the broker refused a call before dispatch
            ├── GrantDenied, BudgetExceeded, PayloadInvalid, SemanticRepeatDenied

    RunStopped (BaseException)    raised inside a script when the host stopped the run;
                                  derives from BaseException so `except Exception` in a
                                  script cannot swallow it.

Every error carries structured fields and builds its own message; `to_dict()` gives the
JSON shape that the CLI and the HTTP API print.
"""

from __future__ import annotations

from typing import Any


class FrostlineError(Exception):
    """Root of frostline's errors."""

    code = "error"

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields

    def to_dict(self) -> dict[str, Any]:
        return {"type": type(self).__name__, "code": self.code, "message": self.message, **self.fields}

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep persisted/pickled errors reconstructible across processes.
        return (_rebuild, (type(self), self.message, self.fields))


def _rebuild(cls: type[FrostlineError], message: str, fields: dict[str, Any]) -> FrostlineError:
    err = cls.__new__(cls)
    FrostlineError.__init__(err, message, **fields)
    return err


class DefinitionError(FrostlineError):
    code = "definition"


class EnvelopeError(DefinitionError):
    code = "envelope"


class CatalogError(DefinitionError):
    code = "catalog"


class ConfigError(DefinitionError):
    """The configuration file is wrong; `file`, `key` and `expected` say where and how."""

    code = "config"


class GraphLoadError(DefinitionError):
    code = "graph_load"


class ScriptRejected(FrostlineError):
    code = "rejected"


class GateStopped(FrostlineError):
    code = "gate_stopped"


class RunNotFound(FrostlineError):
    code = "run_not_found"


class StoreNotFound(FrostlineError):
    code = "store_not_found"


class RunError(FrostlineError):
    code = "run"


class Divergence(RunError):
    code = "divergence"


class AttemptUnresolved(RunError):
    code = "unresolved"


class StoreUnavailable(RunError):
    """The store failed. `message` (and `str()`) keep the detail for the operator's log and
    the local command line: the driver's words, which may name the database host, the
    database and the store URL. `to_dict()`, the form every answer, event and record carries,
    keeps none of it: clients of a shared server never see where the store lives."""

    code = "store_unavailable"
    # the fields a client may see; the rest (url, backend, driver detail) stays in the log
    PUBLIC_FIELDS = ("operation", "outcome", "run_id")

    def to_dict(self) -> dict[str, Any]:
        operation = self.fields.get("operation")
        during = f" during {operation}" if isinstance(operation, str) else ""
        return {"type": type(self).__name__, "code": self.code,
                "message": f"the store failed{during}; nothing after the failure was "
                           "recorded. Retry later; the operator's log has the detail",
                **{k: v for k, v in self.fields.items() if k in self.PUBLIC_FIELDS}}


class StoreRefused(StoreUnavailable):
    """The database refused a statement for a reason that does not go away (a data error:
    SQLSTATE class 22, a constraint, a malformed statement). Retrying cannot help, so a job
    that meets one fails instead of going back to the queue; `sqlstate` names the refusal."""

    code = "store_refused"


class RetriesExhausted(RunError):
    """A job was handed back after store failures that may pass (a lost connection, a
    serialization failure) `tries` times, and the queue does not run it again; `last` is the
    code of the last failure."""

    code = "retries_exhausted"


class PrefixConflict(RunError):
    code = "prefix_conflict"


class RunBusy(RunError):
    code = "run_busy"


class AlreadyQueued(RunBusy):
    """A second job for a run whose job is still waiting or running (one at a time per run)."""

    code = "already_queued"


class NothingToCancel(RunError):
    """A cancellation named a run that has finished: no job of it waits or runs, and it does
    not wait either."""

    code = "nothing_to_cancel"


class ProviderError(RunError):
    """A provider refused or failed a call. `status` mirrors an HTTP status when there is one."""

    code = "provider"


class ApprovalRejected(ProviderError):
    """A call whose capability requires approval was rejected; the script may catch it."""

    code = "approval_rejected"


class Waiting(RunError):
    """The attempt reached a wait (an approval, an event, a timer) with no answer yet: it
    ends with status `waiting`, and the next attempt replays up to the wait."""

    code = "waiting"


class WaitRefused(RunError):
    """An answer to a wait that cannot be taken; nothing was changed."""

    code = "wait_refused"


class AlreadyAnswered(WaitRefused):
    """The wait already has an answer; the first one stands."""

    code = "already_answered"


class UnknownWait(WaitRefused):
    """No such wait in the run (it was never reached, or the identity is wrong)."""

    code = "unknown_wait"


class RunFinished(WaitRefused):
    """The run has finished: nothing it would ever wait for can be answered."""

    code = "run_finished"


class AnswerInvalid(WaitRefused):
    """The answer is malformed (not JSON, too large, a bad field)."""

    code = "answer_invalid"


class ApprovalForbidden(WaitRefused):
    """The caller may not answer this approval (its own run's, or one it is no approver of);
    the message says who may. Nothing was recorded."""

    code = "approval_forbidden"
class SignalLimit(WaitRefused):
    """The run keeps as many events (or bytes of them) as it may: `limit` says which bound."""

    code = "signal_limit"


class NoEventWait(WaitRefused):
    """The run's script waits for no event (no `event.wait`): a signal would be kept for ever."""

    code = "no_event_wait"


class ProviderUnavailable(RunError):
    """A configured provider (an MCP server, a Python module) could not be started or reached;
    `provider` names it and `reason` says what happened."""

    code = "provider_unavailable"


class ValueNotStorable(RunError):
    """A value that no store can hold, refused before anything is stored, the same way on
    SQLite and PostgreSQL: a NUL character (U+0000) or a lone surrogate in a string or key,
    data that is not JSON, or nesting past the depth limit. `field` names the value,
    `reason` the problem (nul, surrogate, not_json, too_deep) and `at` where it is."""

    code = "value_not_storable"


class ResultTooDeep(ValueNotStorable):
    code = "result_too_deep"


class CallDenied(RunError):
    code = "denied"


class GrantDenied(CallDenied):
    code = "grant_denied"


class BudgetExceeded(CallDenied):
    code = "budget_exceeded"


class PayloadInvalid(CallDenied):
    code = "payload_invalid"


class SemanticRepeatDenied(CallDenied):
    code = "semantic_repeat_denied"


class RunStopped(BaseException):
    """Raised inside a running script when the host has stopped the run.

    It derives from BaseException on purpose: a script's `except Exception` must not be able
    to swallow a divergence, an unresolved attempt or a store outage.
    """

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "run stopped by the host"))
        self.error = error
