"""The dry replay: the candidate runs in the sandbox against the committed prefix, paying nothing.

Under `relocation = "rebind"`, a candidate the static gate stops only with `removed` and
`call_changed` counterexamples gets one run before any spend, with a broker that can reach no
provider: `DryReplay` admits the frames as the real broker does (nonce, allowlisted site,
capability, plausible path, ω in arrival order) and hands every call to the pure matcher
(frostline.contract.rebind.Matcher):

- a replay or a rebound call gets its committed result, exactly as the real run would;
- a call of new work (the frontier) gets a stop: that branch ends there, no result is
  invented, and the other branches go on until each has finished or stopped;
- a divergence stops the whole dry replay.

Nothing is dispatched and nothing is written: the broker's dispatcher is never reached, and
a rejected frame only stops the dry replay. A race decided during it is not recorded either;
the matcher counts it as ambiguity while pool slots are left. The verdict, with the
rebinding, is what `execute` makes durable before the attempt starts.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypeVar

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope, Relocation
from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.contract.gate import GateResult, frozen_map, gate
from frostline.contract.identity import Identity, digest
from frostline.contract.prefix import Prefix, load_prefix
from frostline.contract.rebind import Matcher, TraceVerdict, rebinding_rows, vanished_sites
from frostline.contract.verdict import GateVerdict, TraceFailure
from frostline.errors import EnvelopeError, Frontier, FrostlineError, PayloadInvalid, RunNotFound
from frostline.runtime import tracing
from frostline.runtime.admission import RaceDecision
from frostline.runtime.broker import Broker, Reply
from frostline.runtime.call import Call, stop_reply
from frostline.runtime.runners import Job, Runner
from frostline.script import annotate, sites
from frostline.store.base import Store

log = logging.getLogger("frostline.dry_replay")
T = TypeVar("T")


class Unreachable:
    """The provider of a dry replay: serves nothing, so no call can reach a provider."""

    def capabilities(self) -> frozenset[str]:
        return frozenset()

    def honours_idempotency_keys(self, capability: str) -> bool:
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        raise FrostlineError(f"the dry replay reached no provider, yet {capability} was "
                             "invoked; this is a bug", capability=capability)


class DryReplay(Broker):
    """A broker that serves committed results and never dispatches (see the module docstring).

    Example::

        dry = DryReplay(store, "run-1", envelope=env, allowlist=allowlist, prefix=prefix,
                        matcher=Matcher(slots, vanished))
        await runner.run(job, dry)
        verdict = dry.matcher.verdict()
    """

    def __init__(self, store: Store, run_id: str, *, envelope: Envelope,
                 allowlist: Mapping[str, str | None], prefix: Prefix, matcher: Matcher,
                 catalog: Catalog = DEFAULT_CATALOG) -> None:
        super().__init__(store, run_id, 0, envelope=envelope, providers=Unreachable(),
                         allowlist=allowlist, prefix=prefix, catalog=catalog, waits=False)
        self.matcher = matcher
        self.frontier_calls: list[str] = []

    def _admit(self, frame: Mapping[str, Any]) -> Reply | Coroutine[Any, Any, Reply]:
        stopped = self._stop.error
        admitted = self._admission.admit(frame, self.envelope.max_fanout, stopped is not None)
        if isinstance(admitted, Call):
            self.invoked.append(admitted.identity)
            return self._match(admitted)
        if admitted is None:
            assert stopped is not None
            return stop_reply(stopped)
        if isinstance(admitted, RaceDecision):
            self.matcher.race_decided()
            return {"ok": True, "result": admitted.value}  # proposed, not recorded
        err = admitted.error()
        self.stats.rejected_frames.append({"reason": admitted.reason, **admitted.shown})
        self._stop.stop(err)
        return stop_reply(err)

    def _match(self, call: Call) -> Reply:
        try:
            h = digest(call.payload)
        except PayloadInvalid:
            h = ""  # no committed request has it: new work (the real run refuses it there)
        found = self.matcher.match(call.identity, call.capability, h)
        call.row["digest"] = h
        self.stats.calls.append(call.row)
        if found.kind in ("replay", "rebound"):
            assert found.slot is not None
            call.conclude("replayed")
            return {"ok": True, "result": found.slot.result}
        if found.kind == "frontier":
            call.conclude("stopped")
            self.frontier_calls.append(call.text)
            return stop_reply(Frontier(
                f"{call.text} is new work; the dry replay stops this branch here (nothing is "
                "dispatched before admission)", identity=call.text))
        call.conclude("diverged")
        err = Frontier(f"{call.text} contradicts a committed request; the dry replay stops",
                       identity=call.text)
        self._stop.stop(err)
        return stop_reply(err)


async def dry_replay(store: Store, run_id: str, *, annotated: str, args: Any,
                     envelope: Envelope, allowlist: Mapping[str, str | None],
                     prefix: Prefix, vanished: set[str], runner: Runner,
                     catalog: Catalog = DEFAULT_CATALOG) -> TraceVerdict:
    """Run the annotated candidate once against `prefix` with no provider reachable and return
    the trace check's verdict. A runner that fails (e.g. the sandbox cannot start) is a
    FrostlineError for the caller: nothing was admitted and nothing spent."""
    matcher = Matcher(prefix.slots(), vanished)
    dry = DryReplay(store, run_id, envelope=envelope, allowlist=allowlist, prefix=prefix,
                    matcher=matcher, catalog=catalog)
    job = Job(annotated, args, concurrency=envelope.concurrency, max_fanout=envelope.max_fanout)
    outcome = await runner.run(job, dry)
    await dry.drain()
    verdict = matcher.verdict()
    if dry.stats.rejected_frames:  # a forged or malformed frame: no verdict can be trusted
        verdict = replace(verdict, admitted=False, rebinding={},
                          note=f"the dry replay rejected a frame: {dry.stats.rejected_frames[0]}")
    log.info("dry replay of run %s: %s (%d replayed, %d rebound, frontier %s, script ok=%s)",
             run_id, "admitted" if verdict.admitted else "stopped", verdict.replayed,
             verdict.rebound, verdict.frontier, outcome.ok)
    return verdict


def gate_against_prefix(store: Store, run_id: str, prefix: Prefix,
                        candidate: list[Any]) -> GateResult:
    """The static gate: every frozen site must remain with its capability and call expression."""
    return gate(frozen_map(prefix.slots(), store.list_attempts(run_id)), candidate)


async def gated(store: Store, run_id: str, source: str, args: Any, env: Envelope,
                runner: Runner, catalog: Catalog, prefix: Prefix, site_infos: list[Any]
                ) -> tuple[GateVerdict | None, Mapping[Identity, Identity] | None]:
    """An attempt's gate verdict (None for a run with nothing committed) and the rebinding it
    runs with: empty when the gate accepts, the trace check's when it admits (see
    `trace_check`), None when the gate's stop stands."""
    if not len(prefix):
        return None, {}
    static = gate_against_prefix(store, run_id, prefix, site_infos)
    verdict = await trace_check(store, run_id, source, args, env, runner, catalog, prefix,
                                site_infos, static)
    return verdict, (verdict.rebinding if verdict.accepted else None)


