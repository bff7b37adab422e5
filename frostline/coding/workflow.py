"""The state bodies of the canonical coding graph on a real repository.

Each body does its state's work only through its state's tools (`ctx.tool`, so the allowlist
applies and a durable run commits and replays every call) and returns the state's typed
artifact. Bodies keep a little run state of their own (the patch in force, the patches tried,
the inputs each artifact was computed from); because a resumed durable run runs the bodies
again over replayed tool results, that state is rebuilt exactly.

Partial retry is the bodies' side of the freshness lattice: when the lattice is on and a
state's artifact is still VALID and was computed from the same inputs, the body returns it
without calling a tool. Without the lattice every revisit recomputes, and a recomputation of an
artifact the canonical lattice would still hold VALID, from unchanged inputs, is counted as
repeated work.

With the overfit guards (`guards`, `frostline.coding.guards`) GENERATE and REPAIR never choose
a candidate the generator's tool marked as a degenerate rewrite and take each site's
candidates smallest change first; REVIEW counts a degenerate rewrite as a verified defect; and
VALIDATE rests acceptance on a whole-suite run of the patch in force.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from frostline.coding.impact import PLAN_SITES
from frostline.coding.interface import Task
from frostline.coding.overfit import smallest_first
from frostline.coding.plandag import divergence
from frostline.contract.identity import digest
from frostline.errors import (
    NoCandidate as NoCandidate,
)
from frostline.errors import (
    RunError,
)
from frostline.graph.engine import Body, StateContext

IMPACT_SELECT_CAP = 300
#: Candidates one REPAIR visit may screen while none passes the failing tests.
REPAIR_SCREEN_CAP = 96


def call(ctx: StateContext, tool: str, payload: Mapping[str, Any] | None = None
         ) -> Mapping[str, Any]:
    """`ctx.tool`, insisting on an object result (a tool's typed output)."""
    result = ctx.tool(tool, payload)
    if not isinstance(result, Mapping):
        raise RunError(f"{tool} returned {type(result).__name__}, not an object", tool=tool)
    return result


class CodingBodies:
    """Bodies for one task. `valid(artifact)` answers from the canonical lattice (the shadow
    one when the run's own graph has none); `lattice` turns partial retry on."""

    def __init__(self, task: Task, *, generator: str, lattice: bool, samples: int,
                 valid: Callable[[str], bool], model_review: bool = False,
                 guards: bool = True, adaptive: bool = False) -> None:
        self.task = task
        self.guards = guards
        self.screened_out: list[str] = []  # degenerate candidates, never chosen
        self.adaptive = adaptive  # the plan is the adaptive DAG (frostline.coding.plandag)
        self.replans = 0
        self.model_review = model_review
        self.generator = generator
        self.lattice = lattice
        self.samples = samples
        self.valid = valid
        self.applied = "base"  # digest of the patch in force
        self.tried: list[str] = []
        self.widened: set[str] = set()  # localization sites offered beyond the plan's
        self.fingerprints: dict[str, str] = {}
        self.repeated_work = 0
        self.reused = 0
        self.regressions_caught = 0
        #: called with each patch EDIT applied, executed or replayed (re-materialises the tree)
        self.on_applied: Callable[[Mapping[str, Any]], object] = lambda patch: None

    def bodies(self) -> dict[str, Body]:
        return {"RECONNAISSANCE": self.recon, "LOCALIZE": self.localize, "IMPACT": self.impact,
                "DEBUG": self.debug, "PLAN": self.plan, "GENERATE": self.generate,
                "EDIT": self.edit, "EXECUTE": self.execute, "TRACE": self.trace,
                "TEST": self.test, "REPAIR": self.repair, "REGRESSION": self.regression,
                "REVIEW": self.review, "VALIDATE": self.validate, "MEMORIZE": self.memorize,
                "REFLECT": self.reflect, "CANDIDATES": self.candidates}

    # -- partial retry ------------------------------------------------------------------------
    def _compute(self, ctx: StateContext, artifact: str, inputs: Any,
                 work: Callable[[], Mapping[str, Any]]) -> Mapping[str, Any]:
        fp = digest(inputs)
        same = self.fingerprints.get(artifact) == fp
        stored = ctx.artifact(artifact)
        if same and stored is not None and self.valid(artifact):
            if self.lattice:
                self.reused += 1
                return stored
            self.repeated_work += 1
        value = work()
        self.fingerprints[artifact] = fp
        return value

    def _mark_tried(self, d: str) -> None:
        if d and d not in self.tried:
            self.tried.append(d)

    # -- understanding the failure --------------------------------------------------------------
    def recon(self, ctx: StateContext) -> Mapping[str, Any]:
        def work() -> Mapping[str, Any]:
            manifest = call(ctx, "repo.manifest")
            graph = call(ctx, "code.graph")
            return {**manifest, "definitions": graph["definition_count"],
                    "call_edges": graph["call_edges"], "unparsed": graph["unparsed"]}
        return self._compute(ctx, "RepoManifest", [], work)

    def localize(self, ctx: StateContext) -> Mapping[str, Any]:
        manifest = ctx.inputs["RepoManifest"]
        return self._compute(ctx, "LocalizationResult", manifest,
                             lambda: call(ctx, "trace.read", {"mode": "spectrum"}))

    def impact(self, ctx: StateContext) -> Mapping[str, Any]:
        loc = ctx.inputs["LocalizationResult"]
        return self._compute(ctx, "ImpactResult", loc,
                             lambda: call(ctx, "impact.analyze", {"localization": loc}))

    def debug(self, ctx: StateContext) -> Mapping[str, Any]:
        loc = ctx.inputs["LocalizationResult"]
        trace = ctx.artifact("Trace")
        if trace is not None and trace.get("workspace") != self.applied:
            trace = None  # a trace of an earlier patch says nothing about this one
        return self._compute(ctx, "Diagnosis", [loc, trace], lambda: call(ctx,
            "error.interpret", {"localization": loc, "trace": trace}))

    def plan(self, ctx: StateContext) -> Mapping[str, Any]:
        diagnosis = ctx.inputs["Diagnosis"]
        loc = ctx.artifact("LocalizationResult") or {}
        if not self.adaptive:
            return self._compute(ctx, "Plan", [loc, diagnosis], lambda: call(ctx,
                "task.decompose", {"localization": loc, "diagnosis": diagnosis}))
        payload: dict[str, Any] = {"localization": loc, "diagnosis": diagnosis, "adaptive": 1}
        previous = ctx.artifact("Plan")
        tested = ctx.artifact("TestResult") or {}
        diverged = tested.get("divergence") if tested.get("plan_diverged") \
            and tested.get("workspace") == self.applied else None
        if diverged and previous and previous.get("adaptive") \
                and diverged["obligation"] not in previous.get("tried", ()):
            payload.update(plan=previous, divergence=diverged)
            self.replans += 1
        else:
            diverged = None
        return self._compute(ctx, "Plan", [loc, diagnosis, diverged],
                             lambda: call(ctx, "task.decompose", payload))

    # -- changing the code ----------------------------------------------------------------------
    def _patch(self, chosen: Mapping[str, Any], rest: list[Mapping[str, Any]]) -> dict[str, Any]:
        files = sorted({str(e["file"]) for e in chosen["edits"]})
        return {"files": files, "diff": "", "applied": 0, "edits": list(chosen["edits"]),
                "digest": chosen["digest"], "generator": chosen.get("generator", ""),
                "operator": chosen.get("operator", ""), "site": chosen.get("site", ""),
                "alternatives": [c for c in rest if c["digest"] != chosen["digest"]]}

    def _generate(self, ctx: StateContext, plan: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        diagnosis = ctx.artifact("Diagnosis") or {}
        loc = ctx.artifact("LocalizationResult") or {}
        res = call(ctx, "patch.generate", {
            "generator": self.generator, "sites": plan.get("sites", []), "diagnosis": diagnosis,
            "failures": list(loc.get("failures", ()))[:5],
            "exclude": [*self.tried, *self.screened_out], "n": self.samples})
        candidates = [c for c in res.get("candidates", ()) if c["digest"] not in self.tried
                      and c["digest"] not in self.screened_out]
        if self.guards:
            out = [str(c["digest"]) for c in candidates if c.get("degenerate")]
            self.screened_out += out
            candidates = smallest_first(c for c in candidates if not c.get("degenerate"))
            if out and not candidates:
                raise NoCandidate(f"every new candidate patch ({len(out)}) was a degenerate "
                                  "rewrite (a decision made constant)")
        if not candidates:
            raise NoCandidate(f"the {self.generator} generator offered no new candidate patch"
                              + (f": {res['error']}" if res.get("error") else ""),
                              malformed=res.get("malformed", 0))
        return candidates

    def generate(self, ctx: StateContext) -> Mapping[str, Any]:
        plan = ctx.inputs["Plan"]

        def work() -> Mapping[str, Any]:
            candidates = self._generate(ctx, plan)
            return self._patch(candidates[0], candidates[1:])
        return self._compute(ctx, "Patch", [plan, ctx.inputs["Diagnosis"], self.tried], work)

    def edit(self, ctx: StateContext) -> Mapping[str, Any]:
        patch = ctx.inputs["Patch"]
        self._mark_tried(str(patch["digest"]))
        res = call(ctx, "edit.apply", {"patch": {"edits": patch["edits"]}})
        self.on_applied({"edits": patch["edits"]})
        self.applied = str(patch["digest"])
        return dict(patch, applied=1, diff=res["diff"], files=res["files"])

    def repair(self, ctx: StateContext) -> Mapping[str, Any]:
        patch = ctx.inputs["Patch"]
        pool = [c for c in patch.get("alternatives", ()) if c["digest"] not in self.tried]
        if not pool and self.generator == "model":
            pool = list(self._generate(ctx, ctx.inputs["Plan"]))
        if not pool:
            pool = self._widen(ctx)
        if not pool:
            raise NoCandidate("no candidate patch is left to repair with")
        impact = ctx.artifact("ImpactResult") or {}
        failing = self._failing(ctx)
        confirm = list(impact.get("affected", ()))[:IMPACT_SELECT_CAP]
        chosen, best, screened = None, -1, 0
        while True:
            passing, fewest, failures, n = self._screen(ctx, pool, failing, confirm)
            screened += n
            if passing is not None:
                chosen = passing
                break
            if fewest is not None and (best < 0 or failures < best):
                chosen, best = fewest, failures
            # Screening already shows that no candidate passes the failing tests, so sending
            # one to TEST would only spend a retry. The template generator goes on down the
            # localization's ranking within this visit, up to REPAIR_SCREEN_CAP candidates.
            if self.generator != "template" or screened >= REPAIR_SCREEN_CAP:
                break
            wider = self._widen(ctx)
            if not wider:
                break
            pool = [*[c for c in pool if c["digest"] not in self.tried], *wider]
        if chosen is None:
            raise NoCandidate("no screened candidate could be run")
        rest = [c for c in pool if c["digest"] not in self.tried]
        return self._patch(chosen, rest)

    def _widen(self, ctx: StateContext) -> list[Mapping[str, Any]]:
        """Candidates for the next ranked sites nobody offered yet (template generator only;
        sites that give no candidate are skipped); empty when the ranking is spent."""
        while self.generator == "template" and (sites := self._wider(ctx)):
            try:
                return list(self._generate(ctx, {"sites": sites}))
            except NoCandidate:
                continue
        return []

    def _screen(self, ctx: StateContext, pool: list[Mapping[str, Any]], failing: list[str],
                confirm: list[str]) -> tuple[Mapping[str, Any] | None, Mapping[str, Any] | None,
                                             int, int]:
        """Screen `pool`: the first candidate to pass (None if none did), the one with the
        fewest failures and their count, and how many candidates were run."""
        fewest: Mapping[str, Any] | None = None
        best, screened, screen = -1, 0, pool
        while screen:
            res = call(ctx, "repair.iterative", {
                "candidates": screen, "select": failing, "workspace": self.applied,
                "confirm": confirm, **self._timeout(ctx)})
            screened += int(res.get("screened", 0))
            by_digest = {c["digest"]: c for c in screen}
            for d, r in zip(res.get("digests", ()), res.get("results", ()), strict=False):
                failed = r.get("failed")
                if failed:
                    self._mark_tried(str(d))
                if failed is not None and (best < 0 or len(failed) < best):
                    fewest, best = by_digest[d], len(failed)
            if res.get("first_passing", -1) >= 0:
                return by_digest[res["digests"][res["first_passing"]]], fewest, best, screened
            if not res.get("stopped"):
                break
            # A candidate hung the screening: never screen it again, and screen the ones it
            # kept from their turn.
            self._mark_tried(str(res["stopped"]))
            screen = [c for c in screen if c["digest"] not in self.tried
                      and (fewest is None or c["digest"] != fewest["digest"])]
        return None, fewest, best, screened

    def _wider(self, ctx: StateContext) -> list[dict[str, Any]]:
        """The next PLAN_SITES ranked statements the plan did not offer, nor an earlier
        widening (empty when the ranking is spent)."""
        loc = ctx.artifact("LocalizationResult") or {}
        plan = ctx.artifact("Plan") or {}
        offered = {f"{s['file']}:{s['line']}" for s in plan.get("sites", ())} | self.widened
        fresh = [c for c in loc.get("candidates", ()) if c["site"] not in offered][:PLAN_SITES]
        self.widened.update(c["site"] for c in fresh)
        return [{"file": c["file"], "line": c["line"], "function": c["function"],
                 "score": c["score"]} for c in fresh]

    # -- running it -----------------------------------------------------------------------------
    def _timeout(self, ctx: StateContext) -> dict[str, Any]:
        """The per-test timeout LOCALIZE scaled to the suite's measured time, as a payload
        field of the tools that run tests (none before LOCALIZE measured)."""
        loc = ctx.artifact("LocalizationResult") or {}
        timeout = loc.get("test_timeout")
        return {"timeout": timeout} if timeout else {}

    def _failing(self, ctx: StateContext) -> list[str]:
        if self.task.visible_failing:
            return list(self.task.visible_failing)
        loc = ctx.artifact("LocalizationResult") or {}
        return list(loc.get("failing_tests", ()))

    def execute(self, ctx: StateContext) -> Mapping[str, Any]:
        manifest = ctx.artifact("RepoManifest") or {}
        return call(ctx, "sandbox.execute", {"modules": manifest.get("packages", []),
                                            "workspace": self.applied})

    def trace(self, ctx: StateContext) -> Mapping[str, Any]:
        run = ctx.inputs["ExecutionResult"]
        return call(ctx, "trace.instrument", {"stderr": run.get("stderr", ""),
                                             "workspace": self.applied})

    def test(self, ctx: StateContext) -> Mapping[str, Any]:
        res = call(ctx, "test.run", {"select": self._failing(ctx), "workspace": self.applied,
                                     **self._timeout(ctx)})
        if not self.adaptive:
            return res
        plan, patch = ctx.artifact("Plan"), ctx.artifact("Patch")
        diverged = divergence(plan, patch, res, ctx.artifact("LocalizationResult") or {}) \
            if plan is not None and patch is not None else None
        return {**res, "plan_diverged": int(diverged is not None), "divergence": diverged or {}}

    def regression(self, ctx: StateContext) -> Mapping[str, Any]:
        loc = ctx.artifact("LocalizationResult") or {}
        res: Mapping[str, Any] = call(ctx, "regression.check", {
            "baseline_failing": loc.get("failing_tests", []), "workspace": self.applied,
            **self._timeout(ctx)})
        self.regressions_caught += int(res.get("regressions", 0) > 0)
        return res

    def review(self, ctx: StateContext) -> Mapping[str, Any]:
        patch = ctx.inputs["Patch"]
        return self._compute(ctx, "Review", [patch["digest"]], lambda: call(ctx,
            "review.critic", {"patch": {"edits": patch["edits"]}, "workspace": self.applied,
                              "model_review": self.model_review,
                              **({"guards": True} if self.guards else {})}))

    def validate(self, ctx: StateContext) -> Mapping[str, Any]:
        evidence = {"tests": ctx.artifact("TestResult"), "regression":
                    ctx.artifact("RegressionResult"), "review": ctx.artifact("Review")}
        if self.guards:
            evidence["suite"] = self._suite(ctx)
        return call(ctx, "validate.accept", evidence)

    def _suite(self, ctx: StateContext) -> dict[str, Any]:
        """The whole visible suite on the patch in force: REGRESSION's run when it was of this
        patch (its regressions and the tests still failing are the failures), else a run made
        now (every failure counts: the patch must leave the visible suite green)."""
        regression = ctx.artifact("RegressionResult")
        if regression is not None and regression.get("workspace") == self.applied:
            return {"checked": int(regression.get("checked", 0)), "source": "REGRESSION",
                    "failed_tests": [*regression.get("regressed", ()),
                                     *regression.get("still_failing", ())]}
        run = call(ctx, "test.run", {"select": [], "workspace": self.applied,
                                     **self._timeout(ctx)})
        return {"checked": int(run.get("passed", 0)) + int(run.get("failed", 0)),
                "source": "VALIDATE", "failed_tests": list(run.get("failed_tests", ()))}

    def memorize(self, ctx: StateContext) -> Mapping[str, Any]:
        validation = ctx.inputs["ValidationResult"]
        patch = ctx.artifact("Patch") or {}
        return call(ctx, "memory.write", {"patch_digest": patch.get("digest", ""),
                                         "operator": patch.get("operator", ""),
                                         "site": patch.get("site", ""),
                                         "accepted": validation.get("accepted", 0),
                                         "tried": len(self.tried)})

    def reflect(self, ctx: StateContext) -> Mapping[str, Any]:
        diagnosis = ctx.inputs["Diagnosis"]
        return call(ctx, "reflect.failure", {"tried": list(self.tried),
                                            "diagnosis": diagnosis.get("root_cause", "")})

    def candidates(self, ctx: StateContext) -> Mapping[str, Any]:
        plan = ctx.artifact("Plan") or {}
        patch = ctx.artifact("Patch") or {}
        exhausted = [] if patch.get("alternatives") else [patch.get("site", "")]
        return call(ctx, "candidates.generate", {"sites": plan.get("sites", []),
                                                "exhausted_sites": exhausted})
