"""What a new attempt finds left behind by a process that died: attempts still marked running,
and calls recorded as pending that never committed. Shared by script runs and graph runs, which
both hold the run lock while they call these."""

from __future__ import annotations

from frostline.contract.identity import Identity
from frostline.contract.prefix import Prefix
from frostline.contract.records import CallRecord, CallStatus
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
