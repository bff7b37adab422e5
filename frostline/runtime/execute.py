"""One attempt of a run, end to end: check → gate → annotate → run → orphans → certificate.

`execute` is the single entry point the CLI, the HTTP service and the repair loop use to run a
script version under a run id. Everything that can be decided before a provider is paid is
decided first and stops the attempt with nothing spent: a checker rejection (status
`rejected`), the static spend bound over budget (`rejected`), a gate counterexample against
the frozen prefix (`gate_stopped`), an unresolved side-effecting attempt left by a crash
(`unresolved`), a store that does not answer (`failed`, StoreUnavailable, fail closed).

The store's run lock is held for the whole attempt, so two workers never execute one run at
once, and the prefix loaded at the start is the prefix the broker enforces.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.changes import catalog_changes
from frostline.capabilities.envelope import Envelope
from frostline.capabilities.provider import Provider
from frostline.contract.identity import Identity
from frostline.contract.jsonshape import storable_copy, storable_json, storable_refusal
from frostline.contract.orphans import orphan_report
from frostline.contract.prefix import Prefix, load_prefix
from frostline.contract.records import AttemptRecord, CallRecord, run_key
from frostline.contract.status import AttemptStatus, status_of_stop
from frostline.contract.verdict import GateVerdict
from frostline.errors import (
    AttemptUnresolved,
    BudgetExceeded,
    DefinitionError,
    FrostlineError,
    GateStopped,
    OrphansFound,
    PrefixConflict,
    ResultTooDeep,
    ScriptRejected,
    StoreRefused,
    StoreUnavailable,
    ValueNotStorable,
)
from frostline.runtime import dry_replay as trace
from frostline.runtime import tracing
from frostline.runtime.broker import Broker
from frostline.runtime.outcome import AttemptOutcome as AttemptOutcome  # re-exported
from frostline.runtime.outcome import exit_code_of
from frostline.runtime.recovery import (
    close_crashed_attempts,
    fail_refused,
    fails_closed,
    left_unresolved,
    unresolved_calls,
)
from frostline.runtime.rpc import MAX_ARGS, MAX_SOURCE
from frostline.runtime.runners import Job, Runner, ScriptOutcome
from frostline.runtime.spent import catalog_prices, prior_of
from frostline.script.spend import Prior
from frostline.store.base import Store
from frostline.store.writes import AppendEvent, FinishAttempt, PutCertificate, SetRunStatus

log = logging.getLogger("frostline.execute")

FAIL_OPEN_ENV = "FROSTLINE_STORE_FAIL_OPEN"


def fail_open_requested(flag: bool | None) -> bool:
    """The permissive store policy: an explicit flag, else FROSTLINE_STORE_FAIL_OPEN=1."""
    if flag is not None:
        return flag
    return os.environ.get(FAIL_OPEN_ENV, "") == "1"


def execute(store: Store, run_id: str, source: str, *, args: Any = None,
            envelope: Envelope | Mapping[str, Any] | None = None, providers: Provider,
            runner: Runner, catalog: Catalog = DEFAULT_CATALOG, skip_checker: bool = False,
            fail_open: bool | None = None, owner: str | None = None,
            relocation: str | None = None) -> AttemptOutcome:
    """Run one attempt of `source` under `run_id` (blocking); see `execute_async`.

    Example::

        outcome = execute(open_store(None), "demo-1", source, args={"brief": "a fox"},
                          providers=LocalProviders(), runner=ChildProcessRunner())
        sys.exit(outcome.exit_code)
    """
    return asyncio.run(execute_async(store, run_id, source, args=args, envelope=envelope,
                                     providers=providers, runner=runner, catalog=catalog,
                                     skip_checker=skip_checker, fail_open=fail_open,
                                     owner=owner, relocation=relocation))


async def execute_async(store: Store, run_id: str, source: str, *, args: Any = None,
                        envelope: Envelope | Mapping[str, Any] | None = None,
                        providers: Provider, runner: Runner, catalog: Catalog = DEFAULT_CATALOG,
                        skip_checker: bool = False, fail_open: bool | None = None,
                        owner: str | None = None, relocation: str | None = None
                        ) -> AttemptOutcome:
    """Run one attempt of `source` under `run_id` inside a running event loop.

    A new run is created with `envelope` (default: every capability, default budget) for
    `owner` (default: the local principal); an existing run keeps the envelope and owner it was
    created with (`relocation` overrides its policy for this attempt; a new run keeps it).
    `run_id` is the run's store key, `run_key(owner, name)`: for the local
    principal, the run's name. `args=None` on an existing run means "the args of its latest
    attempt" (so a repair runs on the same inputs); on a new run, {}.
    """
    _check_args(args)
    permissive = fail_open_requested(fail_open)
    if permissive:
        log.error("FAIL-OPEN store policy requested (%s=1 or fail_open=True): a failed attempt "
                  "write will not stop dispatch, and a crash can repeat a paid effect "
                  "undetected", FAIL_OPEN_ENV)
    try:
        if not skip_checker and store.get_run(run_id) is None:
            refused = _refuse_new_run(run_id, source, envelope, catalog)
            if refused is not None:  # a run is created only for a script the checker accepts
                return refused
        run_envelope = _ensure_run(store, run_id, envelope, catalog, owner, relocation)
        with store.run_lock(run_id):
            close_crashed_attempts(store, run_id)
            if args is None:
                args = _previous_args(store, run_id)
            with tracing.span("frostline.attempt", run_id=run_id) as span:
                try:
                    outcome = await _attempt(store, run_id, source, args, run_envelope,
                                             providers, runner, catalog, skip_checker,
                                             permissive)
                except (StoreRefused, ValueNotStorable) as exc:
                    if exc.fields.get("reason") == "not_json":
                        raise  # not data from outside: frostline's own bug, said loudly
                    number, error = fail_refused(store, run_id, exc)
                    outcome = AttemptOutcome(run_id, number, AttemptStatus.FAILED, error=error)
                tracing.annotate(span, attempt=outcome.attempt, status=outcome.status,
                                 executed=outcome.executed, replayed=outcome.replayed)
                return outcome
    except PrefixConflict as exc:
        log.error("run %s has an inconsistent prefix: %s", run_id, exc.message)
        return AttemptOutcome(run_id, None, AttemptStatus.FAILED, error=exc.to_dict())
    except StoreUnavailable as exc:
        log.error("store unavailable for run %s: %s (nothing was dispatched after the failure)",
                  run_id, exc.message)
        return AttemptOutcome(run_id, None, AttemptStatus.FAILED, error=exc.to_dict())


def _previous_args(store: Store, run_id: str) -> Any:
    """The args of the run's latest attempt that recorded any, else {}."""
    for attempt in reversed(store.list_attempts(run_id)):
        if attempt.args is not None:
            return attempt.args
    return {}


