"""The store's queued writes as values: one frozen class a write, submitted with `Store.submit`.

A write the runtime queues rather than waits for in its own thread (an attempt record, a
commit, a failed-call mark, an audit event, a race decision, an attempt's end) is built as one
of the classes below and handed to `Store.submit`, which returns a future of its result at
once::

    call_id = store.submit(BeginCall(run_id, 1, identity, capability, digest)).result()
    store.submit(CommitCall(call_id, slot, event=("executed", audit)))

Each class names its operation (what an error reports), says whether it may be *held* (see
`frostline.store.groupcommit`: a write nobody waits for yet may wait briefly for company), and
knows its two forms: `apply`, the blocking method a store without a writer runs it as, and
`sql`, the SQL store's form of it (the statements run on the group-commit writer, and where
the dialect pipelines, the pipelined statement; both from one encoding of the parameters).
The type checker sees every field, and what `submit` returns: `Future[int]` for a `BeginCall`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from frostline.contract.identity import Identity
from frostline.contract.records import AttemptRecord, SlotRecord

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

AuditEvent = tuple[str, dict[str, Any]]  # (kind, data) of an event


@dataclass(frozen=True)
class SqlForm(Generic[T_co]):
    """A write as the SQL store runs it: `run(conn)` inside the writer's transaction (run
    again after a rollback, it writes the same thing), and `piped`, the same write in the
    form the backend's pipeline sends (None: the dialect does not pipeline, or this write
    takes its general path)."""

    run: Callable[[Any], T_co]
    piped: object | None = None


class BlockingWrites(Protocol):
    """The store methods the writes are, run to completion in the caller's thread."""

    def begin_call(self, run_id: str, attempt: int, identity: Identity, capability: str,
                   digest: str, idempotency_key: str | None = None) -> int: ...

    def commit_call(self, call_id: int, slot: SlotRecord, *, event: AuditEvent | None = None,
                    resolve_pending: bool = False) -> SlotRecord: ...

    def fail_call(self, call_id: int, error: dict[str, Any]) -> None: ...

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int: ...

    def append_events(self, run_id: str, events: list[AuditEvent]) -> list[int]: ...

    def decide(self, run_id: str, key: str, value: Any) -> Any: ...

    def put_certificate(self, run_id: str, attempt: int,
                        certificate: dict[str, Any]) -> None: ...

    def finish_attempt(self, run_id: str, number: int, *, status: str,
                       gate: dict[str, Any] | None = None, invoked: list[str] | None = None,
                       orphans: list[str] | None = None, result: Any = None,
                       error: dict[str, Any] | None = None,
                       stats: dict[str, Any] | None = None) -> AttemptRecord: ...

    def set_run_status(self, run_id: str, status: str) -> None: ...


class SqlWrites(Protocol):
    """What the SQL store provides for each write: its statements, its parameters encoded
    (and checked) once, and its pipelined form when `piped` asks for it."""

    def begin_call_sql(self, write: BeginCall, piped: bool) -> SqlForm[int]: ...

    def commit_call_sql(self, write: CommitCall, piped: bool) -> SqlForm[SlotRecord]: ...

    def fail_call_sql(self, write: FailCall, piped: bool) -> SqlForm[None]: ...

    def append_event_sql(self, write: AppendEvent, piped: bool) -> SqlForm[int]: ...

    def append_events_sql(self, write: AppendEvents, piped: bool) -> SqlForm[list[int]]: ...

    def decide_sql(self, write: Decide, piped: bool) -> SqlForm[Any]: ...

    def put_certificate_sql(self, write: PutCertificate, piped: bool) -> SqlForm[None]: ...

    def finish_attempt_sql(self, write: FinishAttempt, piped: bool) -> SqlForm[AttemptRecord]: ...

    def set_run_status_sql(self, write: SetRunStatus, piped: bool) -> SqlForm[None]: ...


@dataclass(frozen=True)
class Write(abc.ABC, Generic[T]):
    """One queued write whose result is a `T`."""

    operation: ClassVar[str]  # the store method it is, named in errors
    # Whether the writer may hold it for company: a write the runtime settles rather than
    # waits for (a commit, a failed-call mark, an audit event). Waiting for its future ends
    # the hold at once, so a held write someone waits for is never late.
    held: ClassVar[bool] = False

    @abc.abstractmethod
    def apply(self, store: BlockingWrites) -> T:
        """Run the write as the store's blocking method: how a store without a writer queue
        (`frostline.testing.FaultyStore`) runs what is submitted to it. Such a store
        implements the blocking methods itself (`Store`'s own blocking methods submit)."""

    @abc.abstractmethod
    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[T]:
        """The SQL store's form of the write; `piped` asks for its pipelined form too."""


