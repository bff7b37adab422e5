"""Orphans: committed identities that an attempt did not invoke.

A control-flow edit can leave a frozen callsite in the source and make it unreachable (a loop
shrunk from three iterations to one); the gate accepts it, and only the comparison between
the prefix and the identities actually invoked shows what was skipped. An orphan is a fidelity
event, not a safety one, so the default policy `warn` records the report and lets the run
complete; `stop` records it and fails the run (for deployments that bill per artifact).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from frostline.capabilities.envelope import OrphanPolicy
from frostline.contract.identity import Identity


@dataclass(frozen=True)
class OrphanReport:
    orphans: tuple[Identity, ...]
    policy: OrphanPolicy

    @property
    def fails_run(self) -> bool:
        """True when the policy is stop and something was skipped."""
        return self.policy is OrphanPolicy.STOP and bool(self.orphans)

    def texts(self) -> list[str]:
        return [str(i) for i in self.orphans]

    def to_dict(self) -> dict[str, object]:
        return {"orphans": self.texts(), "policy": self.policy.value, "fails_run": self.fails_run}


def find_orphans(committed: Iterable[Identity], invoked: Iterable[Identity]) -> tuple[Identity, ...]:
    """Committed identities not in `invoked`, sorted by (σ, π, ω)."""
    seen = set(invoked)
    return tuple(sorted(i for i in set(committed) if i not in seen))


def orphan_report(committed: Iterable[Identity], invoked: Iterable[Identity],
                  policy: OrphanPolicy | str = OrphanPolicy.WARN) -> OrphanReport:
    return OrphanReport(find_orphans(committed, invoked), OrphanPolicy(policy))
