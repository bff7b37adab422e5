"""What a new attempt finds left behind by a process that died: attempts still marked running,
and calls recorded as pending that never committed. Shared by script runs and graph runs, which
both hold the run lock while they call these. An attempt that ends failed checks the same
thing about itself (`left_unresolved`): its own calls that a commit failure left pending. Also
how an attempt is closed when it cannot be finished as it ran: a write the store refused for
good, a job the queue gave up on."""

from __future__ import annotations

import logging
from typing import Any

from frostline.capabilities.catalog import Catalog
from frostline.capabilities.provider import Provider
from frostline.contract.identity import Identity
from frostline.contract.jsonshape import storable_copy
from frostline.contract.prefix import Prefix
from frostline.contract.records import CallRecord, CallStatus
from frostline.contract.status import AttemptStatus, RunStatus
from frostline.errors import (
    AttemptUnresolved,
    HostCrashed,
    StoreRefused,
    StoreUnavailable,
    ValueNotStorable,
)
from frostline.store.base import Store

log = logging.getLogger("frostline.execute")


def close_crashed_attempts(store: Store, run_id: str) -> None:
    """Mark as failed every attempt still 'running': under the run lock, its process is gone."""
    fail_open_attempts(store, run_id, HostCrashed(
        "the process running this attempt stopped before finishing it; any call it "
        "dispatched without a commit is reported as unresolved").to_dict(),
        event="attempt_crashed")


def fail_open_attempts(store: Store, run_id: str, error: dict[str, Any], *,
                       event: str = "attempt_finished", run_status: str | None = None
                       ) -> list[int]:
    """Mark every attempt of the run still 'running' failed with `error` (the caller holds
    the run lock, or knows nothing else runs it), with an `event` each; with `run_status`,
    the run's status too. Returns the numbers of the attempts it closed."""
    closed = []
    for attempt in store.list_attempts(run_id):
        if attempt.status == AttemptStatus.RUNNING:
            store.finish_attempt(run_id, attempt.number, status=AttemptStatus.FAILED, error=error)
            data: dict[str, Any] = {"attempt": attempt.number}
            if event != "attempt_crashed":
                data.update(status=AttemptStatus.FAILED, executed=0, replayed=0, error=error)
            store.append_event(run_id, event, data)
            closed.append(attempt.number)
    if closed and run_status is not None:
        store.set_run_status(run_id, run_status)
    return closed


def unresolved_calls(calls: list[CallRecord], prefix: Prefix) -> dict[Identity, CallRecord]:
    """Pending calls whose identity never committed (the latest pending call per identity)."""
    out: dict[Identity, CallRecord] = {}
    for c in calls:
        if c.status is CallStatus.PENDING and c.identity not in prefix:
            seen = out.get(c.identity)
            if seen is None or c.call_id > seen.call_id:
                out[c.identity] = c
    return out


def fails_closed(catalog: Catalog, capability: str) -> bool:
    """Side-effecting and not retry-safe; an unknown capability is assumed the worst."""
    cap = catalog.get(capability)
    return True if cap is None else cap.effect == "side_effecting"


def left_unresolved(store: Store, run_id: str, number: int, catalog: Catalog,
                    providers: Provider) -> AttemptUnresolved | None:
    """Side-effecting calls attempt `number` dispatched and never committed (a commit the
    store did not take, a crash of the call's write), whose provider cannot dedupe a retry:
    the next attempt would be refused until each is reconciled. None when there are none, or
    when the store cannot say (the attempt stays failed and its job is handed back)."""
    for tries_left in (1, 0):  # a connection the database ended fails one read
        try:
            calls = [c for c in store.unresolved_calls(run_id) if c.attempt == number
                     and fails_closed(catalog, c.capability)
                     and not providers.honours_idempotency_keys(c.capability)
                     and store.get_slot(run_id, c.identity) is None]
            break
        except StoreUnavailable:
            if not tries_left:
                return None
    if not calls:
        return None
    idents = sorted(str(c.identity) for c in calls)
    return AttemptUnresolved(
        f"{len(idents)} side-effecting call(s) were dispatched and never committed: "
        f"{', '.join(idents)}. The provider may have run them; reconcile each with "
        f"'frostline reconcile {run_id} IDENTITY --result @FILE' (the result it produced) or "
        "'--abandon' (it may run once more), then submit the run again", identities=idents)


def fail_refused(store: Store, run_id: str, exc: StoreRefused | ValueNotStorable
                 ) -> tuple[int | None, dict[str, Any]]:
    """A write of an attempt was refused for good (a value no store holds, a data error):
    the open attempt fails with that error, instead of staying open for a retry that would be
    refused again; whatever the refused write held was not stored. Returns the attempt's
    number (None if none was open, or the store failed too) and the error recorded."""
    log.error("run %s: a write was refused (%s): %s", run_id, exc.code, exc.message)
    error = storable_copy(exc.to_dict())
    try:
        closed = fail_open_attempts(store, run_id, error, run_status=RunStatus.FAILED)
    except StoreUnavailable as again:
        log.error("run %s: the refused attempt could not be closed either: %s", run_id,
                  again.message)
        closed = []
    return (closed[-1] if closed else None), error