async def trace_check(store: Store, run_id: str, source: str, args: Any, env: Envelope,
                      runner: Runner, catalog: Catalog, prefix: Prefix,
                      site_infos: list[Any], static: GateResult, *,
                      relocation: str | None = None) -> GateVerdict:
    """The gate's verdict on a candidate the callsite gate judged `static`: that result alone
    when it accepted; with the dry replay's verdict when the envelope's relocation is
    `rebind` and every counterexample is a moved call (`removed`, `call_changed`): admitted,
    the candidate is accepted by the trace and runs with its rebinding. `relocation` is the
    policy the verdict reports (None: not reported)."""
    if static.accepted or env.relocation is not Relocation.REBIND:
        return GateVerdict(static, None, relocation)
    vanished = vanished_sites(static.counterexamples)
    if vanished is None:
        return GateVerdict(static, None, relocation)
    annotated = annotate(source)
    allowlist = {s.site: s.capability for s in site_infos}
    try:
        with tracing.span("frostline.dry_replay", run_id=run_id):
            trace = await dry_replay(store, run_id, annotated=annotated, args=args,
                                     envelope=env, allowlist=allowlist, prefix=prefix,
                                     vanished=vanished, runner=runner, catalog=catalog)
    except FrostlineError as exc:  # e.g. the sandbox cannot start: the gate's stop stands
        log.error("dry replay failed for run %s: %s", run_id, exc.message)
        return GateVerdict(static, TraceFailure(f"the dry replay failed: {exc.message}"),
                           relocation)
    return GateVerdict(static, trace, relocation)