@dataclass(frozen=True)
class BeginCall(Write[int]):
    """The durable attempt record of a dispatch (pending); its result is the call id."""

    operation: ClassVar[str] = "begin_call"

    run_id: str
    attempt: int
    identity: Identity
    capability: str
    digest: str
    idempotency_key: str | None = None

    def apply(self, store: BlockingWrites) -> int:
        return store.begin_call(self.run_id, self.attempt, self.identity, self.capability,
                                self.digest, self.idempotency_key)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[int]:
        return db.begin_call_sql(self, piped)


@dataclass(frozen=True)
class CommitCall(Write[SlotRecord]):
    """Insert the slot if absent and mark the call committed (see `Store.commit_call`); its
    result is the slot as stored."""

    operation: ClassVar[str] = "commit_call"
    held: ClassVar[bool] = True

    call_id: int
    slot: SlotRecord
    event: AuditEvent | None = None
    resolve_pending: bool = False

    def apply(self, store: BlockingWrites) -> SlotRecord:
        return store.commit_call(self.call_id, self.slot, event=self.event,
                                 resolve_pending=self.resolve_pending)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[SlotRecord]:
        return db.commit_call_sql(self, piped)


@dataclass(frozen=True)
class FailCall(Write[None]):
    """Mark a pending call failed, with the error its provider gave."""

    operation: ClassVar[str] = "fail_call"
    held: ClassVar[bool] = True

    call_id: int
    error: dict[str, Any]

    def apply(self, store: BlockingWrites) -> None:
        store.fail_call(self.call_id, self.error)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[None]:
        return db.fail_call_sql(self, piped)


@dataclass(frozen=True)
class AppendEvent(Write[int]):
    """Append one event to the run's log; its result is the event's seq."""

    operation: ClassVar[str] = "append_event"
    held: ClassVar[bool] = True

    run_id: str
    kind: str
    data: dict[str, Any]

    def apply(self, store: BlockingWrites) -> int:
        return store.append_event(self.run_id, self.kind, self.data)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[int]:
        return db.append_event_sql(self, piped)


@dataclass(frozen=True)
class AppendEvents(Write[list[int]]):
    """Append `(kind, data)` events in order, all or nothing; its result is their seqs."""

    operation: ClassVar[str] = "append_events"
    held: ClassVar[bool] = True

    run_id: str
    events: list[AuditEvent] = field(default_factory=list)

    def apply(self, store: BlockingWrites) -> list[int]:
        return store.append_events(self.run_id, self.events)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[list[int]]:
        return db.append_events_sql(self, piped)


@dataclass(frozen=True)
class Decide(Write[Any]):
    """Record a decision (a race's winner) if absent; its result is the stored value."""

    operation: ClassVar[str] = "decide"

    run_id: str
    key: str
    value: Any

    def apply(self, store: BlockingWrites) -> Any:
        return store.decide(self.run_id, self.key, self.value)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[Any]:
        return db.decide_sql(self, piped)


@dataclass(frozen=True)
class PutCertificate(Write[None]):
    """Store an attempt's certificate."""

    operation: ClassVar[str] = "put_certificate"

    run_id: str
    attempt: int
    certificate: dict[str, Any]

    def apply(self, store: BlockingWrites) -> None:
        store.put_certificate(self.run_id, self.attempt, self.certificate)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[None]:
        return db.put_certificate_sql(self, piped)


@dataclass(frozen=True)
class FinishAttempt(Write[AttemptRecord]):
    """Record how an attempt ended; its result is the attempt as stored."""

    operation: ClassVar[str] = "finish_attempt"

    run_id: str
    number: int
    status: str
    gate: dict[str, Any] | None = None
    invoked: list[str] | None = None
    orphans: list[str] | None = None
    result: Any = None
    error: dict[str, Any] | None = None
    stats: dict[str, Any] | None = None

    def apply(self, store: BlockingWrites) -> AttemptRecord:
        return store.finish_attempt(self.run_id, self.number, status=self.status,
                                    gate=self.gate, invoked=self.invoked, orphans=self.orphans,
                                    result=self.result, error=self.error, stats=self.stats)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[AttemptRecord]:
        return db.finish_attempt_sql(self, piped)


@dataclass(frozen=True)
class SetRunStatus(Write[None]):
    """Set a run's status."""

    operation: ClassVar[str] = "set_run_status"

    run_id: str
    status: str

    def apply(self, store: BlockingWrites) -> None:
        store.set_run_status(self.run_id, self.status)

    def sql(self, db: SqlWrites, piped: bool) -> SqlForm[None]:
        return db.set_run_status_sql(self, piped)


WRITES: tuple[type[Write[Any]], ...] = (BeginCall, CommitCall, FailCall, AppendEvent,
                                        AppendEvents, Decide, PutCertificate, FinishAttempt,
                                        SetRunStatus)


def check_write(write: object) -> None:
    """TypeError, saying what to pass, for anything `Store.submit` does not take."""
    if not isinstance(write, Write):
        raise TypeError(f"Store.submit takes a write ({', '.join(w.__name__ for w in WRITES)} "
                        f"from frostline.store.writes), not {type(write).__name__}")