def _check_args(args: Any) -> None:
    """Args cross the pipe as JSON and are stored with the attempt; refuse what cannot be,
    before anything is recorded (ValueNotStorable, or DefinitionError for data that is not
    JSON at all)."""
    try:
        size = len(storable_json(args, "args").encode())
    except ValueNotStorable as exc:
        if exc.reason == "not_json":
            raise DefinitionError(f"args must be JSON data: {exc.__cause__}") from None
        raise
    if size > MAX_ARGS:
        raise DefinitionError(f"args are {size} bytes of JSON; the cap is {MAX_ARGS}")


def _new_envelope(envelope: Envelope | Mapping[str, Any] | None, catalog: Catalog) -> Envelope:
    if envelope is None:
        return Envelope()
    if isinstance(envelope, Envelope):
        return envelope
    return Envelope.from_dict(envelope, catalog)


def _ensure_run(store: Store, run_id: str, envelope: Envelope | Mapping[str, Any] | None,
                catalog: Catalog, owner: str | None, relocation: str | None) -> Envelope:
    """The run's envelope, the run created if new; `relocation` overrides its policy (a new
    run keeps it, an existing one uses it for this attempt)."""
    run = store.get_run(run_id)
    if run is None:
        envelope = trace.with_relocation(_new_envelope(envelope, catalog), relocation)
        prefix = run_key(owner, "")
        if not run_id.startswith(prefix):
            raise DefinitionError(f"run key {run_id!r} is not one of {owner!r}'s: expected "
                                  f"{run_key(owner, 'NAME')!r}", run_id=run_id, owner=owner)
        run = store.create_run(run_id[len(prefix):], _new_envelope(envelope, catalog).to_dict(),
                               owner=owner)
    elif run.kind != "script":
        # a graph run's calls are not a script's sites: its prefix would mean nothing here
        raise DefinitionError(f"run {run_id!r} is a {run.kind} run; a script attempt needs a "
                              "script run: pick another run id", run_id=run_id, kind=run.kind)
    return trace.with_relocation(Envelope.from_dict(run.envelope, catalog), relocation)


