"""Table VI (E7): the same runs under four identity functions behind one slot layer.

The production broker keys slots by the structural identity ι = (σ, π, ω). To compare that
choice with the alternatives of Table I, this study runs the E2b cases (and a constructed
shared-payload probe) under each key:

- ``structural`` is the production runtime itself: `execute` (checker, gate, annotation, the
  `Broker` with its runtime rule, ledger and budget) with the in-process runner. Its counts
  come from the broker's own rows of each call;
- the baselines, ``payload`` (capability, H(p)), ``ordinal`` (arrival order within the
  attempt) and ``line`` (the call's source line, π, ω), cannot run in the broker, which keys
  by (σ, π, ω) only. They run through a small replay harness that keeps everything but the
  key: the script runs with the real `Ctx` (so π comes from the real containers) on an
  annotated source (so σ comes from the real annotator), and every call goes through the real
  Store: ``get_slot`` (replay when capability and payload digest match, Divergence — the run
  stops — when they do not), otherwise ``begin_call``, the provider, ``commit_call``;
- calls inside a fanout are delayed by a time fixed by (attempt, site, path), which models
  network order: reproducible, but different between the original and the repair, as it is
  with a real provider. In the harness the delay comes before the key is taken (only the
  arrival ordinal can observe it); in the broker, which assigns ω at admission, it is the
  provider's latency. Every scheme sees the same delays.

Counted per scheme, over the failed run plus the repair: Exec. successful provider executions;
Replayed, replay hits in the repairs; Dup., executions of work already committed under the run
(an execution whose (capability, H(p)) some committed slot holds); Wrong, replay hits served a
record committed by a different callsite that the script still contains (a relocated call's own
record is not wrong reuse; the record of a sibling call is); Stops, attempts that end in a gate
stop or a Divergence.

Run: ``python -m bench.paper.identity``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.paper.common import Lab, table
from bench.paper.repairs import CASES, Case
from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.contract.identity import Identity, digest
from frostline.errors import FrostlineError
from frostline.runtime.broker import StoreArtifactSink
from frostline.runtime.child import load_entry, run_entry
from frostline.runtime.ctx import Ctx
from frostline.runtime.execute import execute
from frostline.script import annotate, check, sites
from frostline.store import SlotRecord

SCHEMES = ("structural", "payload", "ordinal", "line")

_SHARED = '''
async def orchestrate(ctx, args):
    cover = await ctx.run("text.generate", {{"prompt": "a title for the harbour film"}})
    {middle}card = await ctx.run("text.generate", {{"prompt": "a title for the harbour film"}})
    poster = await ctx.run("image.generate", {{"prompt": cover["text"], "size": "{size}"}})
    return [cover["text"], card["text"], poster["artifact"]]
'''
# A constructed probe: two callsites send the same request (a cover title and an end-card
# title). The poster size is rejected first; the repair fixes it and inserts a log line.
SHARED = Case("shared", "same request at two sites",
              _SHARED.format(middle="", size="2048x2048"),
              _SHARED.format(middle='note = "titles"\n    ', size="512x512"))


@dataclass(frozen=True)
class Call:
    """What a key function may look at for one call."""

    site: str
    path: tuple[int, ...]
    occurrence: int
    ordinal: int
    line: int
    capability: str
    digest: str


KEYS: dict[str, Callable[[Call], Identity]] = {
    "structural": lambda c: Identity(c.site, c.path, c.occurrence),
    "payload": lambda c: Identity(f"payload/{c.capability}/{c.digest}", (), 0),
    "ordinal": lambda c: Identity("ordinal", (), c.ordinal),
    "line": lambda c: Identity(f"line/{c.line}", c.path, c.occurrence),
}


@dataclass
class Tally:
    executed: int = 0
    replayed: int = 0
    duplicates: int = 0
    wrong: int = 0
    stops: int = 0
    statuses: list[str] = field(default_factory=list)


def _delay(attempt: int, site: str, steps: tuple[int, ...]) -> float:
    """The fixed network delay of a fanout call: (attempt, site, path) → 0-70 ms."""
    bucket = hashlib.sha256(f"{attempt}|{site}|{steps}".encode()).digest()[0] % 8
    return bucket * 0.01


class DelayedProvider:
    """The lab's providers, answering each fanout call after its fixed network delay."""

    def __init__(self, inner: Provider, attempt: int) -> None:
        self.inner, self.attempt = inner, attempt

    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability: str) -> bool:
        return self.inner.honours_idempotency_keys(capability)

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        ident = Identity.parse(ctx.identity)
        if ident.path:
            await asyncio.sleep(_delay(self.attempt, ident.site, ident.path))
        return await self.inner.invoke(capability, payload, ctx)


