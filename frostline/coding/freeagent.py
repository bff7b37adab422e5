"""The free-agent baseline (a ReAct loop) and the no-single-L ablation.

The model sees every tool of the vocabulary and, at each step, names the next call as JSON
(``{"tool": ..., "payload": {...}}``) or declares itself done (``{"done": true}``); it owns
the order, the retries and the termination, within a step limit. The tools are the same
implementations the graph arms use, with payloads a model can write (the agent's latest results
fill in the rest). Its actions are measured against the canonical graph, never enforced: a tool
outside the vocabulary is an ILLEGAL_TOOL, and a call whose owning state is neither the state of
the previous call nor a declared successor of it is an ILLEGAL_TRANSITION.

With ``enforce=True`` (the no_single_l ablation: arm 4 with the single-L contract removed) the
model still owns the next step, the tool and termination, but each action must name the state
it acts in, and the graph's boundary refuses — without executing — a state that is not a
declared successor of the current one or a tool off that state's allowlist.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

from frostline.coding.interface import Instruments, TaskOutcome
from frostline.coding.setup import ACCEPT, REJECT, Setup, SolveSettings, final_check
from frostline.coding.variants import canonical
from frostline.contract.identity import digest
from frostline.graph.ledger import LedgerEvent

#: tool -> the lattice or state artifact its result is (for repeated work and freshness)
PRODUCES = {"repo.manifest": "RepoManifest", "trace.read": "LocalizationResult",
            "error.interpret": "Diagnosis", "task.decompose": "Plan", "edit.apply": "Patch",
            "review.critic": "Review", "validate.accept": "ValidationResult",
            "test.run": "TestResult", "regression.check": "RegressionResult"}
_JSON = re.compile(r"\{.*\}", re.S)

SYSTEM = """You repair a Python repository whose tests fail. Each turn, reply with ONE JSON
object and nothing else: {"tool": NAME, "payload": {...}} to call a tool, or {"done": true}
when the bug is fixed. Tools: %s.
edit.apply takes {"edits": [{"file", "search", "replace"}]} (exact SEARCH text of the original
file; test files are refused) or {"candidate": N} from patch.generate; code.graph takes
{"file": PATH} to read a file; test.run takes {"select": [test ids]} (default: the failing
tests). Every other tool needs no payload.%s"""


class Agent:
    """One free-agent run's state: history, latest results, and the counters."""

    def __init__(self, setup: Setup, settings: SolveSettings, enforce: bool) -> None:
        self.setup, self.settings, self.enforce = setup, settings, enforce
        self.graph = canonical()
        self.tools = setup.tools.registry()
        self.latest: dict[str, Any] = {}
        self.candidates: list[dict[str, Any]] = []
        self.state = "INIT"
        self.illegal_tools = self.illegal_transitions = self.redundant = self.repeated = 0
        self.regressions_caught = 0
        self.seen: set[str] = set()
        self.applied = "base"
        self.seq = 0

    def owners(self, tool: str) -> list[str]:
        return [s for s in self.graph.states if tool in self.graph.contracts[s].permitted_tools]

    def _event(self, kind: str, data: dict[str, Any]) -> None:
        self.seq += 1
        self.setup.observer.write(LedgerEvent(self.seq, "free-agent", kind, data))

    def legal(self, tool: str, state: str | None) -> str:
        """"" when the action is legal, else ILLEGAL_TOOL or ILLEGAL_TRANSITION."""
        owners = self.owners(tool)
        if not owners:
            return "ILLEGAL_TOOL"
        if self.enforce:
            if state not in self.graph.states or tool not in \
                    self.graph.contracts[state].permitted_tools:
                return "ILLEGAL_TOOL"
            targets = [state]
        else:
            targets = owners
        ok = any(t == self.state or self.graph.has_pair(self.state, t) for t in targets)
        return "" if ok else "ILLEGAL_TRANSITION"

    def payload(self, tool: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """The tool's full payload: what the model gave, completed from the latest results."""
        loc, diag = self.latest.get("trace.read", {}), self.latest.get("error.interpret", {})
        plan = self.latest.get("task.decompose") or {"sites": [
            {"file": c["file"], "line": c["line"], "function": c["function"], "score": c["score"]}
            for c in loc.get("candidates", ())[:8]]}
        p: dict[str, Any] = {"workspace": self.applied, **dict(given)}
        if tool in ("impact.analyze", "error.interpret", "task.decompose"):
            p.update(localization=loc, diagnosis=diag, trace=None)
        elif tool == "patch.generate":
            p.update(generator="template", sites=plan["sites"], diagnosis=diag, exclude=[])
        elif tool == "edit.apply":
            if "candidate" in given and isinstance(given["candidate"], int) \
                    and 0 <= given["candidate"] < len(self.candidates):
                p = {"patch": {"edits": self.candidates[given["candidate"]]["edits"]}}
            else:
                p = {"patch": {"edits": list(given.get("edits", ()))}}
        elif tool == "test.run":
            p.setdefault("select", list(self.setup.task.visible_failing)
                         or loc.get("failing_tests", []))
        elif tool == "regression.check":
            p.update(baseline_failing=loc.get("failing_tests", []))
        elif tool == "repair.iterative":
            p.update(candidates=self.candidates, select=list(self.setup.task.visible_failing))
        elif tool in ("review.critic",):
            p.update(patch=self.latest.get("edit.apply", {}).get("patch", {"edits": []}))
        elif tool == "validate.accept":
            p.update(tests=self.latest.get("test.run"), review=self.latest.get("review.critic"),
                     regression=self.latest.get("regression.check"))
        elif tool == "trace.instrument":
            p.update(stderr=self.latest.get("sandbox.execute", {}).get("stderr", ""))
        elif tool == "candidates.generate":
            p.update(sites=plan["sites"])
        return p

    def observe(self, tool: str, payload: dict[str, Any], result: Any) -> Any:
        """Record a call's result and turn it into what the model reads next."""
        if tool == "edit.apply":
            self.latest[tool] = {**result, "patch": payload["patch"]}
            self.applied = digest(payload["patch"])
            self.setup.bodies.tried.append(self.applied)
        else:
            self.latest[tool] = result
        if tool == "patch.generate":
            self.candidates = list(result.get("candidates", ()))
            return {"candidates": [{"candidate": i, "site": c["site"], "operator": c["operator"],
                                    "replace": c["edits"][0]["replace"][-200:]}
                                   for i, c in enumerate(self.candidates[:15])]}
        if tool == "trace.read":
            return {"failing_tests": result.get("failing_tests", []),
                    "failures": [{"test": f["test"], "message": f["message"][:300]}
                                 for f in result.get("failures", ())[:3]],
                    "suspects": [{k: c[k] for k in ("site", "function", "text", "score")}
                                 for c in result.get("candidates", ())[:8]]}
        if tool == "regression.check":
            self.regressions_caught += int(result.get("regressions", 0) > 0)
        if tool == "code.graph" and payload.get("file"):
            text = self.setup.workspace.tree.joinpath(str(payload["file"]))
            return {"file": payload["file"], "text": text.read_text(encoding="utf-8")[:6000]
                    if text.is_file() else "no such file"}
        return result

    def account(self, tool: str, payload: dict[str, Any], result: Any, state: str) -> None:
        """Feed the observer: the state entered, and the artifact the call produced."""
        self._event("state_entered", {"state": state, "visit": 0, "inputs": {}})
        artifact = PRODUCES.get(tool)
        if artifact is None or not isinstance(result, Mapping):
            return
        new = digest(result)
        old = self.latest.get(f"#{artifact}")
        if old == new and self.setup.observer.valid(artifact):
            self.repeated += 1
        self.latest[f"#{artifact}"] = new
        self._event("artifact", {"artifact": artifact, "changed": old != new, "digest": new})

    def step(self, action: Mapping[str, Any]) -> Any:
        tool = str(action.get("tool", ""))
        state = action.get("state")
        verdict = self.legal(tool, str(state) if state is not None else None)
        if verdict == "ILLEGAL_TOOL":
            self.illegal_tools += 1
            if self.enforce or tool not in self.tools:
                return {"error": f"ILLEGAL_TOOL: {tool!r}"}
        elif verdict == "ILLEGAL_TRANSITION":
            self.illegal_transitions += 1
            if self.enforce:
                return {"error": f"ILLEGAL_TRANSITION: {self.state} -> {state}"}
        given = action.get("payload") if isinstance(action.get("payload"), Mapping) else {}
        payload = self.payload(tool, given or {})
        key = digest([tool, payload, self.applied])
        self.redundant += key in self.seen
        self.seen.add(key)
        here = str(state) if self.enforce else (self.owners(tool) or [self.state])[0]
        try:
            result = self.tools[tool](payload)
        except Exception as exc:  # a failed tool is an observation for the model
            result = {"error": f"{type(exc).__name__}: {exc}"[:800]}
        self.account(tool, payload, result, here)
        self.state = here
        return self.observe(tool, payload, result)


def parse_action(text: str) -> dict[str, Any] | None:
    match = _JSON.search(text or "")
    if not match:
        return None
    try:
        value = json.loads(match.group(0))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def run_free_agent(setup: Setup, settings: SolveSettings, started: float, *,
                   enforce: bool) -> TaskOutcome:
    """Run the ReAct loop until the model is done, the step limit, or the model fails."""
    agent = Agent(setup, settings, enforce)
    assert setup.chat is not None
    extra = ' Also name the graph state you act in: {"state": STATE, "tool": ...}.' \
        if enforce else ""
    messages = [{"role": "system", "content": SYSTEM % (", ".join(agent.graph.tools), extra)},
                {"role": "user", "content": f"Failing tests: {list(setup.task.visible_failing)}"}]
    done, reason, malformed = False, "step_limit", 0
    for _ in range(settings.agent_steps):
        try:
            reply = setup.chat.complete(messages[:2] + messages[2:][-16:])
        except Exception as exc:
            reason = f"the model failed: {type(exc).__name__}: {exc}"[:500]
            break
        text = str(getattr(reply, "text", ""))
        action = parse_action(text)
        messages.append({"role": "assistant", "content": text[:2000]})
        if action is None:
            malformed += 1
            if malformed > 2:
                reason = "the model returned garbage: no JSON action in 3 replies"
                break
            messages.append({"role": "user", "content": "Reply with one JSON object."})
            continue
        if action.get("done"):
            done, reason = True, ""
            break
        observation = agent.step(action)
        messages.append({"role": "user", "content": json.dumps(observation, default=str)[:3000]})
    loc = agent.latest.get("trace.read", {})
    resolved, slipped, note = final_check(setup, done, list(loc.get("failing_tests", ())),
                                          settings)
    inst = Instruments(resolved, setup.chat.tokens, round(time.monotonic() - started, 3),
                       setup.chat.calls, agent.illegal_tools + agent.illegal_transitions,
                       agent.redundant, agent.repeated, agent.regressions_caught + slipped,
                       setup.observer.stale_context)
    details = {"steps": len(messages) // 2, "faults": list(setup.faults.injected),
               "regressions_slipped": slipped, **({"note": note} if note else {})}
    return TaskOutcome(setup.task.task_id, setup.arm.name, ACCEPT if done else REJECT, reason,
                       inst, details)