def _refuse_new_run(run_id: str, source: str, envelope: Envelope | Mapping[str, Any] | None,
                    catalog: Catalog) -> AttemptOutcome | None:
    """The checker's verdict on the first script of a run that does not exist yet: a rejected
    script leaves nothing in the store (an existing run records the rejected attempt)."""
    from frostline.script import check

    checked = check(source, _new_envelope(envelope, catalog), catalog=catalog)
    if checked.valid:
        return None
    return AttemptOutcome(run_id, None, AttemptStatus.REJECTED,
                          error=_rejection(checked.to_dict()).to_dict())


def _rejection(report: dict[str, Any]) -> ScriptRejected:
    errors = [v for v in report.get("violations", []) if v.get("severity") == "error"]
    return ScriptRejected(
        f"the checker rejected the script with {len(errors)} error(s); first: "
        + (f"{errors[0].get('rule')} line {errors[0].get('line')}: "
           f"{errors[0].get('message')}" if errors else "?"), violations=errors)


async def _attempt(store: Store, run_id: str, source: str, args: Any, env: Envelope,
                   providers: Provider, runner: Runner, catalog: Catalog, skip_checker: bool,
                   fail_open: bool) -> AttemptOutcome:
    from frostline.script import annotate

    # 1. the checker (never executes the source), with what the run already did: the spend
    # it may still add is bounded against what is left of the budget
    prefix = load_prefix(store, run_id)
    calls = store.list_calls(run_id)
    prior = prior_of(prefix.slots(), calls, catalog_prices(catalog))
    checked = _checked(store, run_id, source, env, catalog, skip_checker, prior)
    if isinstance(checked, AttemptOutcome):
        return checked
    report, site_infos = checked

    # 2. the gate against the frozen prefix (before any process starts)
    gate_result, rebinding = await trace.gated(store, run_id, source, args, env, runner,
                                               catalog, prefix, site_infos)
    if rebinding is None:
        return _refuse(store, run_id, source, report, AttemptStatus.GATE_STOPPED, None, gate=gate_result)

    # 3. annotate and open the attempt
    annotated = annotate(source)
    if len(annotated) > MAX_SOURCE:
        return _refuse(store, run_id, source, report, AttemptStatus.REJECTED, ScriptRejected(
            f"the annotated script has {len(annotated)} characters; the cap is {MAX_SOURCE}"))
    allowlist = {s.site: s.capability for s in site_infos}
    catalog_digest = store.put_catalog(catalog.entries_json())
    attempt = store.start_attempt(run_id, source=source, annotated=annotated, report=report,
                                  args=args, catalog_digest=catalog_digest)
    number = attempt.number
    trace.record_rebinding(store, run_id, number, rebinding)  # durable before the first call
    # Not waited for: durable with the next write (queue order), checked as the attempt ends.
    pending: list[Future[Any]] = [store.submit(AppendEvent(run_id, "attempt_started", {
        "attempt": number, "frozen": len(prefix), "catalog": catalog_digest}))]
    note_catalog_changes(store, run_id, attempt, prefix)

    # 4. crashes left behind: unresolved side-effecting attempts fail closed
    unresolved = unresolved_calls(calls, prefix)
    blocked = _blocked(store, run_id, number, unresolved, catalog, providers)
    if blocked is not None:
        return _finish(store, run_id, number, AttemptStatus.UNRESOLVED, error=blocked.to_dict(),
                       gate=gate_result, pending=pending)

    # 5. run the script against the broker
    broker = Broker(store, run_id, number, envelope=env, providers=providers,
                    allowlist=allowlist, prefix=prefix, catalog=catalog, unresolved=unresolved,
                    prior_calls=prior.calls, prior_spend_usd=prior.usd, fail_open=fail_open,
                    rebinding=rebinding)
    job = Job(annotated, args, concurrency=env.concurrency, max_fanout=env.max_fanout)
    try:
        script = await runner.run(job, broker)
    except FrostlineError as exc:  # e.g. the sandbox cannot provide its isolation
        log.error("runner failed for run %s attempt %d: %s", run_id, number, exc.message)
        script = ScriptOutcome(False, error=exc.to_dict())
    finally:
        await broker.drain()  # every dispatched call completes and commits
    return _conclude(store, run_id, number, env, prefix, broker, script, gate_result, pending,
                     catalog=catalog, providers=providers)


