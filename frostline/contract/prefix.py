"""The frozen prefix P of a run: the map identity → committed record, loaded from slots.

The store already refuses to overwrite a slot, so two records for one identity should never
exist; a store restored from a bad backup, or two stores merged by hand, can still produce
them. Loading is strict by default: a duplicate that agrees (same capability, digest and
result) is folded into one entry, and one that disagrees raises PrefixConflict, because
enforcement built on an ambiguous prefix could replay the wrong result. A permissive load
exists for inspection tools; it keeps the earliest record and lists the conflicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from frostline.contract.identity import Identity
from frostline.errors import PrefixConflict

if TYPE_CHECKING:
    from frostline.contract.records import SlotRecord


class SlotSource(Protocol):
    """Anything that lists a run's slots (a Store does)."""

    def list_slots(self, run_id: str) -> list[SlotRecord]: ...


@dataclass(frozen=True)
class Prefix:
    """The committed records of one run, keyed by identity.

    Example: ``prefix = load_prefix(store, "run-1"); slot = prefix.get(identity)``
    """

    run_id: str
    records: Mapping[Identity, SlotRecord] = field(default_factory=dict)
    conflicts: tuple[str, ...] = ()  # only filled by a permissive load

    def get(self, identity: Identity) -> SlotRecord | None:
        return self.records.get(identity)

    def __contains__(self, identity: object) -> bool:
        return identity in self.records

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[Identity]:
        return iter(sorted(self.records))

    def identities(self) -> list[Identity]:
        """Committed identities sorted by (σ, π, ω)."""
        return sorted(self.records)

    def frozen_sites(self) -> dict[str, str]:
        """Frozen callsite → capability (a site with at least one committed record)."""
        return {ident.site: rec.capability for ident, rec in sorted(self.records.items())}

    def slots(self) -> list[SlotRecord]:
        return [self.records[i] for i in sorted(self.records)]

    @classmethod
    def from_slots(cls, run_id: str, slots: Iterable[SlotRecord], *,
                   strict: bool = True) -> Prefix:
        """Build a prefix, folding agreeing duplicates; see the module docstring for conflicts."""
        records: dict[Identity, SlotRecord] = {}
        conflicts: list[str] = []
        for slot in slots:
            if slot.run_id != run_id:
                raise PrefixConflict(f"slot of run {slot.run_id!r} listed for run {run_id!r}",
                                     run_id=run_id, identity=str(slot.identity))
            ident = slot.identity
            seen = records.get(ident)
            if seen is None:
                records[ident] = slot
                continue
            if _same(seen, slot):
                continue
            if strict:
                raise PrefixConflict(
                    f"identity {ident} has two different committed records "
                    f"({seen.capability}/{seen.digest[:12]} in attempt {seen.attempt}, "
                    f"{slot.capability}/{slot.digest[:12]} in attempt {slot.attempt}); "
                    "the store is inconsistent — restore it or reconcile by hand",
                    run_id=run_id, identity=str(ident),
                    recorded={"capability": seen.capability, "digest": seen.digest},
                    other={"capability": slot.capability, "digest": slot.digest})
            if seen.attempt > slot.attempt:
                records[ident] = slot
            conflicts.append(str(ident))
        return cls(run_id, records, tuple(conflicts))


def _same(a: SlotRecord, b: SlotRecord) -> bool:
    key_a: tuple[Any, ...] = (a.capability, a.digest, a.result)
    key_b: tuple[Any, ...] = (b.capability, b.digest, b.result)
    return key_a == key_b


def load_prefix(store: SlotSource, run_id: str, *, strict: bool = True) -> Prefix:
    """Read a run's prefix from the store. A store error propagates (StoreUnavailable)."""
    return Prefix.from_slots(run_id, store.list_slots(run_id), strict=strict)
