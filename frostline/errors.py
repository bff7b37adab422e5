"""One root for every error frostline raises, with branches that match how callers react.

    FrostlineError                 the root (code "error"): raise a named class below
    ├── DefinitionError            bad declared input: fix the file and try again
    │   ├── EnvelopeError          an envelope key or value is wrong
    │   ├── CatalogError           a capability entry is malformed or unknown
    │   ├── ConfigError            the configuration file is malformed (names file and key)
    │   ├── GraphLoadError         a phase-graph file is malformed (graph package)
    │   ├── GraphRejected          the model checker found a red query; the graph may not run
    │   ├── TaskSetError           a tasks folder is missing, malformed, or its seal differs
    │   └── MissingExtra           an optional extra the command needs is not installed
    ├── ScriptRejected             the static checker found error-severity violations
    ├── GateStopped                a candidate changes or removes a frozen callsite
    ├── Frontier                   a dry replay reached new work: its branch stops, unpaid
    ├── RunNotFound                no run with that id in the store
    ├── RunExists                  a run with that name exists already (HTTP 409)
    ├── RunKindMismatch            the name is taken by a run of another kind
    ├── StoreNotFound              a read named a store that does not exist (none was created)
    ├── CallNotFound               no call with that id in the store
    ├── CallNotPending             a call that is not pending cannot fail or commit
    ├── SlotMismatch               a commit names a call that is not the slot's
    ├── NoPendingCall              nothing waits for a decision at that identity
    ├── CertificateCorrupted       a stored certificate is not a certificate
    ├── ProtocolError              a frame between host and child is malformed
    ├── ScriptLoadError            the source defines no usable `orchestrate`
    ├── ResultTooLarge             a script's result is too large to cross the boundary
    ├── DependencyFailed           a dag task did not run: a task it depends on failed
    ├── LimitExceeded              a principal reached one of its limits (HTTP 429)
    ├── FetchError                 an archive cannot be downloaded or is not the pinned one
    ├── GraphToolsInvalid          a graph's tools are not callables or not in its vocabulary
    ├── GraphBodiesInvalid         a graph's bodies do not match its states, or cannot load
    ├── GraphChanged               a run id started with another graph
    ├── SpinFailed                 the SPIN cross-check could not run or give a verdict
    ├── NotAGraphArm               an arm that is not a graph arm was run as one
    ├── ReportInvalid              an A/B report lacks what it must carry
    └── RunError                   something stopped a run while it executed
        ├── Divergence             a committed identity reached with another capability/payload
        ├── AttemptUnresolved      a side-effecting call may have run but never committed
        ├── StoreUnavailable       the store failed; nothing was dispatched (fail closed)
        │   └── StoreRefused       the database refused a write for good (a data error):
        │                          retrying cannot help, so the attempt fails
        ├── RetriesExhausted       a job handed back after store failures too many times
        ├── PrefixConflict         two stored records disagree about one identity
        ├── CommittedElsewhere     another writer committed the identity with another result
        ├── DecisionInvalid        a recorded decision (a race's winner) does not fit the script
        ├── InternalError          the broker failed while handling a call
        ├── OrphansFound           committed identities were not invoked; the policy is stop
        ├── HostCrashed            the process running the attempt stopped before its end
        ├── Interrupted            the server restarted while the attempt ran in its pool
        ├── RunBusy                another process holds the run's lock
        │   └── AlreadyQueued      the run already has a job waiting or running
        ├── NothingToCancel        a cancel named a run with no job queued or running
        ├── ProviderError          the provider rejected or failed a call
        │   ├── ProviderCrashed    the provider raised something that is no ProviderError
        │   └── ApprovalRejected   a person rejected a call that needed approval
        ├── Waiting                the attempt reached a wait with no answer (status waiting)
        ├── WaitRefused            an answer cannot be taken (AlreadyAnswered, UnknownWait,
        │                          RunFinished, AnswerInvalid, ApprovalForbidden, SignalLimit,
        │                          NoEventWait)
        ├── ProviderUnavailable    a configured provider cannot be started or reached
        ├── SandboxUnavailable     the sandbox cannot be established on this machine
        ├── ValueNotStorable       a value no store can hold (NUL, a lone surrogate, not
        │   │                      JSON, too deep): refused before anything is stored
        │   └── ResultTooDeep      a result nests too deeply to be kept and shown again
        ├── IllegalTransition      a traversal of an un-enumerated (or disabled) edge
        ├── ModelError             a model call failed (`kind` says how)
        ├── InjectedFault          a fault the fault plan injected into a tool call
        ├── TestsDidNotRun         the repository's tests could not be run at all
        ├── BugDoesNotReproduce    the failing tests the task names pass on the buggy tree
        ├── PatchRefused           a patch EDIT must not apply
        ├── BadTask                the task itself is unusable
        ├── NoCandidate            no candidate patch left to offer
        └── CallDenied             the broker refused a call before dispatch
            ├── GrantDenied, BudgetExceeded, PayloadInvalid, SemanticRepeatDenied
            ├── FrameRejected      a frame failed admission (nonce, site, capability, shape)
            └── IllegalTool        a tool outside the current state's allowlist; never routed

    RunStopped (BaseException)    raised inside a script when the host stopped the run;
                                  derives from BaseException so `except Exception` in a
                                  script cannot swallow it.

Every error carries structured fields and builds its own message; `to_dict()` gives the
JSON shape that the CLI and the HTTP API print, and `from_dict()` rebuilds any such shape as
the error it was. Each class declares its own `code`, the one the JSON carries; every class
is registered under it (`registered()`), and no two classes share one. An error's exit code
and HTTP status are rows of one table, `frostline.contract.status`.

Other modules re-export the classes that used to live with them (`frostline.graph.errors`,
`frostline.runtime.sandbox`, …); this module is where each is defined.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

# code -> the class that declares it; filled by FrostlineError.__init_subclass__.
_BY_CODE: dict[str, type[FrostlineError]] = {}


class FrostlineError(Exception):
    """Root of frostline's errors."""

    code: ClassVar[str] = "error"

    def __init__(self, message: str, **fields: Any) -> None:
        if "code" in fields or "type" in fields:
            # one code per error: its class's (a field would shadow it in to_dict() only)
            raise TypeError(f"{type(self).__name__}: `code` and `type` are the class's; raise "
                            "the error class that has the code instead")
        super().__init__(message)
        self.message = message
        self.fields = fields

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A class that declares a code is registered under it; one that does not (a
        # provider's own ProviderError subclass) travels as the nearest class that does.
        super().__init_subclass__(**kwargs)
        if "code" not in cls.__dict__:
            return
        taken = _BY_CODE.get(cls.code)
        if taken is not None and taken.__qualname__ != cls.__qualname__:
            raise TypeError(f"error code {cls.code!r} of {cls.__qualname__} is taken by "
                            f"{taken.__module__}.{taken.__qualname__}; choose another")
        _BY_CODE[cls.code] = cls

    def to_dict(self) -> dict[str, Any]:
        return {"type": type(self).__name__, "code": self.code, "message": self.message, **self.fields}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], default: type[FrostlineError] | None = None,
                  message: str = "call failed") -> FrostlineError:
        """The error a `to_dict()` shape stands for, as its own class with its fields: looked
        up by `code`, else by `type` (a hand-built record), else `default` (this class)."""
        found = _BY_CODE.get(str(data.get("code")))
        if found is None:
            found = next((c for c in _BY_CODE.values() if c.__name__ == data.get("type")), None)
        kind = found or default or cls
        fields = {k: v for k, v in data.items() if k not in ("type", "code", "message", "kind")}
        return _rebuild(kind, str(data.get("message", message)), fields)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keep persisted/pickled errors reconstructible across processes.
        return (_rebuild, (type(self), self.message, self.fields))


