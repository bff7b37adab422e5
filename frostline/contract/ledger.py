"""The occurrence ledger: names a call that pays again for a payload already paid for.

The gate is static and the digest only guards a committed identity, so a repair that widens a
fixed-payload retry loop from three to six iterations reaches three *new* identities
(ω = 3, 4, 5) whose payload was already committed at the same (σ, π). The ledger indexes the
committed digests per (σ, π) and reports such a call as a semantic repeat before it is
dispatched; the envelope's policy decides what happens:

    off   nothing is checked
    warn  the repeat is recorded and the call executes
    deny  the call is refused before any effect
    auto  deny for side-effecting capabilities, warn for read-only ones (the default)

The ledger is built from the prefix an attempt starts with, not from the attempt's own
commits: a first run that deliberately calls the same payload three times is the script's
intent; the same payload reached again by a *revision* is what needs a decision.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from frostline.capabilities.envelope import LedgerPolicy
from frostline.contract.identity import Identity, Path, path_text

if TYPE_CHECKING:
    from frostline.contract.records import SlotRecord


class RepeatAction(StrEnum):
    ALLOW = "allow"  # policy off, or no repeat
    WARN = "warn"
    DENY = "deny"


def resolve(policy: LedgerPolicy | str, *, side_effecting: bool) -> RepeatAction:
    """What a policy does with a repeat of a (side-effecting or read-only) capability."""
    policy = LedgerPolicy(policy)
    if policy is LedgerPolicy.OFF:
        return RepeatAction.ALLOW
    if policy is LedgerPolicy.WARN:
        return RepeatAction.WARN
    if policy is LedgerPolicy.DENY:
        return RepeatAction.DENY
    return RepeatAction.DENY if side_effecting else RepeatAction.WARN


@dataclass(frozen=True)
class SemanticRepeat:
    """A call at a new identity whose (σ, π) already committed the same digest."""

    identity: Identity
    capability: str
    digest: str
    committed: tuple[int, ...]  # the occurrences ω that committed this digest
    action: RepeatAction

    def to_dict(self) -> dict[str, object]:
        return {"identity": str(self.identity), "site": self.identity.site,
                "path": path_text(self.identity.path), "capability": self.capability,
                "digest": self.digest, "committed_occurrences": list(self.committed),
                "action": self.action.value}


class OccurrenceLedger:
    """Committed digests per (σ, π), built from slot records."""

    def __init__(self, slots: Iterable[SlotRecord] = ()) -> None:
        self._index: dict[tuple[str, Path], dict[str, list[int]]] = defaultdict(dict)
        for slot in slots:
            self.add(slot.identity, slot.digest)

    def add(self, identity: Identity, digest: str) -> None:
        occurrences = self._index[(identity.site, identity.path)].setdefault(digest, [])
        if identity.occurrence not in occurrences:
            occurrences.append(identity.occurrence)
            occurrences.sort()

    def committed(self, identity: Identity, digest: str) -> tuple[int, ...]:
        """Occurrences other than `identity`'s own that committed `digest` at its (σ, π)."""
        found = self._index.get((identity.site, identity.path), {}).get(digest, [])
        return tuple(o for o in found if o != identity.occurrence)

    def check(self, identity: Identity, capability: str, digest: str, *,
              policy: LedgerPolicy | str, side_effecting: bool) -> SemanticRepeat | None:
        """The repeat this call would be, with the policy's action; None when it is none."""
        if LedgerPolicy(policy) is LedgerPolicy.OFF:
            return None
        prior = self.committed(identity, digest)
        if not prior:
            return None
        return SemanticRepeat(identity, capability, digest, prior,
                              resolve(policy, side_effecting=side_effecting))