def record_rebinding(store: Store, run_id: str, attempt: int,
                     rebinding: Mapping[Identity, Identity]) -> None:
    """Make an admitted attempt's rebinding durable (with a `rebound` event) before its first
    call; nothing for an attempt without one."""
    if not rebinding:
        return
    rows = rebinding_rows(rebinding)
    store.put_rebinding(run_id, attempt, rows)
    store.append_event(run_id, "rebound", {"attempt": attempt, "rebinding": rows})


def trace_refusal(verdict: GateVerdict, message: str) -> dict[str, Any]:
    """What a gate stop's error adds when the dry replay ran and did not admit: its first
    reason in the message, and the trace verdict."""
    trace = verdict.trace
    if trace is None:
        return {}
    why = trace.counterexamples[0].message if trace.counterexamples else trace.note
    return {"message": f"{message}; the dry replay did not admit it: {why}",
            "trace": trace.to_dict()}


def gate_with_trace(store: Store, run_id: str, source: str, *, runner: Runner,
                    relocation: str | None = None, catalog: Catalog = DEFAULT_CATALOG,
                    args: Any = None) -> GateVerdict:
    """The verdict an attempt of `source` would get before any spend: the static gate and,
    under relocation `rebind` (the run's, or `relocation`), the trace check; nothing is
    written. `args` default to the run's latest. Raises RunNotFound, ScriptRejected (a
    candidate that does not parse) and EnvelopeError (a bad `relocation`).

    Example: ``gate_with_trace(store, "r1", text, runner=SandboxRunner(), relocation="rebind")``
    """
    from frostline.runtime.gate_check import gate_source

    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r} in the store; list runs with `frostline runs`",
                          run_id=run_id)
    env = with_relocation(Envelope.from_dict(run.envelope, catalog), relocation)
    attempts = store.list_attempts(run_id)
    prefix = load_prefix(store, run_id)
    frozen = frozen_map(prefix.slots(), attempts)
    gate_source(frozen, source)  # the parse error a caller of the gate expects
    site_infos = list(sites(source))
    static = gate(frozen, site_infos)
    if args is None:
        args = next((a.args for a in reversed(attempts) if a.args is not None), {})
    if not len(prefix):
        return GateVerdict(static, None, env.relocation.value)
    return _run_sync(trace_check(store, run_id, source, args, env, runner, catalog, prefix,
                                 site_infos, static, relocation=env.relocation.value))


def with_relocation(env: Envelope, relocation: str | None) -> Envelope:
    """`env` under the relocation policy `relocation` (unchanged when None)."""
    if relocation is None:
        return env
    try:
        return replace(env, relocation=Relocation(relocation))
    except ValueError:
        raise EnvelopeError(f"relocation must be one of {' | '.join(r.value for r in Relocation)}"
                            f", not {relocation!r}", key="relocation") from None


def _run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run `coro` to completion from synchronous code, also when a loop runs in this thread
    (then on a thread of its own)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
