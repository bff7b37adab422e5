"""The broker's parts, wired by hand over a real store, for the tests of each part alone.

`Parts` builds what `Broker.__init__` builds — the run stop, the write settlement, the audit
trail, the budget, the counters, the rule and the dispatcher — around an attempt created in
a real store, so a test can drive one part and read the store and the other parts it uses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG
from frostline.capabilities.envelope import Budget, Envelope
from frostline.capabilities.provider import Provider
from frostline.contract.identity import Identity, digest
from frostline.contract.prefix import load_prefix
from frostline.contract.records import SlotRecord
from frostline.providers.local import LocalProviders
from frostline.runtime.audit import AuditTrail
from frostline.runtime.budget import Spend
from frostline.runtime.call import BrokerStats, Call, RunStop
from frostline.runtime.dispatch import Dispatcher
from frostline.runtime.rule import Rule
from frostline.runtime.settlement import Settlement
from frostline.store import Store

SITE = "orchestrate/#0"


def envelope(calls: int = 100, usd: float = 10.0) -> Envelope:
    return Envelope(budget=Budget(usd=usd, calls=calls), concurrency=4, max_fanout=64)


def ident(occurrence: int, path: tuple[int, ...] = ()) -> Identity:
    return Identity(SITE, path, occurrence)


def commit(store: Store, run_id: str, identity: Identity, payload: dict[str, Any],
           result: Any, capability: str = "echo") -> None:
    """Commit `identity` in an attempt of its own, as an earlier attempt would have."""
    attempt = store.start_attempt(run_id, source="#", annotated="#", report={}).number
    h = digest(payload)
    call_id = store.begin_call(run_id, attempt, identity, capability, h, None)
    store.commit_call(call_id, SlotRecord(run_id, identity.site, identity.path,
                                          identity.occurrence, capability, h, result, {},
                                          attempt))


@dataclass
class Parts:
    """One attempt's parts, wired as the broker wires them."""

    store: Store
    run_id: str
    env: Envelope = field(default_factory=envelope)
    providers: Provider = field(default_factory=LocalProviders)
    fail_open: bool = False

    def __post_init__(self) -> None:
        if self.store.get_run(self.run_id) is None:
            self.store.create_run(self.run_id, self.env.to_dict())
        self.attempt = self.store.start_attempt(self.run_id, source="#", annotated="#",
                                                report={}).number
        self.stop = RunStop()
        self.stats = BrokerStats()
        self.writes = Settlement(self.store, self.run_id, self.stop.stop,
                                 fail_open=self.fail_open)
        self.trail = AuditTrail(self.writes, self.run_id, self.attempt)
        self.spend = Spend(0, 0.0, 0)
        self.rule = Rule(run_id=self.run_id, prefix=load_prefix(self.store, self.run_id),
                         catalog=DEFAULT_CATALOG, providers=self.providers, unresolved={},
                         spend=self.spend, stats=self.stats, stop=self.stop, trail=self.trail)
        self.dispatcher = Dispatcher(self.store, self.run_id, self.attempt,
                                     providers=self.providers, writes=self.writes,
                                     trail=self.trail, spend=self.spend, stats=self.stats,
                                     stop=self.stop, fail_open=self.fail_open)

    def call(self, occurrence: int, payload: dict[str, Any], capability: str = "echo") -> Call:
        """A call as admission makes it, counted in the attempt's rows as the broker does."""
        call = Call.of(ident(occurrence), capability, payload)
        self.stats.calls.append(call.row)
        return call

    async def settle_all(self) -> None:
        """What the broker's drain does once no call is in flight."""
        self.trail.flush()
        await self.writes.settled(self.writes.queued)

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        return [(e.kind, e.data) for e in self.store.list_events(self.run_id)]
