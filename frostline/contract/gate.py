"""The static gate: a candidate script may not remove or change a frozen callsite.

A callsite is frozen once one of its identities is committed. Before any sandbox starts, the
gate compares the frozen sites of a run with the sites of a candidate script: every frozen σ
must be present, name the same capability and keep the same call-expression fingerprint.
Anything else is a counterexample, and a stopped candidate spends nothing (Proposition 2 of
the paper gives the soundness argument; Proposition 3 its cost: a committed call moved into a
helper has a new σ, so it is reported `removed` even though capability, payload and order are
unchanged).

The module is pure and fast: `gate()` is a dictionary walk over the frozen map, and the work
of finding the *nearest* candidate site for a counterexample is done only when something is
wrong. The nearest site is chosen in this order:

1. a candidate site elsewhere with the same capability and the same fingerprint: the frozen
   call exists but sits at another σ (a relocation, or a shift caused by an insertion before
   it); `match = "relocated"`;
2. otherwise a candidate site with the same capability; `match = "same_capability"`;
3. otherwise any candidate site; `match = "closest"`.

Within a tier, closeness is the number of leading σ segments shared with the frozen site
(more is closer), then the Levenshtein distance between the two σ strings, then source order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from frostline.errors import GateStopped, PrefixConflict

if TYPE_CHECKING:  # records are read by attribute only; no runtime dependency on the store
    from frostline.contract.records import AttemptRecord, SlotRecord

CounterexampleKind = Literal["removed", "capability_changed", "call_changed"]
NearestMatch = Literal["relocated", "same_capability", "closest"]

# Past this many equally-close candidates we stop computing edit distances: the nearest site
# is advice for a reader, and the pathological case (every frozen site gone from a very large
# candidate) must not turn a pre-spend check into a quadratic one.
_MAX_EDIT_DISTANCE_POOL = 32


class CandidateSite(Protocol):
    """What the gate reads of a candidate site (frostline.script.SiteInfo has these fields)."""

    @property
    def site(self) -> str: ...

    @property
    def capability(self) -> str | None: ...

    @property
    def fingerprint(self) -> str: ...

    @property
    def line(self) -> int: ...


@dataclass(frozen=True)
class FrozenSite:
    """A callsite with at least one committed identity, as the committing attempt saw it."""

    site: str
    capability: str
    fingerprint: str
    line: int
    source_line: str

    def to_dict(self) -> dict[str, Any]:
        return {"site": self.site, "capability": self.capability,
                "fingerprint": self.fingerprint, "line": self.line,
                "source_line": self.source_line}


@dataclass(frozen=True)
class NearestSite:
    """The candidate site closest to a frozen site that failed the gate, and why it was chosen."""

    site: str
    capability: str | None
    line: int
    match: NearestMatch

    def to_dict(self) -> dict[str, Any]:
        return {"site": self.site, "capability": self.capability, "line": self.line,
                "match": self.match}


@dataclass(frozen=True)
class Counterexample:
    """One frozen site that the candidate removed or changed."""

    kind: CounterexampleKind
    site: str
    capability: str
    line: int
    source_line: str
    nearest: NearestSite | None = None
    # For capability_changed: the capability the candidate now calls at this σ.
    found_capability: str | None = None

    @property
    def message(self) -> str:
        """One sentence for a human or a model: what is wrong and what to do instead."""
        where = f"frozen site {self.site} ({self.capability}, line {self.line}: `{self.source_line.strip()}`)"
        if self.kind == "removed":
            what = f"{where} is missing from the candidate"
        elif self.kind == "capability_changed":
            found = (repr(self.found_capability) if self.found_capability is not None
                     else "a capability whose name is not a string literal")
            what = f"{where} now calls {found}"
        else:
            what = f"{where} has a different call expression (payload or arguments edited)"
        hint = "; keep that call exactly as it is, at the same place, and add new work after it"
        if self.nearest is not None and self.nearest.match == "relocated":
            hint = (f"; the same call now sits at {self.nearest.site} (line {self.nearest.line}), "
                    "which is a new callsite and would be paid again: move it back") + hint
        return what + hint

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind, "site": self.site, "capability": self.capability,
            "line": self.line, "source_line": self.source_line,
            "nearest": self.nearest.to_dict() if self.nearest is not None else None,
            "message": self.message,
        }
        if self.kind == "capability_changed":
            out["found_capability"] = self.found_capability
        return out


@dataclass(frozen=True)
class GateResult:
    """The gate's verdict. `accepted` is True exactly when there are no counterexamples."""

    accepted: bool
    counterexamples: tuple[Counterexample, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted,
                "counterexamples": [c.to_dict() for c in self.counterexamples]}

    def raise_if_stopped(self, run_id: str | None = None) -> None:
        """Raise GateStopped (carrying the counterexamples) unless the candidate was accepted."""
        if self.accepted:
            return
        kinds = ", ".join(f"{c.kind} {c.site}" for c in self.counterexamples)
        raise GateStopped(
            f"the candidate changes the frozen prefix ({kinds}); nothing was executed. "
            "Keep every frozen call exactly as it is and add new work after it.",
            run_id=run_id, counterexamples=[c.to_dict() for c in self.counterexamples],
        )