def _checked(store: Store, run_id: str, source: str, env: Envelope, catalog: Catalog,
             skip_checker: bool, prior: Prior) -> tuple[dict[str, Any], list[Any]] | AttemptOutcome:
    """The checker's report and the script's sites, or the refused attempt. The static spend
    bound of the calls the attempt can add (its frozen prefix replays for nothing) must fit
    what is left of the budget; the broker still checks every call as it is let through."""
    from frostline.script import check, sites
    from frostline.script.checker import budget_problems

    if skip_checker:
        try:
            site_infos = list(sites(source))
        except Exception as exc:  # the script side reports unparsable source its own way
            return _refuse(store, run_id, source, {"valid": False, "skipped": True},
                           AttemptStatus.REJECTED,
                           ScriptRejected(f"the script cannot be parsed: {exc}"))
        # The gate builds the frozen map from the sites in the stored report, so keep them.
        return ({"valid": True, "skipped": True, "violations": [],
                 "facts": {"sites": [s.to_dict() for s in site_infos]}}, site_infos)
    checked = check(source, env, catalog=catalog, prior=prior)
    report = checked.to_dict()
    if not checked.valid:
        return _refuse(store, run_id, source, report, AttemptStatus.REJECTED, _rejection(report))
    bound = checked.facts.new_spend or checked.facts.spend_bound
    problems = budget_problems(bound, env, prior)
    if problems:  # R11 reports the same; kept for a checker run without envelope rules
        return _refuse(store, run_id, source, report, AttemptStatus.REJECTED, BudgetExceeded(
            "; ".join(p for p, _ in problems) + "; lower the loop or fanout bounds, or raise "
            "the budget", bound_usd=bound.usd, bound_calls=bound.total_calls))
    return report, list(checked.facts.sites)


