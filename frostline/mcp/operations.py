"""The operations behind the MCP server's tools, as plain functions over JSON.

Each takes the store, the open capability registry and (for runs) a runner, and returns the
same JSON object as the matching command: `run_script` is `frostline run --json`, `show_run`
is `frostline show --json`, `gate_script` is `frostline gate --json`. Input errors raise
FrostlineError subclasses; the server turns them into tool errors.

Runs belong to a principal, as in the HTTP API: `owner` is the principal whose bearer token
authenticated the request (None on stdio and without authentication: the local principal, the
command line's). A run id names one of the owner's runs; another principal's run of that name
is not found, and results show the owner's names, never the store's keys.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from typing import Any

from frostline.capabilities.approvals import ApprovalPolicy
from frostline.capabilities.envelope import Envelope
from frostline.contract.gate import frozen_map
from frostline.contract.records import (
    LOCAL_PRINCIPAL,
    RunRecord,
    check_run_name,
    key_as_name,
    owner_view,
    run_key,
)
from frostline.contract.status import RunStatus
from frostline.contract.verdict import GateVerdict
from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import JobCancelled, JobQueue, close_cancelled
from frostline.embedded.reconcile import NOT_GIVEN, reconcile
from frostline.errors import RunBusy, RunNotFound
from frostline.providers.registry import CapabilityRegistry
from frostline.runtime.describe import INLINE_RESULT_BYTES, describe_run
from frostline.runtime.dry_replay import gate_with_trace
from frostline.runtime.execute import execute, execute_async
from frostline.runtime.gate_check import gate_source
from frostline.runtime.runners import Runner
from frostline.script import check
from frostline.store.base import Store


def catalog_view(registry: CapabilityRegistry) -> dict[str, Any]:
    """What a model needs to write a script: the capabilities (schemas, prices, effects) and
    the short document on the script language."""
    skill = resources.files("frostline.repair").joinpath("skill.md").read_text(encoding="utf-8")
    return {"digest": registry.catalog.digest(), "capabilities": registry.describe(),
            "skill": skill}


def check_script(registry: CapabilityRegistry, script: str) -> dict[str, Any]:
    """The checker's verdict on `script`: every violation with its rule, line and fix hint."""
    report: dict[str, Any] = check(script, Envelope(), catalog=registry.catalog).to_dict()
    return report


def run_script(store: Store, registry: CapabilityRegistry, runner: Runner, run_id: str,
               script: str, args: Any = None, envelope: dict[str, Any] | None = None, *,
               owner: str | None = None, interrupts: Interrupts | None = None,
               relocation: str | None = None) -> dict[str, Any]:
    """One attempt of `script` under the owner's run `run_id` (a new run, or the next attempt
    of a failed one: committed calls replay, a changed frozen call is a gate counterexample).
    Under `interrupts`, `cancel_run` can stop it: it then ends `cancelled`."""
    _check_run_id(run_id)
    env = Envelope.from_dict(envelope, registry.catalog) if envelope is not None else None
    key = run_key(owner, run_id)
    if interrupts is None:
        outcome = execute(store, key, script, args=args, envelope=env, providers=registry,
                          runner=runner, catalog=registry.catalog, owner=owner,
                          relocation=relocation)
        return key_as_name(key, run_id, dict(outcome.to_dict()))
    try:
        outcome = interrupts.run(execute_async(
            store, key, script, args=args, envelope=env, providers=registry, runner=runner,
            catalog=registry.catalog, owner=owner, relocation=relocation), run_id=key)
    except JobCancelled as stop:
        number = None
        try:
            with store.run_lock(key):  # the stopped attempt released it
                number = close_cancelled(store, key, stop.by)
        except RunBusy:
            pass
        return key_as_name(key, run_id, {
            "run_id": key, "status": RunStatus.CANCELLED, "attempt": number, "by": stop.by,
            "error": {"code": "cancelled", "by": stop.by, "message":
                      f"cancelled by {stop.by}; every call it dispatched was committed first"}})
    finally:
        interrupts.forget(key)
    return key_as_name(key, run_id, dict(outcome.to_dict()))


def cancel_run(store: Store, run_id: str, *, owner: str | None = None,
               local: Interrupts | None = None, queue: JobQueue | None = None,
               wait_s: float = 30.0) -> dict[str, Any]:
    """Cancel the owner's run: its run_script here, or its job queued or running elsewhere
    (see `frostline.embedded.cancel`); waits up to `wait_s` for it to stop."""
    from frostline.embedded.cancel import cancel_run as cancel
    from frostline.embedded.cancel import settled

    run = _existing(store, run_id, owner)
    found = cancel(store, run.run_id, by=owner or LOCAL_PRINCIPAL, queue=queue, local=local)
    return owner_view(run, settled(store, found, wait_s, local=local))


def gate_script(store: Store, run_id: str, script: str, *, owner: str | None = None,
                runner: Runner | None = None, relocation: str | None = None) -> dict[str, Any]:
    """Whether `script` keeps every frozen site of `run_id`; counterexamples if not. Under
    relocation `rebind` (the run's, or `relocation`) and with a `runner`, a candidate that
    only moves committed calls gets the dry replay. Spends nothing and records nothing."""
    run = _existing(store, run_id, owner)
    frozen = frozen_map(store.list_slots(run.run_id), store.list_attempts(run.run_id))
    verdict = GateVerdict(gate_source(frozen, script))
    if not verdict.accepted and runner is not None:
        verdict = gate_with_trace(store, run.run_id, script, runner=runner,
                                  relocation=relocation)
    result = verdict.to_dict()
    result["frozen_sites"] = len(frozen)
    return owner_view(run, result)


