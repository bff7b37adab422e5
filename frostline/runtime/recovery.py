"""What a new attempt finds left behind by a process that died: attempts still marked running,
and calls recorded as pending that never committed. Shared by script runs and graph runs, which
both hold the run lock while they call these. An attempt that ends failed checks the same
thing about itself (`left_unresolved`): its own calls that a commit failure left pending."""

from __future__ import annotations

from frostline.capabilities.catalog import Catalog
from frostline.capabilities.provider import Provider
from frostline.contract.identity import Identity
from frostline.contract.prefix import Prefix
from frostline.contract.records import CallRecord, CallStatus
from frostline.errors import AttemptUnresolved, StoreUnavailable
from frostline.store.base import Store


def close_crashed_attempts(store: Store, run_id: str) -> None:
    """Mark as failed every attempt still 'running': under the run lock, its process is gone."""
    for attempt in store.list_attempts(run_id):
        if attempt.status == "running":
            store.finish_attempt(run_id, attempt.number, status="failed", error={
                "type": "HostCrashed", "code": "crashed",
                "message": "the process running this attempt stopped before finishing it; any "
                           "call it dispatched without a commit is reported as unresolved"})
            store.append_event(run_id, "attempt_crashed", {"attempt": attempt.number})


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