_BY_CODE[FrostlineError.code] = FrostlineError


def registered() -> dict[str, type[FrostlineError]]:
    """Every error class by its code (a copy)."""
    return dict(_BY_CODE)


def _rebuild(cls: type[FrostlineError], message: str, fields: dict[str, Any]) -> FrostlineError:
    # Not through cls.__init__: a class whose constructor builds its message (TestsDidNotRun)
    # or takes keyword fields (LimitExceeded) is rebuilt from what it already said.
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


class GraphRejected(DefinitionError):
    """The graph failed reachability, safety or liveness; run `frostline graph check` to see why."""

    code = "graph_rejected"


class TaskSetError(DefinitionError):
    """A tasks folder that is missing, malformed, or whose seal does not match (the CLI exits 2)."""

    code = "tasks"


class MissingExtra(DefinitionError):
    """An optional extra the command needs is not installed (the message names it)."""

    code = "missing_extra"


class ScriptRejected(FrostlineError):
    code = "rejected"


class GateStopped(FrostlineError):
    code = "gate_stopped"


class Frontier(FrostlineError):
    """A call of new work reached during a dry replay: its branch stops there, unpaid."""

    code = "frontier"


class RunNotFound(FrostlineError):
    code = "run_not_found"


class StoreNotFound(FrostlineError):
    code = "store_not_found"