# --------------------------------------------------------------------------------------------
# the frozen map


def frozen_map(slots: Iterable[SlotRecord],
               attempts: Iterable[AttemptRecord]) -> dict[str, FrozenSite]:
    """Build site → FrozenSite from a run's committed slots and its attempts.

    Each site is described by the stored checker report (``report["facts"]["sites"]``) and the
    source of the attempt that first committed it. Fails closed: a slot whose attempt or site
    description cannot be found, or whose capability disagrees with that description, raises
    PrefixConflict, because a gate built from a partial map could accept a removal.

    Example: ``frozen = frozen_map(store.list_slots(run), store.list_attempts(run))``
    """
    first: dict[str, SlotRecord] = {}
    for slot in slots:
        seen = first.get(slot.site)
        if seen is None or slot.attempt < seen.attempt:
            first[slot.site] = slot
    if not first:
        return {}
    by_number = {a.number: a for a in attempts}
    described: dict[int, tuple[dict[str, Mapping[str, Any]], list[str]]] = {}
    out: dict[str, FrozenSite] = {}
    for site in sorted(first):
        slot = first[site]
        attempt = by_number.get(slot.attempt)
        if attempt is None:
            raise PrefixConflict(
                f"slot {slot.identity} was committed by attempt {slot.attempt}, which the store "
                "does not have; the frozen map cannot be built (check the store's integrity)",
                run_id=slot.run_id, identity=str(slot.identity), attempt=slot.attempt)
        if attempt.number not in described:
            described[attempt.number] = (_report_sites(attempt), attempt.source.splitlines())
        sites, lines = described[attempt.number]
        info = sites.get(site)
        if info is None:
            raise PrefixConflict(
                f"slot {slot.identity} is committed, but the report of attempt {attempt.number} "
                "does not describe that site; the frozen map cannot be built",
                run_id=slot.run_id, identity=str(slot.identity), attempt=attempt.number)
        capability = info.get("capability")
        if capability != slot.capability:
            raise PrefixConflict(
                f"slot {slot.identity} committed {slot.capability!r}, but attempt "
                f"{attempt.number}'s report has {capability!r} at that site",
                run_id=slot.run_id, identity=str(slot.identity), attempt=attempt.number,
                expected=slot.capability, recorded=capability)
        line = int(info.get("line", 0))
        source_line = lines[line - 1] if 0 < line <= len(lines) else ""
        out[site] = FrozenSite(site, slot.capability, str(info.get("fingerprint", "")), line,
                               source_line)
    return out


