"""The audit trail of one attempt: every denial, replay, divergence and repeat is an event.

Events are settled writes (see `frostline.runtime.settlement`): the reply does not wait for
them, and a failed one stops the run. Events that precede no effect of their own are the
exception to one event per write: a replay's event, and the events a caller notes (a graph
run's ledger), are buffered and written in a batch of up to `REPLAY_BATCH` — always queued
before any later event, attempt record or commit, and by the broker's drain at the latest — so
the log holds every one of them, in order, and each is durable before the next effect. (An
execution's event rides in its commit's transaction; the dispatch queues it, after the
buffered events.)
"""

from __future__ import annotations

from typing import Any

from frostline.contract.jsonshape import storable_copy
from frostline.runtime.settlement import Settlement
from frostline.store.writes import AppendEvent, AppendEvents

# Buffered events written per transaction at most. A replay has no effect to make durable, so
# its audit row may wait for company; it never waits past the next other event, the next
# attempt record, or drain().
REPLAY_BATCH = 256


class AuditTrail:
    """Queues the audit events of one attempt in order, batching those that precede no effect.

    Example::

        trail = AuditTrail(settlement, "run-1", 1)
        trail.replay("orchestrate/#0@:0", "echo", digest, committed_in=1)  # buffered
        trail.event("denied", err.to_dict())  # queued after the buffered replay
    """

    def __init__(self, settlement: Settlement, run_id: str, attempt: int) -> None:
        self._settlement = settlement
        self._run_id = run_id
        self._attempt = attempt
        self._buffer: list[tuple[str, dict[str, Any]]] = []  # events waiting for company

    def event(self, kind: str, data: dict[str, Any]) -> None:
        """Append an audit event after the replays buffered before it (queue order). What it
        quotes (a provider's message, a script's error) is kept storable (`storable_copy`)."""
        self.flush()
        self._settlement.settle(self._settlement.stops_on_failure(f"event {kind}"),
                                AppendEvent(self._run_id, kind,
                                            storable_copy({"attempt": self._attempt, **data})))

    def replay(self, identity: str, capability: str, digest: str, committed_in: int,
               moved_from: str | None = None) -> None:
        """Buffer the event of a replay (of a rebound slot: `moved_from`, the committed
        identity it replays); a full batch is queued at once."""
        data: dict[str, Any] = {"attempt": self._attempt, "identity": identity,
                                "capability": capability, "digest": digest,
                                "committed_in": committed_in}
        if moved_from is not None:
            data["moved_from"] = moved_from
        self.note("replay", data)

    def note(self, kind: str, data: dict[str, Any]) -> None:
        """Buffer an event that precedes no effect of its own, as given (`data` as is); it is
        queued with the next batch, in order. A full batch is queued at once."""
        self._buffer.append((kind, data))
        if len(self._buffer) >= REPLAY_BATCH:
            self.flush()

    def flush(self) -> None:
        """Queue the buffered events, in order, ahead of any write queued after."""
        if self._buffer:
            batch, self._buffer = self._buffer, []
            self._settlement.settle(self._settlement.stops_on_failure("buffered events"),
                                    AppendEvents(self._run_id, batch))

    def buffered(self) -> bool:
        """Whether buffered events wait to be queued."""
        return bool(self._buffer)