class KeyedTransport:
    """The ctx transport of the harness: the slot rule of the runtime, with a pluggable key."""

    def __init__(self, lab: Lab, run_id: str, attempt: int, key: Callable[[Call], Identity],
                 source: str, tally: Tally, *, repair: bool, jitter: bool = True) -> None:
        self.lab, self.run_id, self.attempt, self.key = lab, run_id, attempt, key
        self.tally, self.repair, self.jitter = tally, repair, jitter
        info = sites(source)
        self.lines = {s.site: s.line for s in info}
        self.present = set(self.lines)
        committed = lab.store.list_slots(run_id)
        self.committed_work = Counter((s.capability, s.digest) for s in committed)
        self.occurrences: Counter[tuple[str, tuple[int, ...]]] = Counter()
        self.ordinal = 0
        self.sink = StoreArtifactSink(lab.store, run_id)
        self.stopped = False

    async def call(self, site: str, path: list[int], capability: str,
                   payload: dict[str, Any]) -> dict[str, Any]:
        steps = tuple(path)
        if steps and self.jitter:
            # Calls of a fanout reach a host in network order, which differs between attempts.
            # Model it: a delay fixed by (attempt, site, path), in 10 ms steps, so the order is
            # reproducible but not the branch order. Only the arrival ordinal can observe it.
            await asyncio.sleep(_delay(self.attempt, site, steps))
        occ = self.occurrences[(site, steps)]
        self.occurrences[(site, steps)] += 1
        ordinal, self.ordinal = self.ordinal, self.ordinal + 1
        h = digest(payload)
        ident = self.key(Call(site, steps, occ, ordinal, self.lines.get(site, 0), capability, h))
        store = self.lab.store
        slot = store.get_slot(self.run_id, ident)
        if slot is not None:
            if slot.capability == capability and slot.digest == h:
                if self.repair:
                    self.tally.replayed += 1
                origin = slot.result["origin_site"]
                if origin != site and origin in self.present:
                    self.tally.wrong += 1
                return {"ok": True, "result": slot.result["value"]}
            self.stopped = True
            return {"ok": False, "error": {"kind": "stop", "type": "Divergence",
                                           "message": f"divergence at {ident}"}}
        call_id = store.begin_call(self.run_id, self.attempt, ident, capability, h)
        try:
            res = await self.lab.providers.invoke(
                capability, payload, CallContext(self.run_id, str(ident), None, self.sink))
        except FrostlineError as exc:
            store.fail_call(call_id, exc.to_dict())
            return {"ok": False, "error": exc.to_dict()}
        self.tally.executed += 1
        if self.committed_work[(capability, h)] > 0:
            self.tally.duplicates += 1
        store.commit_call(call_id, SlotRecord(
            self.run_id, ident.site, ident.path, ident.occurrence, capability, h,
            {"value": res.result, "origin_site": site}, dict(res.usage), self.attempt))
        return {"ok": True, "result": res.result}

    async def decide(self, path: list[int], value: int) -> dict[str, Any]:
        return {"ok": True, "result": value}