def _blocked(store: Store, run_id: str, number: int, unresolved: Mapping[Identity, CallRecord],
             catalog: Catalog, providers: Provider) -> AttemptUnresolved | None:
    """Why the attempt may not start: side-effecting calls an earlier attempt dispatched and
    never committed, whose provider cannot dedupe a retry (each gets an event)."""
    blocking = [c for c in unresolved.values()
                if fails_closed(catalog, c.capability)
                and not providers.honours_idempotency_keys(c.capability)]
    if not blocking:
        return None
    idents = sorted(str(c.identity) for c in blocking)
    for c in blocking:
        store.append_event(run_id, "unresolved", {"attempt": number,
                                                  "identity": str(c.identity),
                                                  "capability": c.capability,
                                                  "call_id": c.call_id,
                                                  "dispatched_in": c.attempt})
    return AttemptUnresolved(
        f"{len(idents)} side-effecting call(s) were dispatched and never committed: "
        f"{', '.join(idents)}. The provider may have run them; reconcile each with "
        f"'frostline reconcile {run_id} IDENTITY --result @FILE' or '--abandon'",
        identities=idents)


def _conclude(store: Store, run_id: str, number: int, env: Envelope, prefix: Prefix,
              broker: Broker, script: ScriptOutcome, gate_result: GateVerdict | None,
              pending: list[Future[Any]], *, catalog: Catalog,
              providers: Provider) -> AttemptOutcome:
    """The status of a drained attempt, its orphans and certificate, and its record. An
    attempt that failed with calls it dispatched and could not commit, which the next attempt
    would refuse to repeat, is `unresolved`: one word for the run's state, everywhere."""
    stop = broker.stop_error
    if stop is not None:
        status = status_of_stop(stop)
        error: dict[str, Any] | None = stop.to_dict()
        if isinstance(stop, StoreUnavailable):  # the record keeps no detail: the log does
            log.error("run %s attempt %s stopped: %s", run_id, number, stop.message)
    elif script.ok and (refused := storable_refusal(
            script.result, "the script's result", too_deep=ResultTooDeep)) is not None:
        status, error = AttemptStatus.FAILED, refused.to_dict()  # and the result is not stored
    elif script.ok:
        status, error = AttemptStatus.SUCCEEDED, None
    else:
        status, error = AttemptStatus.FAILED, script.error
    if status == AttemptStatus.FAILED:
        left = left_unresolved(store, run_id, number, catalog, providers)
        if left is not None:
            status, error = AttemptStatus.UNRESOLVED, {**left.to_dict(), "cause": error}

    # 6. orphans and the certificate (a waiting attempt has not reached its end: the
    # identities after its wait are not orphans yet)
    invoked = ([broker.rebinding.get(i, i) for i in broker.invoked]  # rebound: slot invoked
               if status != AttemptStatus.WAITING else prefix.identities())
    report_o = orphan_report(prefix.identities(), invoked, env.orphan_policy)
    if report_o.orphans:
        store.append_event(run_id, "orphans", {"attempt": number, **report_o.to_dict()})
    if report_o.fails_run and status == AttemptStatus.SUCCEEDED:
        status = AttemptStatus.FAILED
        error = OrphansFound(f"{len(report_o.orphans)} committed identit(ies) were not invoked "
                             "and the orphan policy is stop", orphans=report_o.texts()).to_dict()
    from frostline.runtime import certificates

    # The certificate is written with the attempt's record (see _finish).
    pending.append(store.submit(PutCertificate(run_id, number,
                                               certificates.current(store, run_id, number))))
    stats = broker.stats
    return _finish(store, run_id, number, status, error=error, gate=gate_result,
                   invoked=[str(i) for i in broker.invoked], orphans=report_o.texts(),
                   result=script.result if status == AttemptStatus.SUCCEEDED else None,
                   broker=broker, logs=script.logs, pending=pending, stats_extra={
                       "timed_out": script.timed_out,
                       # the script's own process (None in process, e.g. in-process runner)
                       "process_exit_code": script.exit_code,
                       "calls": stats.calls})