class RunExists(FrostlineError):
    """A run with that name exists already (also when two creations race: one wins)."""

    code = "exists"


class RunKindMismatch(FrostlineError):
    """The name is taken by a run of another kind (a script run, a graph run, an A/B report)."""

    code = "run_kind"


class CallNotFound(FrostlineError):
    """No call with that id in the store; `begin_call` returns the id."""

    code = "call_not_found"


class CallNotPending(FrostlineError):
    """The call is not pending (it failed or committed), so it can neither fail nor commit."""

    code = "call_not_pending"


class SlotMismatch(FrostlineError):
    """A commit named a call whose run, identity, capability or digest is not the slot's."""

    code = "slot_mismatch"


class NoPendingCall(FrostlineError):
    """No call of the run waits for a decision at that identity: nothing to reconcile."""

    code = "no_pending_call"


class CertificateCorrupted(FrostlineError):
    """A stored certificate is not a certificate: wrong type, missing fields, broken chain."""

    code = "certificate_corrupted"


class ProtocolError(FrostlineError):
    """A frame is malformed, oversized, or the peer closed the channel mid-frame."""

    code = "protocol"


class ScriptLoadError(FrostlineError):
    """The annotated source did not define a usable `async def orchestrate(ctx, args)`."""

    code = "script_load"


class ResultTooLarge(FrostlineError):
    """orchestrate returned more JSON than a script's result may carry across the boundary."""

    code = "result_too_large"


class DependencyFailed(FrostlineError):
    """A dag task did not run because a task it depends on failed."""

    code = "dependency_failed"


class LimitExceeded(FrostlineError):
    """A principal reached one of its limits; answered with 429 and Retry-After."""

    code = "too_many_requests"

    def __init__(self, message: str, *, limit: str, retry_after_s: int) -> None:
        super().__init__(message, limit=limit, retry_after_s=retry_after_s)

    @property
    def retry_after_s(self) -> int:
        return int(self.fields["retry_after_s"])


class FetchError(FrostlineError):
    """An archive cannot be downloaded, or its bytes are not the pinned ones."""

    code = "fetch"


class GraphToolsInvalid(FrostlineError):
    """A graph's tool is not a callable or a GraphTool, or is not in the graph's vocabulary."""

    code = "graph_tools"


class GraphBodiesInvalid(FrostlineError):
    """A graph's bodies name unknown states, miss a state, or cannot be loaded."""

    code = "graph_bodies"


class GraphChanged(FrostlineError):
    """The run id was started with another graph: its identities would not mean the same calls."""

    code = "graph_changed"


class SpinFailed(FrostlineError):
    """The SPIN cross-check could not run (spin or gcc missing, pan failed) or gave no verdict."""

    code = "spin_failed"


class NotAGraphArm(FrostlineError):
    """An arm that is not a graph arm was run as one; run it with solve()."""

    code = "not_graph_arm"


class ReportInvalid(FrostlineError):
    """An A/B report lacks what it must carry; nothing was recorded."""

    code = "report_invalid"


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


