"""PLAN, adaptive (arm 3 and after): the plan as a dependency-aware DAG of edit obligations.

CodePlan's idea on this workflow's scale. The plan is made of obligations over the code graph:

    edit:F    change function F at its suspicious statements (the localization's ranked sites
              inside F, best first)
    check:C   a call site a change to F affects: C calls F and is not itself an edit obligation

and their dependency edges: `check:C` depends on every `edit:F` whose function C calls, and
`edit:F` depends on `edit:G` when F calls G (a change to G changes what F computes, so G's
obligation comes first). The plan lists the obligations in dependency order (ties go to the
better-ranked site), and its `sites`, which GENERATE works on, are the edit obligations' sites
in that order: the same statements the static plan offers, ordered by dependency.

The plan records its assumption: the tests it is meant to explain and the functions their
failures surfaced in when it was made. An edit diverges from it when, with the edit in force,

    callers_changed       the edit adds or removes a call, so the callers of the functions it
                          names (and what they reach) are no longer the plan's
    localizes_elsewhere   a failing test now surfaces in a function the plan neither edits nor
                          saw a failure in, where the localization ranks statements untried

and the plan is revised inside PLAN: the obligations the divergence touches and everything
downstream of them in the obligation DAG are STALE (the freshness lattice of frostline.graph,
over obligations) and recomputed; every other obligation is kept exactly as it was. Only the
order moves: the function the failure moved to comes first. All of it is a pure function of
the localization, the diagnosis, the code graph and the test result: no test runs here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from graphlib import TopologicalSorter
from typing import Any

from frostline.coding.codegraph import CodeGraph
from frostline.coding.diagnosis import frames
from frostline.coding.impact import PLAN_SITES
from frostline.coding.manifest import is_test_file
from frostline.graph.freshness import Invalidation, Lattice
from frostline.graph.records import ArtifactFreshness, Freshness

#: Call sites recorded per edit obligation (a function called from everywhere would swamp it).
CHECKS_PER_EDIT = 8
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_NOT_CALLS = frozenset({"if", "elif", "while", "for", "return", "and", "or", "not", "in", "is",
                        "lambda", "yield", "assert", "del", "with", "print", "await"})


@dataclass(frozen=True)
class Obligation:
    """One node of the plan. `sites` are the ranked statements an edit obligation works on
    (empty for a check); `because` says why the obligation is in the plan."""

    id: str
    kind: str  # edit | check
    function: str
    file: str
    sites: tuple[Mapping[str, Any], ...]
    depends_on: tuple[str, ...]
    because: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "function": self.function, "file": self.file,
                "sites": [dict(s) for s in self.sites], "depends_on": list(self.depends_on),
                "because": self.because}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Obligation:
        return cls(str(data["id"]), str(data["kind"]), str(data["function"]), str(data["file"]),
                   tuple(dict(s) for s in data.get("sites", ())),
                   tuple(str(d) for d in data.get("depends_on", ())), str(data["because"]))


def _short(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


def _site(c: Mapping[str, Any]) -> dict[str, Any]:
    return {"file": c["file"], "line": c["line"], "function": c["function"], "score": c["score"]}


def _edit(function: str, candidates: Sequence[Mapping[str, Any]], because: str) -> Obligation:
    return Obligation(f"edit:{function}", "edit", function, str(candidates[0]["file"]),
                      tuple(_site(c) for c in candidates), (), because)


def link(edits: Sequence[Obligation], graph: CodeGraph) -> list[Obligation]:
    """`edits` with their dependency edges, and the check obligations of their call sites."""
    by_short: dict[str, list[str]] = {}
    for e in edits:
        by_short.setdefault(_short(e.function), []).append(e.id)
    called = {q: set(names) for q, names in graph.calls.items()}
    edit_functions = {e.function for e in edits}
    deps: dict[str, set[str]] = {e.id: set() for e in edits}

    def reaches(a: str, b: str) -> bool:  # does `a` (transitively) depend on `b`?
        todo, seen = [a], set()
        while todo:
            x = todo.pop()
            if x == b:
                return True
            if x not in seen:
                seen.add(x)
                todo.extend(deps.get(x, ()))
        return False

    for e in edits:  # better-ranked first: under mutual recursion the earlier edge is kept
        for name in sorted(called.get(e.function, ())):
            for d in by_short.get(name, ()):
                if d != e.id and not reaches(d, e.id):
                    deps[e.id].add(d)
    out = [replace(e, depends_on=tuple(sorted(deps[e.id]))) for e in edits]
    files = {d.qualname: d.file for d in graph.definitions}
    checks: dict[str, set[str]] = {}
    for e in edits:  # call sites in the source; a test calling F is not a call site to check
        callers = [c for c in graph.callers([e.function]) if c not in edit_functions
                   and not is_test_file(files.get(c, ""))]
        for c in callers[:CHECKS_PER_EDIT]:
            checks.setdefault(c, set()).add(e.id)
    for caller, callees in sorted(checks.items()):
        out.append(Obligation(f"check:{caller}", "check", caller, files.get(caller, ""), (),
                              tuple(sorted(callees)),
                              f"calls {', '.join(sorted(_short(d) for d in callees))}"))
    return out


def dependency_order(obligations: Sequence[Obligation], first: Sequence[str] = ()) -> list[str]:
    """The obligations' ids in dependency order; among those ready at once, the ones in
    `first`, then the earlier-listed (better-ranked) one."""
    position = {o.id: i for i, o in enumerate(obligations)}
    lead = {oid: i for i, oid in enumerate(first)}
    ts = TopologicalSorter({o.id: [d for d in o.depends_on if d in position]
                            for o in obligations})
    ts.prepare()
    order: list[str] = []
    ready: list[str] = []
    while ts.is_active():
        ready.extend(ts.get_ready())
        ready.sort(key=lambda oid: (lead.get(oid, len(lead)), position[oid]))
        nxt = ready.pop(0)
        order.append(nxt)
        ts.done(nxt)
    return order


def lattice_of(obligations: Iterable[Obligation]) -> Lattice:
    """The freshness lattice over obligations (an obligation is downstream of its dependencies)."""
    obs = list(obligations)
    ids = {o.id for o in obs}
    return Lattice(ArtifactFreshness(o.id, Freshness.VALID,
                                     tuple(d for d in o.depends_on if d in ids)) for o in obs)


def revise(obligations: Sequence[Obligation], touched: Iterable[str],
           recompute: Callable[[Obligation], Obligation | None]
           ) -> tuple[list[Obligation], list[Invalidation], list[str]]:
    """Downstream-only revision: each touched obligation and everything downstream of it goes
    STALE and is recomputed (in dependency order; `recompute` returning None drops it); every
    other obligation is returned unchanged. Returns the revised list (in the input's order),
    the invalidations, and the ids recomputed, in the order they were."""
    lattice = lattice_of(obligations)
    status: dict[str, Freshness] = {o.id: Freshness.VALID for o in obligations}
    invalidations: list[Invalidation] = []
    for oid in touched:
        if oid in status:
            status, inv = lattice.invalidate(status, oid)
            status[oid] = Freshness.STALE
            invalidations.append(inv)
    by_id = {o.id: o for o in obligations}
    revised: dict[str, Obligation | None] = {}
    _, order = lattice.recompute(status, lambda oid: revised.__setitem__(
        oid, recompute(by_id[oid])))
    out = [revised.get(o.id, o) for o in obligations]
    return [o for o in out if o is not None], invalidations, list(order)


def _surfaces(failures: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """test -> (file, function) of the deepest source frame its traceback names."""
    out: dict[str, tuple[str, str]] = {}
    for f in failures:
        src = [x for x in frames(str(f.get("text", ""))) if not is_test_file(x["file"])]
        if src:
            out[str(f.get("test", ""))] = (src[-1]["file"], src[-1]["function"])
    return out


def _plan_dict(obligations: Sequence[Obligation], order: Sequence[str], assumption: Mapping[str, Any],
               revision: int, tried: Sequence[str], history: Sequence[Mapping[str, Any]]
               ) -> dict[str, Any]:
    by_id = {o.id: o for o in obligations}
    edits = [by_id[i] for i in order if by_id[i].kind == "edit"]
    sites = [s for e in edits if e.id not in tried for s in e.sites] + \
        [s for e in edits if e.id in tried for s in e.sites]
    steps = [f"{by_id[i].kind} {by_id[i].function}"
             + (f" at {', '.join(str(s['line']) for s in by_id[i].sites)}" if by_id[i].sites
                else f" ({by_id[i].because})") for i in order]
    if sites:
        steps.append("run the failing tests, then the whole suite")
    return {"steps": steps, "step_count": len(steps), "satisfiable": int(bool(sites)),
            "sites": sites, "adaptive": 1, "obligations": [o.to_dict() for o in obligations],
            "order": list(order), "assumption": dict(assumption), "revision": revision,
            "tried": list(tried), "revisions": [dict(h) for h in history]}


def build_plan(localization: Mapping[str, Any], diagnosis: Mapping[str, Any],
               graph: CodeGraph) -> dict[str, Any]:
    """The adaptive Plan artifact: the static plan's sites (the diagnosis's suspect first, then
    by suspiciousness, PLAN_SITES of them) grouped into edit obligations by function, linked
    over the code graph, in dependency order."""
    candidates = list(localization.get("candidates", ()))
    first = diagnosis.get("suspect_site")
    ranked = sorted(candidates, key=lambda c: c["site"] != first)[:PLAN_SITES]
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for c in ranked:
        groups.setdefault(str(c["function"]), []).append(c)
    edits = [_edit(fn, cs, "ranked by the localization") for fn, cs in groups.items()]
    obligations = link(edits, graph)
    surfaced = sorted({f"{f}::{fn}" for f, fn in
                       _surfaces(localization.get("failures", ())).values()})
    assumption = {"explains": list(localization.get("failing_tests", ())), "surfaced": surfaced}
    return _plan_dict(obligations, dependency_order(obligations), assumption, 0, [], [])


def _called(text: str) -> set[str]:
    return {m for m in _CALL.findall(text) if m not in _NOT_CALLS}


def divergence(plan: Mapping[str, Any], patch: Mapping[str, Any],
               test_result: Mapping[str, Any],
               localization: Mapping[str, Any]) -> dict[str, Any] | None:
    """How the edit in force diverges from the plan's assumption, or None.

    `patch` is the Patch applied (its `site` and SEARCH/REPLACE `edits`), `test_result` the
    TEST run on it. A passing run never diverges."""
    if not plan.get("adaptive") or int(test_result.get("failed", 0)) == 0:
        return None
    obligations = [Obligation.from_dict(o) for o in plan.get("obligations", ())]
    site = str(patch.get("site", ""))
    edited = next((o for o in obligations if o.kind == "edit" and any(
        f"{s['file']}:{s['line']}" == site for s in o.sites)), None)
    if edited is None or edited.id in plan.get("tried", ()):
        return None  # a widened site beyond the plan (REPAIR's ranking owns it), or an
        # obligation that has diverged once already: each re-plans the plan at most once
    changed = set()
    for e in patch.get("edits", ()):
        changed |= _called(str(e.get("search", ""))) ^ _called(str(e.get("replace", "")))
    if changed:
        touched = sorted({edited.id} | {o.id for o in obligations
                                        if _short(o.function) in changed})
        return {"kind": "callers_changed", "obligation": edited.id, "touched": touched,
                "names": sorted(changed), "function": "", "file": ""}
    seen = set(plan.get("assumption", {}).get("surfaced", ()))
    tried = set(plan.get("tried", ())) | {edited.id}
    for test, (file, fn) in sorted(_surfaces(test_result.get("failures", ())).items()):
        if f"{file}::{fn}" in seen or fn == _short(edited.function):
            continue
        fresh = _candidates_in(localization, file, fn)
        target = f"edit:{fresh[0]['function']}" if fresh else ""
        if fresh and target not in tried:
            return {"kind": "localizes_elsewhere", "obligation": edited.id,
                    "touched": [edited.id], "names": [], "function": fn, "file": file,
                    "test": test}
    return None


def _candidates_in(localization: Mapping[str, Any], file: str, fn: str
                   ) -> list[Mapping[str, Any]]:
    return [c for c in localization.get("candidates", ())
            if c["file"] == file and _short(str(c["function"])) == fn][:PLAN_SITES]


def replan(plan: Mapping[str, Any], diverged: Mapping[str, Any],
           localization: Mapping[str, Any], graph: CodeGraph) -> dict[str, Any]:
    """The plan revised for `diverged`: the touched obligations and their downstream are
    recomputed over `graph` (the code graph with the edit in force), the rest kept as they
    were; the diverged obligation counts as tried, and the function a failure moved to, if
    any, becomes an edit obligation ordered first."""
    obligations = [Obligation.from_dict(o) for o in plan.get("obligations", ())]
    tried = [*plan.get("tried", ()), str(diverged["obligation"])]
    lead: list[str] = []
    edits = [o for o in obligations if o.kind == "edit"]
    if diverged["kind"] == "localizes_elsewhere":
        fresh = _candidates_in(localization, str(diverged["file"]), str(diverged["function"]))
        new = _edit(str(fresh[0]["function"]), fresh,
                    f"{diverged['test']} fails there after the edit at "
                    f"{str(diverged['obligation']).removeprefix('edit:')}")
        lead = [new.id]
        if new.id not in {o.id for o in obligations}:
            edits.append(new)  # a new root: where the evidence points now, ordered first
            obligations.append(new)
    relinked = {o.id: o for o in link(edits, graph)}

    def recompute(o: Obligation) -> Obligation | None:
        # an obligation is recomputed from the current code graph: its edges (and, for a
        # check, whether the call site still calls an edit obligation at all)
        return relinked.get(o.id)

    revised, invalidations, recomputed = revise(obligations, diverged.get("touched", ()),
                                                recompute)
    known = {o.id for o in revised}
    # new call sites: of the new obligation, or created by the edit
    revised += [o for o in relinked.values() if o.kind == "check" and o.id not in known]
    history = [*plan.get("revisions", ()), {
        "kind": diverged["kind"], "obligation": diverged["obligation"],
        "stale": sorted({s for inv in invalidations for s in inv.stale}
                        | set(diverged.get("touched", ()))),
        "recomputed": recomputed, "lead": lead}]
    return _plan_dict(revised, dependency_order(revised, lead), plan.get("assumption", {}),
                      int(plan.get("revision", 0)) + 1, tried, history)
