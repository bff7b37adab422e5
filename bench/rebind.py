"""Refactor-safe repairs (issue 30): `relocation = "rebind"` against `"stop"`, in one run.

    python -m bench.rebind [--scripts 20] [--cases 200] [--timing-runs 3]

Prints four tables:

1. Table VII side by side: the seven deterministic edits of bench.paper.gate_edits on the
   committed (maximal) prefixes of the first N valid corpus scripts, the gate's verdict under
   `stop` and the trace check's under `rebind`; every candidate `rebind` admits is then
   executed, and the provider log counts what it paid and how many of those payments repeat a
   committed request beyond what the candidate issues (duplicates: must be 0).
2. The refactoring generator of the property tests (bench.refactor: helper extraction, block
   wraps, loop rewrites, computed payloads, reorderings, alone and in pairs) after failure
   points 1..4, over the corpus: admitted, stopped, paid calls, duplicates, stale results.
3. The demo's moved repair, and E2b (Table III's four repairs): paid calls and rewrites needed
   under each.
4. The cost of one dry replay in the bubblewrap sandbox (a wrap of the last committed call of
   each of the N scripts; p50/p95), against one sandbox start (a script that makes no call).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import statistics
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bench.corpus import CorpusScript, load
from bench.paper.common import Lab, table
from bench.paper.gate_edits import EDIT_FUNCS, EDITS, _frozen_calls, _Src
from bench.refactor import REFACTORINGS, call_count
from frostline.capabilities.envelope import Envelope
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.contract.gate import frozen_map
from frostline.contract.identity import digest
from frostline.contract.prefix import load_prefix
from frostline.contract.verdict import GateVerdict
from frostline.errors import ProviderError
from frostline.runtime.dry_replay import DryReplay, dry_replay, gate_with_trace
from frostline.runtime.execute import execute
from frostline.runtime.runners import Job, Runner
from frostline.script import annotate, sites
from frostline.testing import Delegating, InProcessRunner

REBIND = {"relocation": "rebind", "budget": {"usd": 100.0, "calls": 1000}, "ledger_policy": "warn"}


class FailAt(Delegating):
    """A provider that fails its `fail_at`-th call (1-based) with an HTTP 503, else delegates:
    the random failure point of an attempt."""

    def __init__(self, inner: Provider, fail_at: int) -> None:
        super().__init__(inner)
        self.fail_at = fail_at
        self.calls = 0

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        self.calls += 1
        if self.calls == self.fail_at:
            raise ProviderError(f"{capability}: injected failure (HTTP 503)", status=503)
        return await self.inner.invoke(capability, payload, ctx)


def choose(count: int) -> list[CorpusScript]:
    return sorted((s for s in load("valid") if call_count(s.source) > 0),
                  key=lambda s: s.name)[:count]


def _paid_beyond(lab: Lab, before: int, out: Any, committed: Counter[tuple[str, str]]) -> int:
    """Provider payments since `before` that repeat a committed request more often than the
    candidate issued it beyond its committed count (the issue's duplicate)."""
    paid = Counter((e["capability"], digest(e["payload"])) for e in lab.log()[before:])
    issued = Counter((c["capability"], c["digest"]) for c in out.calls if c.get("digest"))
    return sum(max(0, n - max(0, issued[r] - committed[r])) for r, n in paid.items())


SETTLED = ("computed payload", "wrap in a new block")  # the edits rebind is expected to admit


def _why(verdict: GateVerdict) -> str:
    trace = verdict.trace
    if trace is None:
        kinds = sorted({c.kind for c in verdict.counterexamples})
        return f"not a relocation ({', '.join(kinds)})"
    return "; ".join(c.message for c in trace.counterexamples[:1])


def table_vii(scripts: Sequence[CorpusScript], lab: Lab, runner: Runner) -> str:
    rows: dict[str, Counter[str]] = {e: Counter() for e in EDITS}
    stopped: list[str] = []
    for script in scripts:
        run_id = lab.fresh_id(f"vii-{script.name}")
        first = lab.run(run_id, script.source, args=script.args, envelope=REBIND)
        if first.status != "succeeded":
            continue
        frozen = frozen_map(lab.store.list_slots(run_id), lab.store.list_attempts(run_id))
        for edit in EDITS:
            src = _Src(script.source)
            candidate = EDIT_FUNCS[edit](src, _frozen_calls(src, frozen))
            if candidate is None or candidate == script.source:
                continue
            verdict = gate_with_trace(lab.store, run_id, candidate, runner=runner,
                                      relocation="stop")
            c = rows[edit]
            c["applied"] += 1
            c["stop accepts"] += verdict.accepted
            traced = gate_with_trace(lab.store, run_id, candidate, runner=runner)
            c["rebind accepts"] += traced.accepted
            if not traced.accepted and edit in SETTLED:
                stopped.append(f"  {edit} stopped under rebind: {script.name}: "
                               + _why(traced))
            if traced.accepted and not verdict.accepted:
                committed = Counter((s.capability, s.digest)
                                    for s in lab.store.list_slots(run_id))
                before = len(lab.log())
                out = execute(lab.store, run_id, candidate, providers=lab.providers,
                              runner=runner)
                c["paid"] += len(lab.log()) - before
                c["duplicates"] += _paid_beyond(lab, before, out, committed)
                c["failed after admission"] += out.status != "succeeded"
    keys = ["applied", "stop accepts", "rebind accepts", "paid", "duplicates",
            "failed after admission"]
    body: list[list[Any]] = [[e, *(c[k] for k in keys)] for e, c in rows.items()]
    total = [sum(c[k] for c in rows.values()) for k in keys]
    return "\n".join([table(["edit", "applied", "accepted (stop)", "accepted (rebind)",
                              "paid by rebind", "duplicates", "failed after"],
                             [*body, ["total", *total]],
                             f"Table VII under stop and rebind ({len(scripts)} committed "
                             "prefixes)"), *stopped])


def generator(scripts: Sequence[CorpusScript], lab: Lab, cases: int) -> str:
    steps = [[(name, i)] for name in sorted(REFACTORINGS) for i in range(3)]
    steps += [[(a, 0), (b, 1)] for a, b in itertools.permutations(sorted(REFACTORINGS), 2)]
    counts: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    combos = list(itertools.product(scripts, range(1, 5), steps))
    for script, fail_at, plan in random.Random(30).sample(combos, min(cases, len(combos))):
        candidate: str | None = script.source
        for name, i in plan:
            assert candidate is not None
            candidate = REFACTORINGS[name](candidate, i % max(call_count(candidate), 1))
            if candidate is None:
                break
        if candidate is None or candidate == script.source:
            continue
        run_id = lab.fresh_id(f"gen-{script.name}")
        execute(lab.store, run_id, script.source, args=script.args, envelope=REBIND,
                providers=FailAt(lab.providers, fail_at), runner=InProcessRunner())
        slots = lab.store.list_slots(run_id)
        if not slots:
            continue
        committed = Counter((s.capability, s.digest) for s in slots)
        by_id = {str(s.identity): s for s in slots}
        before = len(lab.log())
        out = lab.run(run_id, candidate)
        counts["cases"] += 1
        counts[out.status] += 1
        if out.status == "gate_stopped":
            assert out.gate is not None  # a gate stop always has its verdict
            reasons[_reason(out.gate)] += 1
        counts["paid"] += len(lab.log()) - before
        counts["duplicates"] += _paid_beyond(lab, before, out, committed)
        counts["stale"] += sum(
            1 for c in out.calls if c.get("outcome") == "replayed"
            and by_id[c.get("moved_from") or c["identity"]].digest != c["digest"])
        counts["rebound"] += sum(1 for c in out.calls if c.get("moved_from"))
    keys = ["cases", "gate_stopped", "succeeded", "failed", "rejected", "rebound", "paid",
            "duplicates", "stale"]
    return "\n".join([table(keys, [[counts[k] for k in keys]],
                            "Refactorings after failure points (attempt 1's k-th provider "
                            "call fails)"),
                      "  stopped because: " + ", ".join(f"{k} {n}" for k, n in
                                                        reasons.most_common())])


def _reason(gate: GateVerdict) -> str:
    trace = gate.trace
    if trace is None:
        return "not a relocation (" + "/".join(sorted({c.kind for c in
                                                       gate.counterexamples})) + ")"
    return "/".join(sorted({c.kind for c in trace.counterexamples})) or "note"


def demo_figures(lab: Lab, runner: Runner) -> str:
    import json

    from frostline.demo.scenario import ARGS, script_text
    from frostline.repair.extract import extract_code

    replies = json.loads(script_text("scripted_model.json"))["responses"]
    moved = extract_code(replies[0]["content"])  # the reply that moves the image call
    assert moved is not None
    rows = []
    for policy in ("stop", "rebind"):
        run_id = lab.fresh_id(f"demo-{policy}")
        lab.run(run_id, script_text("brand_video_v1.py"), args=ARGS,
                envelope={"relocation": policy})
        before = len(lab.log())
        out = execute(lab.store, run_id, moved, providers=lab.providers, runner=runner)
        paid_moved = len(lab.log()) - before
        rewrites = 1 if out.status == "succeeded" else 2  # else the demo's second reply
        rows.append([policy, out.status, out.replayed, paid_moved, rewrites])
    return table(["relocation", "moved repair", "replayed", "paid", "rewrites needed"], rows,
                 "The demo's moved repair (storyboard + 3 committed shots, 4th failed)")


class RebindLab(Lab):
    """The paper's lab with `relocation = "rebind"` on every run it creates."""

    def run(self, run_id: str, source: str, *, args: Any = None,
            envelope: Mapping[str, Any] | None = None) -> Any:
        return super().run(run_id, source, args=args,
                           envelope={**(envelope or {}), "relocation": "rebind"})


def e2b() -> str:
    """Table III (E2b) under both policies: what each repair paid and whether it was stopped
    (a stopped repair needs another rewrite)."""
    from bench.paper import repairs

    rows = []
    for policy, lab_type in (("stop", Lab), ("rebind", RebindLab)):
        with lab_type() as lab:
            for r in repairs.study(lab):
                rows.append([r.case, policy, r.repair_status, r.replayed, r.new,
                             r.attempts, r.duplicates, int(r.repair_status == "gate_stopped")])
    return table(["case", "relocation", "repair", "replayed", "new", "paid attempts",
                  "duplicates", "rewrites needed"], rows,
                 "E2b (Table III) under stop and rebind")


def timing(scripts: Sequence[CorpusScript], lab: Lab, runs: int) -> str:
    from frostline.contract.rebind import Matcher
    from frostline.runtime.sandbox_runner import SandboxRunner

    sandbox = SandboxRunner()
    costs, starts = [], []
    for script in scripts:
        run_id = lab.fresh_id(f"t-{script.name}")
        if lab.run(run_id, script.source, args=script.args).status != "succeeded":
            continue
        frozen = frozen_map(lab.store.list_slots(run_id), lab.store.list_attempts(run_id))
        src = _Src(script.source)
        candidate = EDIT_FUNCS["wrap in a new block"](src, _frozen_calls(src, frozen))
        if candidate is None:
            continue
        infos = list(sites(candidate))
        vanished = set(frozen) - {s.site for s in infos}
        prefix = load_prefix(lab.store, run_id)
        for _ in range(runs):
            t = time.perf_counter()
            asyncio.run(dry_replay(lab.store, run_id, annotated=annotate(candidate),
                                   args=script.args or {}, envelope=Envelope(),
                                   allowlist={s.site: s.capability for s in infos},
                                   prefix=prefix, vanished=vanished, runner=sandbox))
            costs.append(time.perf_counter() - t)
    empty = "async def orchestrate(ctx, args):\n    return 1\n"
    prefix = load_prefix(lab.store, "none")
    for _ in range(max(runs * 3, 5)):
        dry = DryReplay(lab.store, "none", envelope=Envelope(), allowlist={}, prefix=prefix,
                        matcher=Matcher([], ()))
        t = time.perf_counter()
        asyncio.run(sandbox.run(Job(annotate(empty), {}), dry))
        starts.append(time.perf_counter() - t)
    p50, p95 = _pct(costs, 50), _pct(costs, 95)
    start = statistics.median(starts)
    return table(["measure", "n", "p50 s", "p95 s", "p50 / start"],
                 [["dry replay (sandbox)", len(costs), p50, p95, p50 / start],
                  ["one sandbox start", len(starts), start, _pct(starts, 95), 1.0]],
                 "The cost of a dry replay against one sandbox start")


def _pct(values: Sequence[float], q: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripts", type=int, default=20)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--timing-runs", type=int, default=3)
    parser.add_argument("--skip-timing", action="store_true")
    opts = parser.parse_args(argv)
    scripts = choose(opts.scripts)
    with Lab() as lab:
        runner = InProcessRunner()
        print(table_vii(scripts, lab, runner), end="\n\n")
        print(generator(load_all(), lab, opts.cases), end="\n\n")
        print(demo_figures(lab, runner), end="\n\n")
        print(e2b(), end="\n\n")
        if not opts.skip_timing:
            print(timing(scripts, lab, opts.timing_runs))
    return 0


def load_all() -> list[CorpusScript]:
    return choose(10_000)


if __name__ == "__main__":
    raise SystemExit(main())