def broker_attempt(lab: Lab, run_id: str, source: str, tally: Tally, *, args: Any,
                   repair: bool) -> str:
    """One attempt of `source` through the production runtime (structural identity)."""
    store = lab.store
    committed = {s.identity: s for s in store.list_slots(run_id)}
    work = Counter((s.capability, s.digest) for s in committed.values())
    present = {s.site for s in sites(source)}
    attempts = store.list_attempts(run_id)
    number = (attempts[-1].number if attempts else 0) + 1
    out = execute(store, run_id, source, args=args, providers=DelayedProvider(
        lab.providers, number), runner=lab.runner, relocation="stop")  # the paper's gate
    for row in out.calls:
        if row.get("outcome") == "executed":
            tally.executed += 1
            tally.duplicates += work[(row["capability"], row.get("digest"))] > 0
        elif row.get("outcome") == "replayed":
            tally.replayed += repair
            # the record served: the slot committed at this identity, and where it came from
            slot = committed[Identity.parse(row["identity"])]
            tally.wrong += slot.site != Identity.parse(row["identity"]).site \
                and slot.site in present
    tally.stops += out.status in ("gate_stopped", "diverged")
    return out.status


def attempt(lab: Lab, run_id: str, source: str, scheme: str, tally: Tally, *, args: Any,
            repair: bool) -> str:
    """One attempt of `source` under `scheme`; returns its status."""
    if scheme == "structural":
        return broker_attempt(lab, run_id, source, tally, args=args, repair=repair)
    store = lab.store
    if store.get_run(run_id) is None:
        store.create_run(run_id, {})
    report = check(source).to_dict()
    number = store.start_attempt(run_id, source=source, annotated="", report=report).number
    transport = KeyedTransport(lab, run_id, number, KEYS[scheme], source, tally, repair=repair)
    try:
        asyncio.run(run_entry(load_entry(annotate(source)), Ctx(transport), args))
        status = "succeeded"
    except BaseException as exc:  # the script's failure, a provider rejection or a stop
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        status = "diverged" if transport.stopped else "failed"
    if transport.stopped:
        tally.stops += 1
    store.finish_attempt(run_id, number, status=status)
    return status


def run_scheme(lab: Lab, scheme: str, cases: Sequence[Case]) -> Tally:
    tally = Tally()
    for case in cases:
        run_id = lab.fresh_id(f"e7-{scheme}-{case.name}")
        first = attempt(lab, run_id, case.original, scheme, tally, args=case.args, repair=False)
        second = attempt(lab, run_id, case.repair, scheme, tally, args=case.args, repair=True)
        tally.statuses.append(f"{case.name}:{first}->{second}")
    return tally


def study(lab: Lab, cases: Sequence[Case] = (*CASES, SHARED)) -> dict[str, dict[str, Tally]]:
    """scheme → {"e2b": tally over the four E2b cases, "probe": tally over the shared probe}."""
    e2b = [c for c in cases if c.name != SHARED.name]
    probes = [c for c in cases if c.name == SHARED.name]
    return {s: {"e2b": run_scheme(lab, s, e2b), "probe": run_scheme(lab, s, probes)}
            for s in SCHEMES}


def render(result: dict[str, dict[str, Tally]]) -> str:
    rows = []
    for scheme, parts in result.items():
        t, p = parts["e2b"], parts["probe"]
        rows.append([scheme + (" + gate" if scheme == "structural" else ""), t.executed,
                     t.replayed, t.duplicates, t.wrong, t.stops,
                     f"{p.executed}/{p.replayed}/{p.duplicates}/{p.wrong}/{p.stops}"])
    text = table(["scheme", "Exec.", "Replayed", "Dup.", "Wrong", "Stops",
                  "probe E/R/D/W/S"], rows,
                 "Table VI (E7): identity baselines over the four E2b runs (+ shared-payload "
                 "probe)")
    detail = "\n".join(f"  {s}: {', '.join(parts['e2b'].statuses + parts['probe'].statuses)}"
                       for s, parts in result.items())
    return text + "\n" + detail


def main(argv: Sequence[str] | None = None) -> int:
    with Lab() as lab:
        print(render(study(lab)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