class CommittedElsewhere(RunError):
    """Another writer committed the identity meanwhile with another result: the value the
    script saw is not the committed one, so the attempt stops before it acts on it."""

    code = "committed_elsewhere"


class DecisionInvalid(RunError):
    """A recorded decision (a race's winner) does not fit the script replaying it."""

    code = "decision_invalid"


class InternalError(RunError):
    """The broker failed while handling a call (a defect); the run stops."""

    code = "internal"


class OrphansFound(RunError):
    """Committed identities the attempt did not invoke, under orphan policy stop."""

    code = "orphans"


class HostCrashed(RunError):
    """The process running the attempt stopped before finishing it."""

    code = "crashed"


class Interrupted(RunError):
    """The server restarted while the attempt ran in its process pool."""

    code = "interrupted"


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
    """A provider refused or failed a call. `status` mirrors an HTTP status when there is one,
    `error_code` is the provider's own name for the failure, and `outcome_unknown` says the
    call may have run (its answer was lost)."""

    code = "provider"

    @property
    def status(self) -> int | None:
        status = self.fields.get("status")
        return status if isinstance(status, int) else None

    @property
    def error_code(self) -> str | None:
        code = self.fields.get("error_code")
        return code if isinstance(code, str) else None

    @property
    def outcome_unknown(self) -> bool:
        return bool(self.fields.get("outcome_unknown"))


class ProviderCrashed(ProviderError):
    """A provider raised something that is not a ProviderError; the message names it."""

    code = "provider_exception"


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


class SandboxUnavailable(RunError):
    """The sandbox cannot be established on this machine; nothing was executed.

    The message says what is missing and how to fix it. frostline never falls back to a
    weaker runner on its own.
    """

    code = "sandbox_unavailable"


class ValueNotStorable(RunError):
    """A value that no store can hold, refused before anything is stored, the same way on
    SQLite and PostgreSQL: a NUL character (U+0000) or a lone surrogate in a string or key,
    data that is not JSON, or nesting past the depth limit. `field` names the value,
    `reason` the problem (nul, surrogate, not_json, too_deep) and `at` where it is."""

    code = "value_not_storable"

    @property
    def reason(self) -> str | None:
        reason = self.fields.get("reason")
        return reason if isinstance(reason, str) else None


class ResultTooDeep(ValueNotStorable):
    code = "result_too_deep"


class IllegalTransition(RunError):
    code = "illegal_transition"


class ModelError(RunError):
    """A model call failed. `kind` is one of: rate_limited, server_error, timeout, connection,
    auth, bad_request, malformed, exhausted."""

    code = "model"


class InjectedFault(RunError):
    """A fault the fault plan injected into a tool call (not a defect of the tool)."""

    code = "injected_fault"


class TestsDidNotRun(RunError):
    """The repository's tests could not be run at all (collection error, crash, timeout)."""

    __test__ = False
    code = "tests_did_not_run"

    def __init__(self, message: str, **fields: Any) -> None:
        super().__init__(f"the tests did not run: {message}", **fields)


class BugDoesNotReproduce(RunError):
    """The failing tests the task names pass on the buggy tree."""

    code = "bug_does_not_reproduce"


class PatchRefused(RunError):
    """A patch that EDIT must not apply (touches a test, does not parse, does not match)."""

    code = "patch_refused"


class BadTask(RunError):
    """The task itself is unusable (its tree is missing, its mutation does not match)."""

    code = "bad_task"


class NoCandidate(RunError):
    """A generator or the repair had no candidate patch left to offer."""

    code = "no_candidate"


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


class FrameRejected(CallDenied):
    """A frame failed admission: wrong nonce, unknown site, mismatched capability, bad shape."""

    code = "rpc_rejected"


class IllegalTool(CallDenied):
    code = "illegal_tool"


class RunStopped(BaseException):
    """Raised inside a running script when the host has stopped the run.

    It derives from BaseException on purpose: a script's `except Exception` must not be able
    to swallow a divergence, an unresolved attempt or a store outage.
    """

    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "run stopped by the host"))
        self.error = error