def rebase(frozen: Mapping[str, FrozenSite], source: str,
           candidate: Sequence[CandidateSite]) -> dict[str, FrozenSite]:
    """The frozen map with line numbers and source lines taken from a later script.

    A frozen site that `candidate` (the sites of `source`) keeps intact is described by its
    line in `source`; any other keeps the description of the attempt that committed it. The
    repair prompt uses this so that the lines it quotes match the script it shows.
    """
    lines = source.splitlines()
    by_site = {c.site: c for c in candidate}
    out: dict[str, FrozenSite] = {}
    for site, fs in frozen.items():
        c = by_site.get(site)
        if (c is not None and c.capability == fs.capability and c.fingerprint == fs.fingerprint
                and 0 < c.line <= len(lines)):
            out[site] = FrozenSite(site, fs.capability, fs.fingerprint, c.line, lines[c.line - 1])
        else:
            out[site] = fs
    return out


def _report_sites(attempt: AttemptRecord) -> dict[str, Mapping[str, Any]]:
    report = attempt.report if isinstance(attempt.report, Mapping) else {}
    facts = report.get("facts")
    sites = facts.get("sites") if isinstance(facts, Mapping) else None
    if not isinstance(sites, list):
        raise PrefixConflict(
            f"attempt {attempt.number} has no site list in its stored report "
            "(report['facts']['sites']); the frozen map cannot be built",
            run_id=attempt.run_id, attempt=attempt.number)
    # `type(s) is dict` first: reports come back from the store as plain dicts, and the ABC
    # check behind isinstance(…, Mapping) would otherwise dominate this once-per-attempt pass.
    return {s["site"]: s for s in sites
            if (type(s) is dict or isinstance(s, Mapping)) and "site" in s}


# --------------------------------------------------------------------------------------------
# the gate


def gate(frozen: Mapping[str, FrozenSite], candidate: Sequence[CandidateSite]) -> GateResult:
    """Compare the frozen sites with a candidate's sites.

    Example: ``gate(frozen, frostline.script.sites(candidate_source)).accepted``
    """
    by_site = {c.site: c for c in candidate}
    problems: list[tuple[FrozenSite, CounterexampleKind, CandidateSite | None]] = []
    for fs in frozen.values():
        cand = by_site.get(fs.site)
        if cand is None:
            problems.append((fs, "removed", None))
        elif cand.capability != fs.capability:
            problems.append((fs, "capability_changed", cand))
        elif cand.fingerprint != fs.fingerprint:
            problems.append((fs, "call_changed", cand))
    if not problems:
        return GateResult(True, ())
    order = {c.site: i for i, c in enumerate(candidate)}
    counterexamples = tuple(
        Counterexample(kind, fs.site, fs.capability, fs.line, fs.source_line,
                       nearest_site(fs, candidate, order),
                       cand.capability if kind == "capability_changed" and cand else None)
        for fs, kind, cand in sorted(problems, key=lambda p: (p[0].line, p[0].site))
    )
    return GateResult(False, counterexamples)


def nearest_site(fs: FrozenSite, candidate: Sequence[CandidateSite],
                 order: Mapping[str, int] | None = None) -> NearestSite | None:
    """The candidate site nearest to a frozen site (see the module docstring for the order)."""
    others = [c for c in candidate if c.site != fs.site]
    tiers: list[tuple[NearestMatch, list[CandidateSite]]] = [
        ("relocated", [c for c in others
                       if c.capability == fs.capability and c.fingerprint == fs.fingerprint]),
        ("same_capability", [c for c in candidate if c.capability == fs.capability]),
        ("closest", list(candidate)),
    ]
    for match, pool in tiers:
        if pool:
            best = _closest(fs.site, pool, order or {})
            return NearestSite(best.site, best.capability, best.line, match)
    return None


def _closest(site: str, pool: list[CandidateSite], order: Mapping[str, int]) -> CandidateSite:
    segs = site.split("/")
    scored = [(_common_segments(segs, c.site.split("/")), c) for c in pool]
    top = max(s for s, _ in scored)
    tied = [c for s, c in scored if s == top]
    if len(tied) > 1:
        tied.sort(key=lambda c: (abs(len(c.site) - len(site)), order.get(c.site, 0)))
        tied = tied[:_MAX_EDIT_DISTANCE_POOL]
        tied.sort(key=lambda c: (levenshtein(site, c.site), order.get(c.site, 0)))
    return tied[0]


def _common_segments(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions) between two strings."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