# the contract steps ---------------------------------------------------------------------
def note_catalog_changes(store: Store, run_id: str, attempt: AttemptRecord,
                         prefix: Prefix) -> list[dict[str, Any]]:
    """Record a `catalog_changed` event when a capability with committed calls changed its
    schema or effect since the last attempt that recorded a catalog; returns the changes."""
    earlier = [a for a in store.list_attempts(run_id)
               if a.number < attempt.number and a.catalog_digest is not None]
    if not earlier or attempt.catalog_digest is None or not len(prefix) \
            or earlier[-1].catalog_digest == attempt.catalog_digest:
        return []
    before = store.get_catalog(earlier[-1].catalog_digest or "") or []
    after = store.get_catalog(attempt.catalog_digest) or []
    changes = catalog_changes(before, after, {s.capability for s in prefix.slots()})
    if changes:
        store.append_event(run_id, "catalog_changed", {
            "attempt": attempt.number, "since_attempt": earlier[-1].number,
            "catalog": attempt.catalog_digest, "changes": changes})
    return changes


# helpers ------------------------------------------------------------------------------


def _refuse(store: Store, run_id: str, source: str, report: dict[str, Any], status: str,
            err: FrostlineError | None, *, gate: GateVerdict | None = None) -> AttemptOutcome:
    attempt = store.start_attempt(run_id, source=source, annotated="", report=report)
    if err is None and gate is not None:
        kinds = sorted({c.kind for c in gate.counterexamples})
        err_dict: dict[str, Any] = GateStopped(
            "the candidate changes or removes frozen callsites (" + ", ".join(kinds)
            + "); nothing was spent").to_dict()
        err_dict.update(trace.trace_refusal(gate, err_dict["message"]))
    else:
        err_dict = err.to_dict() if err is not None else {}
    return _finish(store, run_id, attempt.number, status, error=err_dict, gate=gate)


def _finish(store: Store, run_id: str, number: int, status: str, *,
            error: dict[str, Any] | None = None, gate: GateVerdict | None = None,
            invoked: list[str] | None = None, orphans: list[str] | None = None,
            result: Any = None, broker: Broker | None = None, logs: str = "",
            stats_extra: dict[str, Any] | None = None,
            pending: list[Future[Any]] | None = None) -> AttemptOutcome:
    """Record how the attempt ended: its record, the run's status and `attempt_finished`,
    queued behind the attempt's `pending` writes so that one transaction usually holds them
    all (each write keeps its own outcome; the first failure is raised)."""
    s = broker.stats if broker is not None else None
    # What an error or the stats quote (a script's exception, a provider's message) is kept
    # as it came, except what no store can hold.
    error = storable_copy(error)
    totals: dict[str, Any] = {
        "executed": s.executed if s else 0, "replayed": s.replayed if s else 0,
        "provider_calls": s.provider_calls if s else 0,
        "spend_usd": round(s.spend_usd, 6) if s else 0.0,
        "divergences": s.divergences if s else [],
        "semantic_repeats": s.semantic_repeats if s else [],
        "denials": s.denials if s else [], "rejected_frames": s.rejected_frames if s else [],
        **(stats_extra or {}),
        # the attempt's exit code, as `frostline run` exits with it (never 0 beside a failure)
        "exit_code": exit_code_of(status, error)}
    totals = storable_copy(totals)
    writes = [*(pending or []),
              store.submit(FinishAttempt(run_id, number, status=status,
                                         gate=gate.to_dict() if gate is not None else None,
                                         invoked=invoked or [], orphans=orphans or [],
                                         result=result, error=error, stats=totals)),
              store.submit(SetRunStatus(run_id, status)),
              store.submit(AppendEvent(run_id, "attempt_finished", {
                  "attempt": number, "status": status, "executed": totals["executed"],
                  "replayed": totals["replayed"]}))]
    for write in writes:
        write.result()
    return AttemptOutcome(
        run_id, number, status, executed=totals["executed"], replayed=totals["replayed"],
        provider_calls=totals["provider_calls"], spend_usd=totals["spend_usd"],
        divergences=totals["divergences"], orphans=orphans or [],
        semantic_repeats=totals["semantic_repeats"], result=result, error=error, gate=gate,
        calls=list(totals.get("calls", [])), denials=totals["denials"], logs=logs)
