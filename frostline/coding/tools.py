"""The coding graph's tool vocabulary, implemented on one task's workspace.

Each tool is a function of a JSON payload returning JSON data, so a durable run can route it
through the broker (commit, replay) like any other graph tool. Tools never read what an earlier
tool left in memory: everything they need is in their payload or in the task's base snapshot,
so a tool replayed from the store and a tool executed give the body the same data. Every tool
that runs repository code runs it in the sandbox (`testrun`); `trace.read` measures the base
tree in a scratch copy, so a rollback to LOCALIZE never reads a patched tree.

The tools that change the workspace: `edit.apply` (idempotent: the tree becomes base + patch).
The tools that run tests always deselect the task's hidden tests: the workflow never sees them.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from frostline.coding.codegraph import build_code_graph
from frostline.coding.diagnosis import diagnose, trace_of
from frostline.coding.faults import FaultInjector
from frostline.coding.generate import GenerationRequest, Generator
from frostline.coding.impact import impact, plan
from frostline.coding.interface import Task
from frostline.coding.localize import localize
from frostline.coding.manifest import RepoManifest, build_manifest
from frostline.coding.overfit import degenerate
from frostline.coding.plandag import build_plan, replan
from frostline.coding.review import critic, model_review, validate
from frostline.coding.testrun import (
    SandboxSettings,
    run_pytest,
    run_python,
    scaled_timeout,
    screen_candidates,
    task_args,
)
from frostline.coding.workspace import PatchRefused, Workspace

Tool = Callable[[Mapping[str, Any]], Any]
IMPORT_PROBE = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"


@dataclass
class ToolSettings:
    sandbox: SandboxSettings
    screen_limit: int = 48  # candidates screened by one repair.iterative call
    samples: int = 3  # n of the model generator


class CodingTools:
    """The tools of one task's run. `generators` maps a generator name to its generator."""

    def __init__(self, task: Task, workspace: Workspace, generators: Mapping[str, Generator],
                 settings: ToolSettings, faults: FaultInjector, memory: Path) -> None:
        self.task = task
        self.ws = workspace
        self.generators = dict(generators)
        self.settings = settings
        self.faults = faults
        self.memory = memory
        self.executed: list[str] = []  # tool names, in the order they actually ran
        self.seconds: dict[str, float] = {}  # wall seconds spent per tool

    # -- plumbing ---------------------------------------------------------------------------
    def registry(self) -> dict[str, Tool]:
        table: dict[str, Tool] = {
            "repo.manifest": self.repo_manifest, "code.graph": self.code_graph,
            "trace.read": self.trace_read, "impact.analyze": self.impact_analyze,
            "error.interpret": self.error_interpret, "task.decompose": self.task_decompose,
            "patch.generate": self.patch_generate, "edit.apply": self.edit_apply,
            "sandbox.execute": self.sandbox_execute, "trace.instrument": self.trace_instrument,
            "test.run": self.test_run, "regression.check": self.regression_check,
            "repair.iterative": self.repair_iterative, "review.critic": self.review_critic,
            "validate.accept": self.validate_accept, "memory.write": self.memory_write,
            "reflect.failure": self.reflect_failure,
            "candidates.generate": self.candidates_generate,
        }
        return {name: self._guarded(name, fn) for name, fn in table.items()}

    def _guarded(self, name: str, fn: Tool) -> Tool:
        def call(payload: Mapping[str, Any]) -> Any:
            self.executed.append(name)
            kind = self.faults.next(name)
            if kind is not None and kind != "malformed_model_output":
                self.faults.raise_for(name, kind)
            if kind == "malformed_model_output":
                payload = dict(payload, garbage=True)
            started = time.monotonic()
            try:
                return fn(payload)
            finally:
                self.seconds[name] = round(self.seconds.get(name, 0.0)
                                           + time.monotonic() - started, 3)
        return call

    def _manifest(self) -> RepoManifest:
        return build_manifest(self.ws.base, self.task.test_args)

    def _hidden(self) -> list[str]:
        return list(self.task.hidden)

    def _sandbox(self, payload: Mapping[str, Any]) -> SandboxSettings:
        """The sandbox settings of a test run, with the per-test timeout the payload asks for
        (LOCALIZE's measure of the suite) when it is below the configured one."""
        sandbox = self.settings.sandbox
        asked = payload.get("timeout")
        if isinstance(asked, int | float) and 0 < asked < sandbox.test_timeout:
            return replace(sandbox, test_timeout=float(asked))
        return sandbox

    # -- RECONNAISSANCE, LOCALIZE, IMPACT, DEBUG, PLAN -----------------------------------------
    def repo_manifest(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return self._manifest().to_dict()

    def code_graph(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return build_code_graph(self.ws.base, self._manifest().files).to_dict()

    def trace_read(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The spectrum of the base tree: the suite with per-test coverage, ranked (Ochiai)."""
        m = self._manifest()
        scratch = Path(tempfile.mkdtemp(prefix="frostline-base-"))
        try:
            tree = scratch / "tree"
            shutil.copytree(self.ws.base, tree, symlinks=True)
            report = run_pytest(tree, self.settings.sandbox, deselect=self._hidden(),
                                extra_args=task_args(self.task), coverage=True,
                                paths=self.task.test_paths)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        graph = build_code_graph(self.ws.base, m.files)
        result = localize(report, self.task.visible_failing, m.files, graph,
                          self.ws.base_texts(list(m.files)))
        # The later runs' per-test timeout, scaled to what this run measured.
        return {**result, "suite_seconds": round(report.duration, 3),
                "test_timeout": scaled_timeout(report, self.settings.sandbox.test_timeout),
                "hard_stopped": list(report.hard_stopped)}

    def impact_analyze(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        graph = build_code_graph(self.ws.base, self._manifest().files)
        return impact(payload["localization"], graph)

    def error_interpret(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return diagnose(payload["localization"], payload.get("trace"))

    def task_decompose(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The static plan, or with `adaptive` the plan DAG over the code graph; given the
        `plan` in force and how an edit `divergence` from it, the plan revised over the code
        graph of the tree with that edit in force."""
        if not payload.get("adaptive"):
            return plan(payload["localization"], payload["diagnosis"])
        files = self._manifest().files
        if payload.get("divergence") and payload.get("plan"):
            graph = build_code_graph(self.ws.tree, files)
            return replan(payload["plan"], payload["divergence"], payload["localization"], graph)
        return build_plan(payload["localization"], payload["diagnosis"],
                          build_code_graph(self.ws.base, files))

    # -- GENERATE, EDIT, EXECUTE, TRACE -----------------------------------------------------------
    def patch_generate(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        name = str(payload.get("generator", "template"))
        generator = self.generators.get(name)
        if generator is None:
            return {"candidates": [], "model_calls": 0, "tokens": 0, "malformed": 0,
                    "error": f"no {name} generator in this run"}
        sites = list(payload.get("sites", ()))
        request = GenerationRequest(
            sites, self.ws.base_texts(sorted({str(s["file"]) for s in sites})),
            payload.get("diagnosis", {}), payload.get("failures", ()),
            frozenset(payload.get("exclude", ())), int(payload.get("n", self.settings.samples)))
        result = generator.generate(request).to_dict()
        for c in result.get("candidates", ()):
            c["degenerate"] = self._degenerate(c)
        if payload.get("garbage"):  # an injected malformed model output
            result.update(candidates=[], malformed=result["malformed"] + 1,
                          error="the model's reply held no SEARCH/REPLACE block")
        return result

    def _degenerate(self, candidate: Mapping[str, Any]) -> list[str]:
        """The degenerate rewrites a candidate makes (`overfit.degenerate`); none for one the
        workspace refuses (EDIT will say why)."""
        try:
            new = self.ws.check_patch(candidate)
        except PatchRefused:
            return []
        base = self.ws.base_texts(sorted(new))
        return [f"{rel} {why}" for rel, text in sorted(new.items()) if rel.endswith(".py")
                for why in degenerate(base[rel], text)]

    def edit_apply(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        patch = dict(payload["patch"])
        new = self.ws.materialise(patch)
        return {"applied": 1, "files": sorted(new), "diff": self.ws.diff(patch)}

    def sandbox_execute(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        modules = [str(m) for m in payload.get("modules", ())]
        r = run_python(self.ws.tree, ["-c", IMPORT_PROBE, *modules], self.settings.sandbox,
                       wall_seconds=min(self.settings.sandbox.wall_seconds, 120.0))
        return {"exit_code": r.returncode if not r.timed_out else 124,
                "stdout": r.stdout.decode("utf-8", "replace")[-2000:],
                "stderr": r.stderr.decode("utf-8", "replace")[-4000:],
                "workspace": payload.get("workspace", "")}

    def trace_instrument(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        text = str(payload.get("stderr", ""))
        trace = trace_of([{"test": "<execute>", "text": text, "message": text[-200:]}])
        return {**trace, "workspace": payload.get("workspace", "")}

    # -- TEST, REPAIR, REGRESSION, REVIEW, VALIDATE, MEMORIZE --------------------------------------
    def test_run(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        select = [str(t) for t in payload.get("select", ())]
        report = run_pytest(self.ws.tree, self._sandbox(payload), select=select,
                            deselect=self._hidden(), extra_args=task_args(self.task),
                            paths=self.task.test_paths)
        return {**report.to_dict(), "workspace": payload.get("workspace", "")}

    def regression_check(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        report = run_pytest(self.ws.tree, self._sandbox(payload), deselect=self._hidden(),
                            extra_args=task_args(self.task),
                            paths=self.task.test_paths)
        baseline = set(payload.get("baseline_failing", ()))
        regressed = [t for t in report.failed if t not in baseline]
        still = [t for t in report.failed if t in baseline]
        return {"regressions": len(regressed), "regressed": regressed[:50],
                "still_failing": still[:50], "checked": len(report.outcomes),
                "workspace": payload.get("workspace", "")}

    def repair_iterative(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Screen candidate patches: the failing tests (`select`) first, then, for a candidate
        that passes them, the tests covering the suspicious statements (`confirm`); the first
        to pass both, else the one with the fewest failures."""
        texts: list[dict[str, str]] = []
        kept: list[Mapping[str, Any]] = []
        # A candidate replaces the patch in force, so it is screened on the base: the files
        # that patch touched and the candidate does not are put back to their base text.
        undo = self.ws.base_texts(sorted(self.ws.applied))
        for c in list(payload.get("candidates", ()))[: self.settings.screen_limit]:
            try:
                texts.append({**undo, **self.ws.check_patch(c)})
                kept.append(c)
            except PatchRefused:
                continue
        select = [str(t) for t in payload.get("select", ())]
        confirm = [str(t) for t in payload.get("confirm", ()) if t not in set(select)]
        if not kept:
            return {"screened": 0, "results": [], "first_passing": -1, "best": -1}
        s = screen_candidates(self.ws.tree, self._sandbox(payload), texts, select=select,
                              confirm=confirm, stop_first=True, extra_args=task_args(self.task))
        results = [{"digest": c.get("digest"), "failed": None if r is None else list(r)}
                   for c, r in zip(kept, s.results, strict=True)]
        passing = [i for i, r in enumerate(s.results) if r == ()]
        ranked = sorted((len(r), i) for i, r in enumerate(s.results) if r is not None)
        return {"screened": len(kept), "results": results, "timed_out": s.timed_out,
                "stopped": "" if s.stopped is None else kept[s.stopped].get("digest", ""),
                "first_passing": passing[0] if passing else -1,
                "best": ranked[0][1] if ranked else -1,
                "digests": [c.get("digest") for c in kept]}

    def review_critic(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        review = critic(payload["patch"], self.ws, guards=bool(payload.get("guards")))
        chat = getattr(self.generators.get("model"), "model", None)
        if payload.get("model_review") and chat is not None:
            try:
                diff = self.ws.diff(payload["patch"])
            except PatchRefused:
                diff = ""
            notes, error = model_review(chat, diff)
            review.update(model_notes=notes, model_error=error)
        return review

    def validate_accept(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        return validate(payload.get("tests"), payload.get("regression"), payload.get("review"),
                        payload.get("suite"))

    def memory_write(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Record an outcome under its key (task and patch): writing a key again replaces it,
        so the write is idempotent."""
        key = f"{self.task.task_id}:{str(payload.get('patch_digest', ''))[:16]}"
        self.memory.parent.mkdir(parents=True, exist_ok=True)
        memory = json.loads(self.memory.read_text(encoding="utf-8")) \
            if self.memory.is_file() else {}
        memory[key] = dict(payload)
        tmp = self.memory.with_suffix(".tmp")
        tmp.write_text(json.dumps(memory, sort_keys=True, indent=1), encoding="utf-8")
        tmp.replace(self.memory)
        return {"key": key, "written": 1}

    def reflect_failure(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        tried = list(payload.get("tried", ()))
        lessons = [f"{len(tried)} patch(es) at the suspect sites did not make the failing tests "
                   "pass", "the localization's lower-ranked sites are the next hypotheses"]
        return {"lessons": lessons, "hypothesis_count": max(len(tried), 1)}

    def candidates_generate(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        sites = list(payload.get("sites", ()))
        remaining = [s for s in sites if f"{s['file']}:{s['line']}" not in
                     set(payload.get("exhausted_sites", ()))]
        best = max((float(s.get("score", 0)) for s in remaining), default=0.0)
        return {"candidates": remaining, "best_score": best,
                "requires_replan": int(not remaining)}
