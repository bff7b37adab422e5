"""The run store interface. Two backends implement it: SQLite (default) and PostgreSQL.

Invariants every backend keeps:
- a slot is inserted if absent on (run, σ, π, ω) and is never updated or deleted;
- `begin_call` returns only after the attempt record is durable (it precedes every dispatch);
- concurrent writes from several threads are group-committed: they share one transaction and
  one fsync, and each caller returns only once its own write is durable;
- every driver error surfaces as StoreUnavailable (fail closed), chained with `from`; a refusal
  for good (a data error) as its subclass StoreRefused;
- a value no store can hold (a NUL, a lone surrogate, too deep) is refused with
  ValueNotStorable before the database sees it, the same on every backend.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from frostline.contract.identity import Identity
from frostline.contract.records import AttemptRecord, CallRecord, Event, RunRecord, SlotRecord
from frostline.contract.waits import AnswerRecord, WaitRecord
from frostline.store.jsontext import json_text
from frostline.store.principals import TokenRecord
from frostline.store.writes import (
    AppendEvent,
    AppendEvents,
    BeginCall,
    CommitCall,
    Decide,
    FailCall,
    FinishAttempt,
    PutCertificate,
    SetRunStatus,
    Write,
)

T = TypeVar("T")


@dataclass(frozen=True)
class AttemptHead:
    """An attempt as a run's page lists it: `result_bytes` is set (and the record's result
    is None) when its result was too large to inline; read it with `get_attempt`."""

    record: AttemptRecord
    result_bytes: int | None = None


class Store(abc.ABC):
    """Persistent state of runs: runs, attempts, slots, call attempts, artifacts, events."""

    url: str

    # runs ---------------------------------------------------------------------------------------
    @abc.abstractmethod
    def create_run(self, name: str, envelope: dict[str, Any], *, owner: str | None = None,
                   kind: str = "script", authoring: bool = False) -> RunRecord:
        """Create the run `name` of `owner` (default: the local principal); raise RunExists
        if that owner already has a run of that name. The returned record's `run_id` is the
        store key every later call takes. With `authoring`, the row only holds the name while
        a model writes the run's first script (status `authoring`, listed nowhere) until
        `promote_authoring` or `discard_authoring`."""

    @abc.abstractmethod
    def get_run(self, run_id: str) -> RunRecord | None:
        """The run whose store key is `run_id` (the local principal's runs: their name)."""

    @abc.abstractmethod
    def find_run(self, owner: str, name: str) -> RunRecord | None:
        """The run `owner` named `name`, or None: names are unique per principal."""

    @abc.abstractmethod
    def list_runs(self, *, owner: str | None = None, limit: int = 100) -> list[RunRecord]:
        """Runs newest first (`owner`'s only, if given); runs being authored are not runs
        yet and are not listed."""

    @abc.abstractmethod
    def list_authoring(self, *, limit: int = 1000) -> list[RunRecord]:
        """The rows that hold a name while a model writes their first script, oldest first."""

    @abc.abstractmethod
    def promote_authoring(self, run_id: str) -> RunRecord:
        """A run being authored becomes a run (`created`); RunNotFound if it is not one
        being authored (it was removed meanwhile)."""

    @abc.abstractmethod
    def discard_authoring(self, run_id: str) -> bool:
        """End the authoring of `run_id` with no run, in one transaction: its row is removed
        if nothing was recorded under it (no attempt, slot, call, wait, signal, …), and True
        returned; if something was (someone addressed it), it is kept and marked `failed`,
        so its owner sees what is there, and False returned (False too when it is no longer
        being authored: a run, or gone)."""

    def set_run_status(self, run_id: str, status: str) -> None:
        """`SetRunStatus`, waited for."""
        self.submit(SetRunStatus(run_id, status)).result()

    # attempts -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def start_attempt(self, run_id: str, *, source: str, annotated: str,
                      report: dict[str, Any], args: Any = None,
                      catalog_digest: str | None = None) -> AttemptRecord:
        """Open attempt number max+1 with status 'running', recording the args it runs with
        and the digest of the catalog it runs under (see `put_catalog`)."""

    def finish_attempt(self, run_id: str, number: int, *, status: str,
                       gate: dict[str, Any] | None = None, invoked: list[str] | None = None,
                       orphans: list[str] | None = None, result: Any = None,
                       error: dict[str, Any] | None = None,
                       stats: dict[str, Any] | None = None) -> AttemptRecord:
        """`FinishAttempt`, waited for: the attempt as stored."""
        return self.submit(FinishAttempt(run_id, number, status=status, gate=gate,
                                         invoked=invoked, orphans=orphans, result=result,
                                         error=error, stats=stats)).result()

    @abc.abstractmethod
    def list_attempts(self, run_id: str) -> list[AttemptRecord]: ...

    def get_attempt(self, run_id: str, number: int) -> AttemptRecord | None:
        return next((a for a in self.list_attempts(run_id) if a.number == number), None)

    def list_attempt_heads(self, run_id: str, inline_bytes: int) -> list[AttemptHead]:
        """The run's attempts for a page that shows them all: a result of more than
        `inline_bytes` bytes of JSON is left out (None) and its size given instead, so a
        read of a run holds no more than `inline_bytes` per attempt. SQL stores never read
        what they leave out."""
        heads = []
        for a in self.list_attempts(run_id):
            size = len(json_text(a.result, "result").encode())
            heads.append(AttemptHead(replace(a, result=None), size) if size > inline_bytes
                         else AttemptHead(a, None))
        return heads

    # slots: the prefix --------------------------------------------------------------------------
    @abc.abstractmethod
    def list_slots(self, run_id: str) -> list[SlotRecord]:
        """Every committed slot of the run, sorted by (site, path, occurrence)."""

    def list_slot_digests(self, run_id: str) -> list[SlotRecord]:
        """`list_slots` for a certificate check: a slot whose digests the store recorded at
        commit time may come without its result and usage (None and {}); one without
        recorded digests comes with its result. SQL stores read no more than that."""
        return self.list_slots(run_id)

    def list_slot_usages(self, run_id: str) -> list[SlotRecord]:
        """`list_slots` without results (None): what a run's spend is computed from."""
        return [replace(s, result=None) for s in self.list_slots(run_id)]

    def slots_mentioning(self, run_id: str, text: str) -> list[Identity]:
        """The identities of the run's slots whose result's JSON contains `text` (e.g.
        ``sha256:`` for artifact refs), to be read one at a time with `get_slot`."""
        return [s.identity for s in self.list_slots(run_id)
                if text in json_text(s.result, "result")]

    @abc.abstractmethod
    def get_slot(self, run_id: str, identity: Identity) -> SlotRecord | None: ...

    # call attempts ------------------------------------------------------------------------------
    def begin_call(self, run_id: str, attempt: int, identity: Identity, capability: str,
                   digest: str, idempotency_key: str | None = None) -> int:
        """Durably record a pending dispatch; returns the call id (`BeginCall`, waited for)."""
        return self.submit(BeginCall(run_id, attempt, identity, capability, digest,
                                     idempotency_key)).result()

    def commit_call(self, call_id: int, slot: SlotRecord, *,
                    event: tuple[str, dict[str, Any]] | None = None,
                    resolve_pending: bool = False) -> SlotRecord:
        """Insert the slot if absent and mark the call committed, in one transaction.

        `event`, a `(kind, data)` pair, is appended to the run's events in that same
        transaction: the audit row is durable exactly when the commit is, and costs no
        transaction of its own. With `resolve_pending`, other calls of the same identity still
        pending from a crash (this call retried them: same idempotency key, or a read-only
        re-execution) are marked reconciled in that transaction too, with a `call.reconciled`
        event. Returns the stored slot (the existing one when the identity was already
        committed). `CommitCall`, waited for.
        """
        return self.submit(CommitCall(call_id, slot, event=event,
                                      resolve_pending=resolve_pending)).result()

    def fail_call(self, call_id: int, error: dict[str, Any]) -> None:
        """Mark a pending call failed (`FailCall`, waited for)."""
        self.submit(FailCall(call_id, error)).result()

    @abc.abstractmethod
    def list_calls(self, run_id: str) -> list[CallRecord]: ...

    def unresolved_calls(self, run_id: str) -> list[CallRecord]:
        from frostline.contract.records import CallStatus

        return [c for c in self.list_calls(run_id) if c.status is CallStatus.PENDING]

    @abc.abstractmethod
    def reconcile_call(self, run_id: str, identity: Identity, *, abandon: bool,
                       result: Any = None, usage: dict[str, Any] | None = None,
                       attempt: int | None = None) -> CallRecord:
        """Resolve the pending call of `identity`: abandon it, or write back `result` as its slot."""

    # artifacts ----------------------------------------------------------------------------------
    @abc.abstractmethod
    def put_artifact(self, data: bytes, mime: str, *, owner: str | None = None) -> str:
        """Store bytes once, content-addressed; returns 'sha256:<hex>'. With `owner`, the
        principal is recorded as one who produced (or uploaded) these bytes."""

    @abc.abstractmethod
    def get_artifact(self, ref: str, *, owner: str | None = None) -> tuple[bytes, str] | None:
        """The bytes and mime type of `ref`, or None. With `owner`, only an artifact that
        principal produced: another principal's artifact is None, like a missing one (refs of
        local images derive from prompt, size and seed, so a ref is no secret)."""

    # catalogs -----------------------------------------------------------------------------------
    @abc.abstractmethod
    def put_catalog(self, entries: list[dict[str, Any]]) -> str:
        """Store catalog entries once, content-addressed; returns their digest
        (`frostline.capabilities.catalog.catalog_digest`)."""

    @abc.abstractmethod
    def get_catalog(self, digest: str) -> list[dict[str, Any]] | None: ...

    # certificates, decisions, events ------------------------------------------------------------
    def put_certificate(self, run_id: str, attempt: int, certificate: dict[str, Any]) -> None:
        """`PutCertificate`, waited for."""
        self.submit(PutCertificate(run_id, attempt, certificate)).result()

    @abc.abstractmethod
    def list_certificates(self, run_id: str) -> list[dict[str, Any]]: ...

    def latest_certificate(self, run_id: str) -> Any:
        """The body of the run's latest certificate (highest attempt; of those, the last
        written), as stored, or None. SQL stores fetch that one row alone."""
        latest: Any = None
        for body in self.list_certificates(run_id):
            attempt = body.get("attempt") if isinstance(body, dict) else None
            best = latest.get("attempt") if isinstance(latest, dict) else None
            if latest is None or not isinstance(attempt, int) or not isinstance(best, int) \
                    or attempt >= best:
                latest = body
        return latest

    # rebindings (issue 30) -----------------------------------------------------------------
    @abc.abstractmethod
    def put_rebinding(self, run_id: str, attempt: int, rows: list[dict[str, str]]) -> None:
        """Record the rebinding of `attempt` (rows of {identity, bound_to}), all or nothing;
        a second binding of one new identity in one attempt is refused (StoreUnavailable is
        not raised for that: DefinitionError)."""

    @abc.abstractmethod
    def list_rebindings(self, run_id: str, attempt: int | None = None) -> list[dict[str, Any]]:
        """The rebinding rows of one attempt (or of every attempt), each {attempt, identity,
        bound_to}, ordered by attempt and identity."""

    def decide(self, run_id: str, key: str, value: Any) -> Any:
        """Record a decision (e.g. a race winner) if absent; return the stored value
        (`Decide`, waited for)."""
        return self.submit(Decide(run_id, key, value)).result()

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int:
        """Append one event; its seq (`AppendEvent`, waited for)."""
        return self.submit(AppendEvent(run_id, kind, data)).result()

    def append_events(self, run_id: str, events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        """Append `(kind, data)` events in order, in one transaction; return their seqs.

        All or nothing: a batch that cannot be stored leaves no event of it behind.
        `AppendEvents`, waited for.
        """
        return self.submit(AppendEvents(run_id, events)).result()

    @abc.abstractmethod
    def list_events(self, run_id: str, *, after: int = 0, limit: int = 10000) -> list[Event]: ...

    def event_cursor(self, run_id: str, position: int) -> tuple[int, int]:
        """Where the run's `position`-th event is (1 is its first): `(seq, position)`, for
        `list_events(after=seq)` to go on after it. Event seqs are global; clients count a
        run's events from 1 instead, so a cursor tells nothing of other runs. With fewer
        events, the last one's `(seq, count)`; `(0, 0)` for none."""
        seq, seen = 0, 0
        while seen < position:
            batch = self.list_events(run_id, after=seq, limit=min(1000, position - seen))
            if not batch:
                break
            seq, seen = batch[-1].seq, seen + len(batch)
        return seq, seen

    # waits --------------------------------------------------------------------------------------
    @abc.abstractmethod
    def settle_wait(self, wait: WaitRecord, now: float) -> tuple[WaitRecord, AnswerRecord | None]:
        """Record a reached wait (its first reach is kept) and return it with its answer, if
        it has one or can take one now (a kept event, a due timer); one transaction."""

    @abc.abstractmethod
    def answer_wait(self, run_id: str, identity: str, value: Any, *, by: str,
                    kind: str = "approval",
                    authorize: Callable[[WaitRecord], None] | None = None) -> AnswerRecord:
        """Answer a reached wait once (UnknownWait, AlreadyAnswered, RunFinished refuse).
        `authorize` sees the wait inside the answer's transaction and may raise to refuse it
        (who may answer is decided on the wait the answer binds, nothing is written)."""

    @abc.abstractmethod
    def send_signal(self, run_id: str, name: str, body: Any, *,
                    by: str = "signal") -> dict[str, Any]:
        """Keep an event for the run, sent by the principal `by`; delivered to the earliest
        unanswered wait of its name, whose answer records `by`."""

    @abc.abstractmethod
    def list_waits(self, run_id: str) -> list[tuple[WaitRecord, AnswerRecord | None]]: ...

    @abc.abstractmethod
    def open_approvals(self, limit: int = 1000) -> list[tuple[str, str, WaitRecord]]:
        """Unanswered approvals of waiting runs, oldest first: (owner, run name, wait)."""

    @abc.abstractmethod
    def waiting_runs(self, limit: int = 1000) -> list[str]:
        """The keys of runs whose latest attempt ended waiting."""

    # principals ---------------------------------------------------------------------------------
    @abc.abstractmethod
    def create_token(self, principal: str, *, expires_in_s: float | None = None,
                     roles: Iterable[str] | None = None) -> str:
        """Create a bearer token for `principal` with `roles` (None: the default role,
        runner), valid for `expires_in_s` seconds (None: until revoked); stores only its hash
        and public prefix; returns the token."""

    def principal_for_token(self, token: str) -> str | None:
        """The principal of an active token; None for an unknown, revoked or expired one."""
        record = self.authenticate(token)
        return None if record is None else record.principal

    @abc.abstractmethod
    def authenticate(self, token: str) -> TokenRecord | None:
        """The record (principal, roles) of an active token; None for an unknown, revoked or
        expired one."""

    @abc.abstractmethod
    def list_tokens(self) -> list[TokenRecord]:
        """Every token, oldest first, revoked and expired ones included."""

    @abc.abstractmethod
    def revoke_tokens(self, target: str) -> list[TokenRecord]:
        """Revoke the tokens `target` names: all of a principal's (by name), or one (by its
        prefix or whole value). Returns them as now stored, [] when `target` names none;
        DefinitionError when `target` is ambiguous."""

    # writes -------------------------------------------------------------------------------------
    @abc.abstractmethod
    def submit(self, write: Write[T]) -> Future[T]:
        """Start `write` (one of `frostline.store.writes`) and return a future of its result
        at once.

        The future resolves once the write is durable, or with its error (a bad argument
        included); anything but a write is a TypeError (`writes.check_write`). Writes
        submitted from one thread become durable in the order they were submitted. The
        blocking write methods above are their write, submitted and waited for. SQL stores
        queue the write on their group-commit writer, where a write nobody waits for yet may
        be held briefly for company (`Write.held`).
        """

    # concurrency --------------------------------------------------------------------------------
    @abc.abstractmethod
    def run_lock(self, run_id: str) -> AbstractContextManager[None]:
        """Exclusive, cross-process lock on one run; raises RunBusy if another holder has it."""

    @abc.abstractmethod
    def close(self) -> None: ...

    def local_files(self) -> tuple[Path, ...]:
        """The files on this host that hold the store (none for a server database). Nothing
        but the store opens them: closing any descriptor of a SQLite file drops the process's
        POSIX locks on it."""
        return ()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

