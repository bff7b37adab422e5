"""A small, deterministic coding scenario for the canonical graph.

A repository holds `calc.add`, which subtracts; its test fails. The run localizes the fault,
diagnoses it, plans, and generates a first patch that only fixes positive numbers: the tests
still fail, so the retry edge TEST -> REPAIR is taken and the repair fixes the arithmetic. The
independent reviewer then finds a verified defect (the patched function lost its docstring), so
the rollback edge REVIEW -> REPAIR is taken; the second repair restores it, and the run is
accepted. With FROSTLINE_EXAMPLE_VARIANT=reject in the environment the repairs never pass the
tests, and the exhausted retry budget ends the run in TERMINAL_REJECT (out_of_budget).

Every tool is real: files are written to a temporary workspace (removed when the scenario is
dropped, or at exit), and execution, tests and the regression check run in child Python
processes. The "model" is a scripted client: a dozen
lines implementing the graph's `ModelClient` protocol that hand back hand-written replies, so
the scenario is deterministic. A real client answers the same `SlotRequest` (the state, its
inputs, its output schema and its allowed tools) from a model.

Run it: ``python -m frostline graph run canonical --bodies examples/graph/fix_failing_test.py``
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from frostline.errors import RunError
from frostline.graph.engine import StateContext, model_body
from frostline.graph.slot import SlotRequest

BUGGY = 'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n'
FIRST_TRY = 'def add(a, b):\n    """Return the sum of a and b."""\n    return abs(a) + abs(b)\n'
FIXED_NO_DOC = "def add(a, b):\n    return a + b\n"
FIXED = 'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n'

TESTS = (
    "from calc import add\n\n"
    "def test_small():\n    assert add(2, 3) == 5\n\n"
    "def test_negative():\n    assert add(-2, -3) == -5\n"
)
REGRESSION = "from calc import add\n\ndef test_zero():\n    assert add(0, 0) == 0\n"

# Runs every test_* function of the given modules in a child process and prints a JSON summary.
RUNNER = r"""
import importlib, json, sys, traceback
passed, failures = 0, []
for mod in sys.argv[1:]:
    m = importlib.import_module(mod)
    for name in sorted(n for n in dir(m) if n.startswith("test_")):
        try:
            getattr(m, name)()
            passed += 1
        except Exception as exc:
            failures.append({"test": f"{mod}.{name}", "error": repr(exc)})
print(json.dumps({"passed": passed, "failed": len(failures), "failures": failures}))
"""


class ScriptedClient:
    """A `ModelClient` that answers each state's slot with the next hand-written reply for it.

    A reply is the slot's JSON shape: ``{"output": {...}}`` for an answer, or
    ``{"tool_calls": [{"tool": ..., "payload": {...}}]}`` for a turn that uses the state's tools.
    """

    def __init__(self, replies: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
        self.replies = {state: list(r) for state, r in replies.items()}

    def complete(self, request: SlotRequest) -> Mapping[str, Any]:
        queue = self.replies.get(request.state)
        if not queue:
            # a failed visit, which the graph's failure edges handle like any other
            raise RunError(f"the script has no reply left for {request.state}", state=request.state)
        return queue.pop(0)


class Workspace:
    """A temporary repository the tools act on."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="frostline-example-"))
        # The tools hold the workspace; once nothing does (or the process exits), it goes.
        self.removal = weakref.finalize(self, shutil.rmtree, self.root, ignore_errors=True)
        (self.root / "calc.py").write_text(BUGGY)
        (self.root / "test_calc.py").write_text(TESTS)
        (self.root / "test_regression.py").write_text(REGRESSION)

    def python(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {"PATH": os.environ.get("PATH", ""), "PYTHONDONTWRITEBYTECODE": "1"}
        return subprocess.run([sys.executable, *args], cwd=self.root, capture_output=True, text=True,
                              timeout=60, env=env, check=False)

    def run_tests(self, *modules: str) -> dict[str, Any]:
        proc = self.python("-c", RUNNER, *modules)
        if proc.returncode != 0:
            return {"passed": 0, "failed": 1, "failures": [{"test": "<runner>", "error": proc.stderr[-500:]}]}
        result: dict[str, Any] = json.loads(proc.stdout)
        return result

    # -- tools (the harness's stage primitives) ------------------------------------------------
    def tools(self) -> dict[str, Any]:
        def manifest(_: Mapping[str, Any]) -> dict[str, Any]:
            files = sorted(p.name for p in self.root.glob("*.py"))
            return {"root": self.root.name, "files": files, "file_count": len(files)}

        def code_graph(payload: Mapping[str, Any]) -> dict[str, Any]:
            tree = ast.parse((self.root / str(payload.get("file", "calc.py"))).read_text())
            return {"functions": [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]}

        def trace_read(_: Mapping[str, Any]) -> dict[str, Any]:
            return self.run_tests("test_calc")

        def impact(_: Mapping[str, Any]) -> dict[str, Any]:
            users = sorted(p.name for p in self.root.glob("*.py") if "from calc import" in p.read_text())
            return {"affected": users, "affected_count": len(users)}

        def decompose(_: Mapping[str, Any]) -> dict[str, Any]:
            steps = ["fix calc.add", "keep the docstring", "run the tests"]
            return {"steps": steps, "step_count": len(steps), "satisfiable": 1}

        def apply(payload: Mapping[str, Any]) -> dict[str, Any]:
            for name, text in dict(payload["files"]).items():
                (self.root / name).write_text(text)
            return {"applied": 1}

        def execute(_: Mapping[str, Any]) -> dict[str, Any]:
            proc = self.python("-c", "import calc; calc.add(1, 2)")
            return {"exit_code": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr[-500:]}

        def instrument(_: Mapping[str, Any]) -> dict[str, Any]:
            proc = self.python("-X", "faulthandler", "-c", "import calc; calc.add(1, 2)")
            return {"events": [proc.stderr[-500:]], "event_count": 1}

        def critic(_: Mapping[str, Any]) -> dict[str, Any]:
            tree = ast.parse((self.root / "calc.py").read_text())
            fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "add")
            defects = [] if ast.get_docstring(fn) else ["calc.add lost its docstring"]
            return {"verified_defects": len(defects), "notes": defects}

        def memory(payload: Mapping[str, Any]) -> dict[str, Any]:
            (self.root / ".memory.json").write_text(json.dumps(dict(payload), sort_keys=True))
            return {"key": "calc.add", "written": 1}

        return {
            "repo.manifest": manifest, "code.graph": code_graph, "trace.read": trace_read,
            "impact.analyze": impact, "task.decompose": decompose, "edit.apply": apply,
            "sandbox.execute": execute, "trace.instrument": instrument,
            "test.run": lambda _: self.run_tests("test_calc"),
            "regression.check": lambda _: self.run_tests("test_calc", "test_regression"),
            "review.critic": critic, "memory.write": memory,
            "validate.accept": lambda _: {"ok": 1},
        }


