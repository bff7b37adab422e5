"""What the checker returns: violations, facts and the report that carries both.

These are frozen dataclasses so a report can be shared between the host, the store and the
repair loop without anyone mutating it. ``Report.to_dict()`` is the JSON shape printed by
``frostline check --json`` and stored with every attempt.

Positions: ``line`` is 1-based and ``col`` is the 1-based *character* column (not the UTF-8
byte offset that ``ast`` reports), so an editor or a caret under the source line points at the
right character even when the line holds non-ASCII text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning"]
RuleSet = Literal["all", "script"]

#: rule id -> (kind, one-line title). R11 is the only envelope rule; every other rule is a
#: script rule and runs in the repair loop.
RULES: dict[str, tuple[str, str]] = {
    "R00": ("script", "source does not parse, is too large, or nests too deep"),
    "R01": ("script", "script structure: orchestrate signature, top-level statements, duplicates"),
    "R02": ("script", "old or unknown ctx API, or ctx used as a value"),
    "R03": ("script", "loop without a static bound, or a bound above the cap"),
    "R04": ("script", "iteration order that is not deterministic (sets)"),
    "R05": ("script", "container fanout without a static width, or wider than max_fanout"),
    "R06": ("script", "imports"),
    "R07": ("script", "dunder names and attributes outside the allowlist"),
    "R08": ("script", "hidden inputs and builtins outside the allowlist"),
    "R09": ("script", "forbidden syntax"),
    "R10": ("script", "the reserved _site keyword"),
    "R11": ("envelope", "capability not literal, not in the catalog, not granted, or over budget"),
    "R12": ("script", "fire-and-forget: an awaitable that is never awaited"),
}
SCRIPT_RULES = frozenset(r for r, (kind, _) in RULES.items() if kind == "script")


@dataclass(frozen=True)
class Violation:
    """One finding. ``message`` says what is wrong, ``hint`` how to fix it."""

    rule: str
    severity: Severity
    line: int
    col: int
    message: str
    hint: str

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "severity": self.severity, "line": self.line, "col": self.col,
                "message": self.message, "hint": self.hint}


@dataclass(frozen=True)
class SiteInfo:
    """A capability callsite: σ, the literal capability (None if not a literal) and the
    fingerprint of the call expression."""

    site: str
    capability: str | None
    fingerprint: str
    line: int
    col: int
    function: str

    def to_dict(self) -> dict[str, Any]:
        return {"site": self.site, "capability": self.capability, "fingerprint": self.fingerprint,
                "line": self.line, "col": self.col, "function": self.function}


@dataclass(frozen=True)
class SpendBound:
    """Static upper bound on calls per capability and their cost at catalog prices.

    ``bounded`` is False when some call sits under a loop or fanout without a static bound;
    the counts are then only what the bounded part of the script can spend (and R03/R05
    already make the report invalid).
    """

    calls: dict[str, int] = field(default_factory=dict)
    usd: float = 0.0
    bounded: bool = True

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def to_dict(self) -> dict[str, Any]:
        return {"calls": dict(self.calls), "usd": self.usd, "bounded": self.bounded,
                "total_calls": self.total_calls}


@dataclass(frozen=True)
class Facts:
    """What the checker learned about a script, valid or not."""

    capabilities: dict[str, int] = field(default_factory=dict)
    call_expressions: int = 0
    sites: list[SiteInfo] = field(default_factory=list)
    loops: list[dict[str, Any]] = field(default_factory=list)
    containers: list[dict[str, Any]] = field(default_factory=list)
    spend_bound: SpendBound = field(default_factory=SpendBound)
    # Beyond the replays of a run's frozen prefix (checked with a `Prior`), else None.
    new_spend: SpendBound | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "capabilities": dict(self.capabilities),
            "call_expressions": self.call_expressions,
            "sites": [s.to_dict() for s in self.sites],
            "loops": [dict(x) for x in self.loops],
            "containers": [dict(x) for x in self.containers],
            "spend_bound": self.spend_bound.to_dict(),
        }
        if self.new_spend is not None:
            out["new_spend"] = self.new_spend.to_dict()
        return out


@dataclass(frozen=True)
class Report:
    """The checker's verdict. ``valid`` is True when no violation has error severity."""

    valid: bool
    violations: list[Violation]
    facts: Facts

    @property
    def errors(self) -> list[Violation]:
        return [v for v in self.violations if v.severity == "error"]

    @property
    def ok(self) -> bool:
        """The same as `valid`: the script may run (the Python API's spelling)."""
        return self.valid

    def rules(self) -> set[str]:
        """The rule ids that fired (any severity)."""
        return {v.rule for v in self.violations}

    def to_dict(self) -> dict[str, Any]:
        return {"valid": self.valid, "violations": [v.to_dict() for v in self.violations],
                "facts": self.facts.to_dict()}