RUN_URI = "frostline://runs/"  # a run's resource; + NAME/attempts/N/result, one result


def show_run(store: Store, run_id: str, *, owner: str | None = None) -> dict[str, Any]:
    """The run as `frostline show` describes it, each attempt with its result; a result over
    INLINE_RESULT_BYTES is left out (never read whole) with `result_bytes` and `result_uri`,
    the resource that reads it on its own."""
    run = _existing(store, run_id, owner)
    shown = describe_run(store, run.run_id, inline_bytes=INLINE_RESULT_BYTES)
    for row in shown["attempts"]:
        if "result_bytes" in row:
            row["result_uri"] = f"{RUN_URI}{run.name}/attempts/{row['number']}/result"
    return owner_view(run, shown)


def attempt_result(store: Store, run_id: str, number: int, *,
                   owner: str | None = None) -> Any:
    """One attempt's result, whole (the resource `show_run` points to for a large one)."""
    run = _existing(store, run_id, owner)
    attempt = store.get_attempt(run.run_id, number)
    if attempt is None:
        raise RunNotFound(f"run {run_id!r} has no attempt {number}", run_id=run_id)
    return attempt.result


def reconcile_call(store: Store, run_id: str, identity: str, *, result: Any = NOT_GIVEN,
                   abandon: bool = False, owner: str | None = None) -> dict[str, Any]:
    """Resolve an unresolved call: write back the result the provider is known to have
    produced, or abandon it (one re-execution allowed, audited). The one reconcile
    (`frostline.embedded.reconcile`), under the run's lock."""
    run = _existing(store, run_id, owner)
    return owner_view(run, reconcile(store, run.run_id, identity, abandon=abandon,
                                     result=result))


def approve(store: Store, run_id: str, identity: str, *, approved: bool = True,
            reason: str | None = None, owner: str | None = None, run_owner: str | None = None,
            policy: ApprovalPolicy | None = None, roles: Iterable[str] = ()) -> dict[str, Any]:
    """Approve (or reject) the approval wait `identity` of a run, once, as the caller `owner`
    (with a token of `roles`): the caller's own run, or `run_owner`'s. With a `policy`, the
    caller must be allowed to answer it (`frostline.embedded.answers.approve`). run_script
    with the run's script then goes on from the wait."""
    from frostline.embedded.answers import approve as answer

    caller = owner or LOCAL_PRINCIPAL
    run = _existing(store, run_id, owner if run_owner in (None, caller) else run_owner)
    return owner_view(run, {"run_id": run.run_id, "owner": run.owner, **answer(
        store, run.run_id, identity, by=caller, approved=approved, reason=reason,
        policy=policy, roles=roles)})


def signal(store: Store, run_id: str, name: str, data: Any = None, *,
           owner: str | None = None) -> dict[str, Any]:
    """Send the event `name` with the JSON body `data` to the owner's run (kept until a wait
    for it)."""
    from frostline.embedded.answers import signal as send

    run = _existing(store, run_id, owner)
    return owner_view(run, send(store, run.run_id, name, data, by=owner or LOCAL_PRINCIPAL))


def owned_runs(store: Store, owner: str | None, limit: int = 100) -> list[RunRecord]:
    """`owner`'s runs, newest first."""
    return store.list_runs(owner=owner or LOCAL_PRINCIPAL, limit=limit)


def owned_artifact(store: Store, ref: str, owner: str | None) -> tuple[bytes, str] | None:
    """An artifact's bytes and MIME type, if `owner`'s runs produced it (None otherwise:
    another principal's artifact reads like a missing one)."""
    return store.get_artifact(ref, owner=owner)


def _check_run_id(run_id: str) -> None:
    check_run_name(run_id)


def _existing(store: Store, run_id: str, owner: str | None) -> RunRecord:
    """The owner's run `run_id`; RunNotFound alike for a missing run and another's."""
    _check_run_id(run_id)
    run = store.get_run(run_key(owner, run_id))
    if run is None or (owner is not None and run.owner != owner):
        raise RunNotFound(f"no run {run_id!r}; run_script creates it", run_id=run_id)
    return run



def write_script_prompt(catalog: Any, task: str = "") -> str:
    """The `write_script` prompt: what the authoring loop shows a model (the skill document,
    the catalog as typed stubs, the default envelope, the task), as one text for a client agent
    that writes the script itself and checks and runs it with this server's tools."""
    from frostline.repair.author import AuthorTask
    from frostline.repair.prompt import build_author_messages
    from frostline.repair.signatures import render_signatures

    if task:
        AuthorTask(task)  # the same bounds as a task the server's own model is given
    envelope = Envelope().to_dict()
    envelope["grants"] = "every capability of the catalog (a run's envelope may grant fewer)"
    system, user = build_author_messages(
        task=task or "(the user's task: ask for it if it is not given)",
        catalog_python=render_signatures(catalog), envelope=envelope, args=None)
    return (system["content"] + "\n\n" + user["content"] + "\n\nThen call `check_script` with "
            "the script, fix what it reports (each violation has a rule, a line and a hint), "
            "and run it with `run_script` under a new run id. If the run fails, send the "
            "repaired script under the SAME run id: committed calls replay for free.")