def _patch(text: str) -> dict[str, Any]:
    return {"output": {"files": {"calc.py": text}, "diff": f"calc.py -> {len(text)} bytes", "applied": 0}}


def build() -> dict[str, Any]:
    """A fresh scenario: ``{"bodies", "tools", "model"}`` for `Engine` (and `graph run`)."""
    ws = Workspace()
    reject = os.environ.get("FROSTLINE_EXAMPLE_VARIANT") == "reject"

    def recon(ctx: StateContext) -> Any:
        return ctx.tool("repo.manifest")

    def impact(ctx: StateContext) -> Any:
        return ctx.tool("impact.analyze")

    def plan(ctx: StateContext) -> Any:
        return ctx.tool("task.decompose")

    def edit(ctx: StateContext) -> Any:
        patch = ctx.artifact("Patch") or {}
        ctx.tool("edit.apply", {"files": patch["files"]})
        return dict(patch, applied=1)

    def execute(ctx: StateContext) -> Any:
        return ctx.tool("sandbox.execute")

    def trace(ctx: StateContext) -> Any:
        return ctx.tool("trace.instrument")

    def test(ctx: StateContext) -> Any:
        return ctx.tool("test.run")

    def regression(ctx: StateContext) -> Any:
        r = ctx.tool("regression.check")
        return {"regressions": r["failed"], "checked": r["passed"] + r["failed"]}

    def review(ctx: StateContext) -> Any:
        return ctx.tool("review.critic")

    def validate(ctx: StateContext) -> Any:
        tests, reg = ctx.artifact("TestResult") or {}, ctx.artifact("RegressionResult") or {}
        review_ = ctx.artifact("Review") or {}
        accepted = int(tests.get("failed") == 0 and reg.get("regressions") == 0
                       and review_.get("verified_defects") == 0)
        ctx.tool("validate.accept", {"accepted": accepted})
        return {"accepted": accepted, "implicates_diagnosis": 0, "reasons": [] if accepted else ["failed"]}

    def memorize(ctx: StateContext) -> Any:
        return ctx.tool("memory.write", {"lesson": "add must add", "patch": ctx.artifact("Patch")})

    def reflect(ctx: StateContext) -> Any:
        return {"lessons": ["re-read the failing assertion"], "hypothesis_count": 1}

    def candidates(ctx: StateContext) -> Any:
        return {"candidates": ["fix the operator"], "best_score": 0.7, "requires_replan": 0}

    repairs = [_patch(FIRST_TRY), _patch(FIRST_TRY), _patch(FIRST_TRY)] if reject else \
        [_patch(FIXED_NO_DOC), _patch(FIXED)]
    model = ScriptedClient({
        "LOCALIZE": [
            {"tool_calls": [{"tool": "code.graph", "payload": {"file": "calc.py"}},
                            {"tool": "trace.read", "payload": {}}]},
            {"output": {"candidates": ["calc.py:add"], "top_candidate": "calc.py:add",
                        "top_candidate_confidence": 0.9}},
        ],
        "DEBUG": [{"output": {"root_cause": "add subtracts its arguments", "confidence": 0.8,
                              "patch_local": 1}}],
        "GENERATE": [_patch(FIRST_TRY)],
        "REPAIR": repairs,
    })
    bodies = {
        "RECONNAISSANCE": recon, "LOCALIZE": model_body, "IMPACT": impact, "DEBUG": model_body,
        "PLAN": plan, "GENERATE": model_body, "EDIT": edit, "EXECUTE": execute, "TRACE": trace,
        "REFLECT": reflect, "CANDIDATES": candidates, "REPAIR": model_body, "TEST": test,
        "REGRESSION": regression, "REVIEW": review, "VALIDATE": validate, "MEMORIZE": memorize,
    }
    return {"bodies": bodies, "tools": ws.tools(), "model": model, "workspace": ws.root}
