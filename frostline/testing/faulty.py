"""A store that fails on purpose, for fail-closed tests.

`FaultyStore` wraps a real store and raises StoreUnavailable from every read and/or write, the
way a lost database would, so a test can prove that a component stops (and dispatches nothing)
when the store does not answer. The flags are plain attributes: a test may let a run commit a
few calls, then turn the faults on. Writes the runtime queues without waiting
(`submit`) go through the same methods, on the store's ordered write thread, so a
subclass that overrides one of them sees those writes too.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar

from frostline.contract.identity import Identity
from frostline.contract.records import AttemptRecord, CallRecord, Event, RunRecord, SlotRecord
from frostline.contract.waits import AnswerRecord, WaitRecord
from frostline.errors import StoreUnavailable
from frostline.store.base import AttemptHead, Store
from frostline.store.principals import TokenRecord
from frostline.store.writes import Write, check_write

T = TypeVar("T")


class FaultyStore(Store):
    """Wrap `inner`; raise StoreUnavailable on every read (`fail_reads`) and write (`fail_writes`).

    Usage::

        store = FaultyStore(open_store(url), fail_reads=True, fail_writes=False)
        store.list_slots("r1")   # raises StoreUnavailable
    """

    _worker_guard = threading.Lock()
    _worker: tuple[int, ThreadPoolExecutor] | None = None  # (its process, the write thread)

    def __init__(self, inner: Store, fail_reads: bool = True, fail_writes: bool = True) -> None:
        self.inner = inner
        self.url = inner.url
        self.fail_reads = fail_reads
        self.fail_writes = fail_writes
        self.faults = 0  # how many operations were refused

    def _guard(self, operation: str, write: bool, fn: Callable[[], T]) -> T:
        if self.fail_writes if write else self.fail_reads:
            self.faults += 1
            kind = "write" if write else "read"
            raise StoreUnavailable(
                f"faulty store: injected {kind} failure during {operation}",
                backend="faulty", operation=operation,
            ) from OSError(f"injected {kind} fault")
        return fn()

    def _r(self, operation: str, fn: Callable[[], T]) -> T:
        return self._guard(operation, False, fn)

    def _w(self, operation: str, fn: Callable[[], T]) -> T:
        return self._guard(operation, True, fn)

    # runs
    def create_run(self, name: str, envelope: dict[str, Any], *, owner: str | None = None,
                   kind: str = "script", authoring: bool = False) -> RunRecord:
        return self._w("create_run", lambda: self.inner.create_run(
            name, envelope, owner=owner, kind=kind, authoring=authoring))

    def get_run(self, run_id: str) -> RunRecord | None:
        return self._r("get_run", lambda: self.inner.get_run(run_id))

    def local_files(self) -> tuple[Path, ...]:
        return self.inner.local_files()

    def find_run(self, owner: str, name: str) -> RunRecord | None:
        return self._r("find_run", lambda: self.inner.find_run(owner, name))

    def list_runs(self, *, owner: str | None = None, limit: int = 100) -> list[RunRecord]:
        return self._r("list_runs", lambda: self.inner.list_runs(owner=owner, limit=limit))

    def list_authoring(self, *, limit: int = 1000) -> list[RunRecord]:
        return self._r("list_authoring", lambda: self.inner.list_authoring(limit=limit))

    def promote_authoring(self, run_id: str) -> RunRecord:
        return self._w("promote_authoring", lambda: self.inner.promote_authoring(run_id))

    def discard_authoring(self, run_id: str) -> bool:
        return self._w("discard_authoring", lambda: self.inner.discard_authoring(run_id))

    def set_run_status(self, run_id: str, status: str) -> None:
        self._w("set_run_status", lambda: self.inner.set_run_status(run_id, status))

    # attempts
    def start_attempt(self, run_id: str, *, source: str, annotated: str,
                      report: dict[str, Any], args: Any = None,
                      catalog_digest: str | None = None) -> AttemptRecord:
        return self._w("start_attempt", lambda: self.inner.start_attempt(
            run_id, source=source, annotated=annotated, report=report, args=args,
            catalog_digest=catalog_digest))

    def finish_attempt(self, run_id: str, number: int, *, status: str,
                       gate: dict[str, Any] | None = None, invoked: list[str] | None = None,
                       orphans: list[str] | None = None, result: Any = None,
                       error: dict[str, Any] | None = None,
                       stats: dict[str, Any] | None = None) -> AttemptRecord:
        return self._w("finish_attempt", lambda: self.inner.finish_attempt(
            run_id, number, status=status, gate=gate, invoked=invoked, orphans=orphans,
            result=result, error=error, stats=stats))

    def list_attempts(self, run_id: str) -> list[AttemptRecord]:
        return self._r("list_attempts", lambda: self.inner.list_attempts(run_id))

    def get_attempt(self, run_id: str, number: int) -> AttemptRecord | None:
        return self._r("get_attempt", lambda: self.inner.get_attempt(run_id, number))

    def list_attempt_heads(self, run_id: str, inline_bytes: int) -> list[AttemptHead]:
        return self._r("list_attempt_heads",
                       lambda: self.inner.list_attempt_heads(run_id, inline_bytes))

    # slots
    def list_slots(self, run_id: str) -> list[SlotRecord]:
        return self._r("list_slots", lambda: self.inner.list_slots(run_id))

    def list_slot_digests(self, run_id: str) -> list[SlotRecord]:
        return self._r("list_slot_digests", lambda: self.inner.list_slot_digests(run_id))

    def get_slot(self, run_id: str, identity: Identity) -> SlotRecord | None:
        return self._r("get_slot", lambda: self.inner.get_slot(run_id, identity))

    def list_slot_usages(self, run_id: str) -> list[SlotRecord]:
        return self._r("list_slot_usages", lambda: self.inner.list_slot_usages(run_id))

    def slots_mentioning(self, run_id: str, text: str) -> list[Identity]:
        return self._r("slots_mentioning", lambda: self.inner.slots_mentioning(run_id, text))

    # catalogs
    def put_catalog(self, entries: list[dict[str, Any]]) -> str:
        return self._w("put_catalog", lambda: self.inner.put_catalog(entries))

    def get_catalog(self, digest: str) -> list[dict[str, Any]] | None:
        return self._r("get_catalog", lambda: self.inner.get_catalog(digest))

    # call attempts
    def begin_call(self, run_id: str, attempt: int, identity: Identity, capability: str,
                   digest: str, idempotency_key: str | None = None) -> int:
        return self._w("begin_call", lambda: self.inner.begin_call(
            run_id, attempt, identity, capability, digest, idempotency_key))

    def commit_call(self, call_id: int, slot: SlotRecord, *,
                    event: tuple[str, dict[str, Any]] | None = None,
                    resolve_pending: bool = False) -> SlotRecord:
        return self._w("commit_call", lambda: self.inner.commit_call(
            call_id, slot, event=event, resolve_pending=resolve_pending))

    def fail_call(self, call_id: int, error: dict[str, Any]) -> None:
        self._w("fail_call", lambda: self.inner.fail_call(call_id, error))

    def list_calls(self, run_id: str) -> list[CallRecord]:
        return self._r("list_calls", lambda: self.inner.list_calls(run_id))

    def unresolved_calls(self, run_id: str) -> list[CallRecord]:
        return self._r("unresolved_calls", lambda: self.inner.unresolved_calls(run_id))

    def reconcile_call(self, run_id: str, identity: Identity, *, abandon: bool,
                       result: Any = None, usage: dict[str, Any] | None = None,
                       attempt: int | None = None) -> CallRecord:
        return self._w("reconcile_call", lambda: self.inner.reconcile_call(
            run_id, identity, abandon=abandon, result=result, usage=usage, attempt=attempt))

    # artifacts
    def put_artifact(self, data: bytes, mime: str, *, owner: str | None = None) -> str:
        return self._w("put_artifact", lambda: self.inner.put_artifact(data, mime, owner=owner))

    def get_artifact(self, ref: str, *, owner: str | None = None) -> tuple[bytes, str] | None:
        return self._r("get_artifact", lambda: self.inner.get_artifact(ref, owner=owner))

    # certificates, decisions, events
    def put_certificate(self, run_id: str, attempt: int, certificate: dict[str, Any]) -> None:
        self._w("put_certificate", lambda: self.inner.put_certificate(run_id, attempt,
                                                                      certificate))

    def list_certificates(self, run_id: str) -> list[dict[str, Any]]:
        return self._r("list_certificates", lambda: self.inner.list_certificates(run_id))

    def latest_certificate(self, run_id: str) -> Any:
        return self._r("latest_certificate", lambda: self.inner.latest_certificate(run_id))

    def put_rebinding(self, run_id: str, attempt: int, rows: list[dict[str, str]]) -> None:
        self._w("put_rebinding", lambda: self.inner.put_rebinding(run_id, attempt, rows))

    def list_rebindings(self, run_id: str, attempt: int | None = None) -> list[dict[str, Any]]:
        return self._r("list_rebindings", lambda: self.inner.list_rebindings(run_id, attempt))

    def decide(self, run_id: str, key: str, value: Any) -> Any:
        return self._w("decide", lambda: self.inner.decide(run_id, key, value))

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int:
        return self._w("append_event", lambda: self.inner.append_event(run_id, kind, data))

    def append_events(self, run_id: str, events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        return self._w("append_events", lambda: self.inner.append_events(run_id, events))

    def submit(self, write: Write[T]) -> Future[T]:
        """Run the write's blocking method (`write.apply`) on this store's one write thread,
        in submission order. Not the inner store's queue: the write must pass this store's
        own (faulty, or a subclass's overridden) method."""
        check_write(write)
        with self._worker_guard:
            if self._worker is None or self._worker[0] != os.getpid():  # a forked child
                self._worker = (os.getpid(),
                                ThreadPoolExecutor(1, thread_name_prefix="frostline-write"))
            return self._worker[1].submit(write.apply, self)

    def list_events(self, run_id: str, *, after: int = 0, limit: int = 10000) -> list[Event]:
        return self._r("list_events", lambda: self.inner.list_events(run_id, after=after,
                                                                     limit=limit))

    def event_cursor(self, run_id: str, position: int) -> tuple[int, int]:
        return self._r("event_cursor", lambda: self.inner.event_cursor(run_id, position))

    # waits
    def settle_wait(self, wait: WaitRecord, now: float) -> tuple[WaitRecord, AnswerRecord | None]:
        return self._w("settle_wait", lambda: self.inner.settle_wait(wait, now))

    def answer_wait(self, run_id: str, identity: str, value: Any, *, by: str,
                    kind: str = "approval",
                    authorize: Callable[[WaitRecord], None] | None = None) -> AnswerRecord:
        return self._w("answer_wait", lambda: self.inner.answer_wait(
            run_id, identity, value, by=by, kind=kind, authorize=authorize))

    def send_signal(self, run_id: str, name: str, body: Any, *,
                    by: str = "signal") -> dict[str, Any]:
        return self._w("send_signal", lambda: self.inner.send_signal(run_id, name, body, by=by))

    def list_waits(self, run_id: str) -> list[tuple[WaitRecord, AnswerRecord | None]]:
        return self._r("list_waits", lambda: self.inner.list_waits(run_id))

    def open_approvals(self, limit: int = 1000) -> list[tuple[str, str, WaitRecord]]:
        return self._r("open_approvals", lambda: self.inner.open_approvals(limit))

    def waiting_runs(self, limit: int = 1000) -> list[str]:
        return self._r("waiting_runs", lambda: self.inner.waiting_runs(limit))

    # principals
    def create_token(self, principal: str, *, expires_in_s: float | None = None,
                     roles: Iterable[str] | None = None) -> str:
        return self._w("create_token", lambda: self.inner.create_token(
            principal, expires_in_s=expires_in_s, roles=roles))

    def principal_for_token(self, token: str) -> str | None:
        return self._r("principal_for_token", lambda: self.inner.principal_for_token(token))

    def authenticate(self, token: str) -> TokenRecord | None:
        return self._r("authenticate", lambda: self.inner.authenticate(token))

    def list_tokens(self) -> list[TokenRecord]:
        return self._r("list_tokens", self.inner.list_tokens)

    def revoke_tokens(self, target: str) -> list[TokenRecord]:
        return self._w("revoke_tokens", lambda: self.inner.revoke_tokens(target))

    # concurrency
    def run_lock(self, run_id: str) -> AbstractContextManager[None]:
        # Taking a run lock is a write to the store's coordination state.
        return self._w("run_lock", lambda: self.inner.run_lock(run_id))

    def close(self) -> None:
        self.inner.close()
