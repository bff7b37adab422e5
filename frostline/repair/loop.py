"""The bounded repair loop: ask a model for a candidate until one is admissible.

The loop is a generator protocol, so it is tested against scripted replies and driven by any
model client::

    loop = repair_loop(task)
    messages = next(loop)                 # the first prompt
    messages = loop.send(reply_text)      # ... the next prompt, until StopIteration(result)

Each reply is judged in the order the host would: extract the code block (prose without code
is refused), run the script rules of the checker (envelope rules stay with the host's grant
set), require that the number of capability call expressions does not drop below the committed
script's (a truncated script that still parses is caught here), and gate the candidate against
the frozen sites. A candidate identical to the committed script (up to comments and formatting)
is refused too: it is the script that failed. Every refusal is fed back in the next prompt. After `max_rewrites` model calls
the loop gives up. Executing an accepted candidate is a separate decision of the caller.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.contract.gate import (
    CandidateSite,
    Counterexample,
    FrozenSite,
    frozen_map,
    gate,
    rebase,
)
from frostline.contract.rebind import vanished_sites
from frostline.contract.verdict import GateVerdict
from frostline.errors import DefinitionError, RunNotFound, ScriptRejected
from frostline.repair.completion import ChatClient, Reply
from frostline.repair.extract import extract_code
from frostline.repair.feedback import RewriteFeedback, Usage
from frostline.repair.prompt import Message, build_messages
from frostline.script import check, sites

if TYPE_CHECKING:
    from frostline.runtime.runners import Runner
    from frostline.store.base import Store



@dataclass(frozen=True)
class RepairTask:
    """Everything the loop needs: the committed script, its frozen sites, the failure."""

    committed_source: str
    frozen: Mapping[str, FrozenSite]
    failure: Mapping[str, Any] | None = None
    catalog: Catalog = DEFAULT_CATALOG
    envelope: Envelope | None = None
    max_rewrites: int = 3
    # relocation "rebind": a candidate the gate stops only because committed calls moved is
    # given to `trace` (candidate source → the gate verdict with the dry replay's, see
    # frostline.runtime.dry_replay.gate_with_trace); admitted, it needs no rewrite
    relocation: str = "stop"
    trace: Callable[[str], GateVerdict] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.max_rewrites, int) or self.max_rewrites < 1:
            raise DefinitionError(f"max_rewrites must be a positive integer, got {self.max_rewrites!r}")


@dataclass(frozen=True)
class RepairResult:
    """The accepted candidate (None when every rewrite was refused) and per-rewrite feedback."""

    accepted: str | None
    rewrites: list[RewriteFeedback]
    usage_total: Usage

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "rewrites": [r.to_dict() for r in self.rewrites],
                "usage_total": dict(self.usage_total)}


def repair_loop(task: RepairTask) -> Generator[list[Message], str | Reply, RepairResult]:
    """The loop as a generator: yields prompts, receives replies, returns the RepairResult."""
    committed_calls = _call_expressions(task.committed_source, task)
    committed_shape = _shape(task.committed_source)
    grants = task.envelope.grant_set(task.catalog) if task.envelope is not None else None
    rewrites: list[RewriteFeedback] = []
    previous: RewriteFeedback | None = None
    for n in range(1, task.max_rewrites + 1):
        reply = yield build_messages(catalog=task.catalog, frozen=task.frozen,
                                     committed_source=task.committed_source,
                                     failure=task.failure, previous=previous, grants=grants,
                                     relocation=task.relocation)
        text, usage = _unpack(reply)
        feedback = judge(n, text, usage, task, committed_calls, committed_shape)
        rewrites.append(feedback)
        if feedback.ok:
            return RepairResult(feedback.candidate, rewrites, _total(rewrites))
        previous = feedback
    return RepairResult(None, rewrites, _total(rewrites))


def judge(n: int, text: str, usage: Usage, task: RepairTask, committed_calls: int,
          committed_shape: str | None) -> RewriteFeedback:
    """Check one reply: code block, script rules, call count, gate (all reported at once)."""
    code = extract_code(text)
    if code is None:
        return RewriteFeedback(n, False, "no code block: reply with the complete script in one "
                               "```python code block", usage=usage)
    report = check(code, task.envelope, rules="script", catalog=task.catalog)
    violations = [v.to_dict() for v in report.violations]
    reasons: list[str] = []
    if not report.valid:
        rules = sorted({v.rule for v in report.errors})
        reasons.append(f"script rules violated ({', '.join(rules)})")
    parsed = not any(v.rule == "R00" for v in report.errors)
    counterexamples: list[dict[str, Any]] = []
    if parsed:
        calls = report.facts.call_expressions
        if calls < committed_calls:
            reasons.append(f"dropped capability calls: the candidate has {calls} call "
                           f"expression(s), the committed script {committed_calls}")
        result = gate(task.frozen, report.facts.sites)
        if not result.accepted:
            counterexamples = [c.to_dict() for c in result.counterexamples]
            traced = (_traced(task, code, result.counterexamples)
                      if report.valid and not reasons else None)
            if traced is None or not traced.accepted:
                kinds = sorted({c.kind for c in result.counterexamples})
                reasons.append(f"gate stopped it ({', '.join(kinds)} frozen site)"
                               + (" and the dry replay did not admit it" if traced else ""))
                trace = traced.trace if traced is not None else None
                counterexamples += [{**c.to_dict(), "kind": f"trace {c.kind}"}
                                    for c in (trace.counterexamples if trace else ())]
            else:
                counterexamples = []
        if not reasons and committed_shape is not None and _shape(code) == committed_shape:
            reasons.append("unchanged: the candidate is the committed script, which failed")
    if reasons:
        return RewriteFeedback(n, False, "; ".join(reasons), violations, counterexamples,
                               usage, code)
    return RewriteFeedback(n, True, "accepted", violations, [], usage, code)


def _traced(task: RepairTask, code: str,
            counterexamples: tuple[Counterexample, ...]) -> GateVerdict | None:
    """The gate's verdict with the trace check's on a candidate the callsite gate stopped only
    because committed calls moved, under relocation `rebind`; None when it does not apply."""
    if task.trace is None or task.relocation != "rebind":
        return None
    if vanished_sites(counterexamples) is None:
        return None
    return task.trace(code)


def repair(client: ChatClient, task: RepairTask) -> RepairResult:
    """Drive `repair_loop` with a model client (at most `task.max_rewrites` calls).

    Example: ``repair(client_from_spec("openai:gpt-4o-mini"), task).accepted``
    """
    loop = repair_loop(task)
    try:
        messages = next(loop)
        while True:
            messages = loop.send(client.complete(messages))
    except StopIteration as stop:
        result: RepairResult = stop.value
        return result


def _unpack(reply: str | Reply) -> tuple[str, Usage]:
    if isinstance(reply, str):
        return reply, {}
    usage: Any = getattr(reply, "usage", None)
    to_dict = getattr(usage, "to_dict", None)
    if callable(to_dict):
        usage = to_dict()
    return reply.text, dict(usage) if isinstance(usage, Mapping) else {}


def _total(rewrites: list[RewriteFeedback]) -> Usage:
    total: Usage = {}
    for r in rewrites:
        for key, value in r.usage.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total


def _call_expressions(source: str, task: RepairTask) -> int:
    report = check(source, task.envelope, rules="script", catalog=task.catalog)
    return report.facts.call_expressions


def _shape(source: str) -> str | None:
    """The normalized AST of a script (comments and formatting removed), or None."""
    try:
        return ast.dump(ast.parse(source))
    except (SyntaxError, ValueError):
        return None


# Attempts that never ran (refused before a sandbox started) are not the committed script.
_NOT_RUN = frozenset({"rejected", "gate_stopped"})


def task_from_store(store: Store, run_id: str, *, catalog: Catalog = DEFAULT_CATALOG,
                    max_rewrites: int = 3, relocation: str | None = None,
                    runner: Runner | None = None) -> RepairTask:
    """Build the repair task of a run: its last executed script, failure and frozen sites.

    Under relocation `rebind` (`relocation`, else the run's envelope) and with a `runner` for
    the dry replay, a candidate that only moves committed calls is judged by the trace check.

    Raises RunNotFound for an unknown run and DefinitionError when there is nothing to repair
    (no attempt ran, or the last one succeeded).
    """
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r} in the store", run_id=run_id)
    if run.kind != "script":
        raise DefinitionError(f"run {run_id!r} is a {run.kind} run; only a script run is "
                              "repaired by rewriting its script", run_id=run_id, kind=run.kind)
    attempts = store.list_attempts(run_id)
    ran = [a for a in attempts if a.status not in _NOT_RUN]
    if not ran:
        raise DefinitionError(f"run {run_id!r} has no executed attempt to repair; run a script "
                              "first with `frostline run`", run_id=run_id)
    last = max(ran, key=lambda a: a.number)
    if last.status in ("succeeded", "running"):
        raise DefinitionError(f"attempt {last.number} of run {run_id!r} is {last.status}; "
                              "there is no failure to repair", run_id=run_id,
                              attempt=last.number)
    # Quote each frozen site at its line in the script the prompt shows (the gate itself only
    # compares σ, capability and fingerprint, so this changes no verdict).
    frozen = rebase(frozen_map(store.list_slots(run_id), attempts), last.source,
                    _sites_or_empty(last.source))
    envelope = Envelope.from_dict(run.envelope, catalog) if run.envelope else None
    failure = dict(last.error) if last.error else {"status": last.status}
    policy = relocation or (envelope or Envelope()).relocation.value
    trace = None
    if policy == "rebind" and runner is not None:
        from frostline.runtime.dry_replay import gate_with_trace

        def trace(candidate: str) -> GateVerdict:
            return gate_with_trace(store, run_id, candidate, runner=runner, catalog=catalog,
                                   relocation="rebind")
    return RepairTask(committed_source=last.source, frozen=frozen, failure=failure,
                      catalog=catalog, envelope=envelope, max_rewrites=max_rewrites,
                      relocation=policy, trace=trace)


def _sites_or_empty(source: str) -> list[CandidateSite]:
    try:
        return list(sites(source))
    except (ScriptRejected, SyntaxError, ValueError):  # the description falls back, no verdict
        return []
