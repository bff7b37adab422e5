"""The envelope: what a run may use (grants), spend (budget) and how wide it may go.

JSON shape (every key optional; defaults shown)::

    {"grants": [...every catalog capability...], "budget": {"usd": 10.0, "calls": 1000},
     "concurrency": 8, "max_fanout": 64, "ledger_policy": "auto", "orphan_policy": "warn",
     "relocation": "rebind"}

`relocation` says what happens to a candidate the static gate stops only because committed
calls moved (`removed`, `call_changed`): `stop` (the paper's gate) or `rebind` (a dry replay
may admit it, see frostline.contract.rebind and docs/contract.md).

An unknown key or a bad value raises EnvelopeError naming it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.errors import EnvelopeError


class LedgerPolicy(StrEnum):
    """What the occurrence ledger does with a semantic repeat."""

    OFF = "off"
    WARN = "warn"
    DENY = "deny"
    AUTO = "auto"  # deny for side-effecting capabilities, warn for read-only ones


class OrphanPolicy(StrEnum):
    WARN = "warn"
    STOP = "stop"


class Relocation(StrEnum):
    """What a gate stop caused only by moved committed calls becomes (docs/contract.md)."""

    STOP = "stop"  # the callsite gate's verdict stands
    REBIND = "rebind"  # a dry replay may admit the candidate and rebind the moved calls


# The policy of an envelope that names none; docs/contract.md gives the evidence for it.
DEFAULT_RELOCATION = Relocation.REBIND


@dataclass(frozen=True)
class Budget:
    usd: float = 10.0
    calls: int = 1000
    tokens: int | None = None


@dataclass(frozen=True)
class Envelope:
    """Grants, budget, concurrency and policies for one run."""

    grants: tuple[str, ...] | None = None  # None: every capability in the catalog
    budget: Budget = field(default_factory=Budget)
    concurrency: int = 8
    max_fanout: int = 64
    ledger_policy: LedgerPolicy = LedgerPolicy.AUTO
    orphan_policy: OrphanPolicy = OrphanPolicy.WARN
    relocation: Relocation = DEFAULT_RELOCATION

    _KEYS = ("grants", "budget", "concurrency", "max_fanout", "ledger_policy", "orphan_policy",
             "relocation")

    def granted(self, capability: str, catalog: Catalog = DEFAULT_CATALOG) -> bool:
        if self.grants is None:
            return capability in catalog
        return capability in self.grants

    def grant_set(self, catalog: Catalog = DEFAULT_CATALOG) -> frozenset[str]:
        return frozenset(catalog.names() if self.grants is None else self.grants)

    def with_grants(self, grants: tuple[str, ...] | None) -> Envelope:
        return replace(self, grants=grants)

    def to_dict(self) -> dict[str, Any]:
        budget: dict[str, Any] = {"usd": self.budget.usd, "calls": self.budget.calls}
        if self.budget.tokens is not None:
            budget["tokens"] = self.budget.tokens
        out: dict[str, Any] = {
            "budget": budget,
            "concurrency": self.concurrency,
            "max_fanout": self.max_fanout,
            "ledger_policy": self.ledger_policy.value,
            "orphan_policy": self.orphan_policy.value,
            "relocation": self.relocation.value,
        }
        if self.grants is not None:
            out["grants"] = list(self.grants)
        return out

    @classmethod
    def from_dict(cls, data: Any, catalog: Catalog = DEFAULT_CATALOG) -> Envelope:
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise EnvelopeError("an envelope is a JSON object", key="")
        unknown = sorted(set(data) - set(cls._KEYS))
        if unknown:
            raise EnvelopeError(
                f"unknown envelope key {unknown[0]!r}; known keys: {', '.join(cls._KEYS)}",
                key=unknown[0],
            )
        kwargs: dict[str, Any] = {}
        if "grants" in data:
            grants = data["grants"]
            if not isinstance(grants, list) or not all(isinstance(g, str) for g in grants):
                raise EnvelopeError("envelope 'grants' must be a list of capability names", key="grants")
            for g in grants:
                if g not in catalog:
                    raise EnvelopeError(
                        f"envelope 'grants' names {g!r}, which is not in the catalog "
                        f"({', '.join(catalog.names())})",
                        key="grants",
                    )
            kwargs["grants"] = tuple(dict.fromkeys(grants))
        if "budget" in data:
            kwargs["budget"] = _budget(data["budget"])
        for key, lo, hi in (("concurrency", 1, 1024), ("max_fanout", 1, 4096)):
            if key in data:
                value = data[key]
                if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                    raise EnvelopeError(f"envelope {key!r} must be an integer in {lo}..{hi}", key=key)
                kwargs[key] = value
        if "ledger_policy" in data:
            kwargs["ledger_policy"] = _enum(LedgerPolicy, data["ledger_policy"], "ledger_policy")
        if "orphan_policy" in data:
            kwargs["orphan_policy"] = _enum(OrphanPolicy, data["orphan_policy"], "orphan_policy")
        if "relocation" in data:
            kwargs["relocation"] = _enum(Relocation, data["relocation"], "relocation")
        return cls(**kwargs)

    @classmethod
    def from_json(cls, text: str, catalog: Catalog = DEFAULT_CATALOG) -> Envelope:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise EnvelopeError(f"envelope is not valid JSON: {exc}", key="") from exc
        return cls.from_dict(data, catalog)


def _budget(data: Any) -> Budget:
    if not isinstance(data, Mapping):
        raise EnvelopeError("envelope 'budget' must be an object like {\"usd\": 10.0, \"calls\": 1000}",
                            key="budget")
    unknown = sorted(set(data) - {"usd", "calls", "tokens"})
    if unknown:
        raise EnvelopeError(f"unknown budget key {unknown[0]!r}; known: usd, calls, tokens",
                            key=f"budget.{unknown[0]}")
    kwargs: dict[str, Any] = {}
    if "usd" in data:
        usd = data["usd"]
        if isinstance(usd, bool) or not isinstance(usd, int | float) or not math.isfinite(usd) or usd < 0:
            raise EnvelopeError("budget 'usd' must be a finite number >= 0", key="budget.usd")
        kwargs["usd"] = float(usd)
    for key in ("calls", "tokens"):
        if key in data:
            value = data[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise EnvelopeError(f"budget {key!r} must be an integer >= 0", key=f"budget.{key}")
            kwargs[key] = value
    return Budget(**kwargs)


def _enum(kind: type[LedgerPolicy] | type[OrphanPolicy] | type[Relocation], value: Any,
          key: str) -> Any:
    try:
        return kind(value)
    except ValueError:
        allowed = " | ".join(m.value for m in kind)
        raise EnvelopeError(f"envelope {key!r} must be one of {allowed}, not {value!r}", key=key) from None
