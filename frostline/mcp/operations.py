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

import re
from collections.abc import Iterable
from importlib import resources
from typing import Any

from frostline.capabilities.approvals import ApprovalPolicy
from frostline.capabilities.envelope import Envelope
from frostline.contract.gate import frozen_map
from frostline.contract.identity import Identity
from frostline.contract.records import LOCAL_PRINCIPAL, RunRecord, key_as_name, owner_view, run_key
from frostline.errors import DefinitionError, RunNotFound
from frostline.providers.registry import CapabilityRegistry
from frostline.runtime.describe import describe_run
from frostline.runtime.dry_replay import gate_with_trace
from frostline.runtime.execute import execute
from frostline.runtime.gate_check import gate_source
from frostline.runtime.runners import Runner
from frostline.script import check
from frostline.store.base import Store

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


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
               owner: str | None = None, relocation: str | None = None) -> dict[str, Any]:
    """One attempt of `script` under the owner's run `run_id` (a new run, or the next attempt
    of a failed one: committed calls replay, a changed frozen call is a gate counterexample)."""
    _check_run_id(run_id)
    env = Envelope.from_dict(envelope, registry.catalog) if envelope is not None else None
    key = run_key(owner, run_id)
    outcome = execute(store, key, script, args=args, envelope=env, providers=registry,
                      runner=runner, catalog=registry.catalog, owner=owner,
                      relocation=relocation)
    shown: dict[str, Any] = dict(outcome.to_dict())
    return key_as_name(key, run_id, shown)


def gate_script(store: Store, run_id: str, script: str, *, owner: str | None = None,
                runner: Runner | None = None, relocation: str | None = None) -> dict[str, Any]:
    """Whether `script` keeps every frozen site of `run_id`; counterexamples if not. Under
    relocation `rebind` (the run's, or `relocation`) and with a `runner`, a candidate that
    only moves committed calls gets the dry replay. Spends nothing and records nothing."""
    run = _existing(store, run_id, owner)
    frozen = frozen_map(store.list_slots(run.run_id), store.list_attempts(run.run_id))
    result: dict[str, Any] = gate_source(frozen, script).to_dict()
    if not result["accepted"] and runner is not None:
        result = gate_with_trace(store, run.run_id, script, runner=runner,
                                 relocation=relocation)
    result["frozen_sites"] = len(frozen)
    return owner_view(run, result)


def show_run(store: Store, run_id: str, *, owner: str | None = None) -> dict[str, Any]:
    run = _existing(store, run_id, owner)
    return owner_view(run, describe_run(store, run.run_id))


def reconcile_call(store: Store, run_id: str, identity: str, *, result: Any = None,
                   abandon: bool = False, owner: str | None = None) -> dict[str, Any]:
    """Resolve an unresolved call: write back the result the provider is known to have
    produced, or abandon it (one re-execution allowed, audited)."""
    if abandon == (result is not None):
        raise DefinitionError("give exactly one of result (the known result) or abandon=true")
    try:
        ident = Identity.parse(identity)
    except ValueError as exc:
        raise DefinitionError(str(exc), identity=identity) from None
    run = _existing(store, run_id, owner)
    with store.run_lock(run.run_id):  # never while an attempt of the run executes
        call = store.reconcile_call(run.run_id, ident, abandon=abandon, result=result)
    return {"run_id": run_id, "identity": str(ident), "status": call.status.value,
            "capability": call.capability, "call_id": call.call_id}


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
    if not isinstance(run_id, str) or not RUN_ID.match(run_id):
        raise DefinitionError(f"run id {run_id!r} must be 1-128 letters, digits, '.', '_' or "
                              "'-', starting with a letter or digit", run_id=run_id)


def _existing(store: Store, run_id: str, owner: str | None) -> RunRecord:
    """The owner's run `run_id`; RunNotFound alike for a missing run and another's."""
    _check_run_id(run_id)
    run = store.get_run(run_key(owner, run_id))
    if run is None or (owner is not None and run.owner != owner):
        raise RunNotFound(f"no run {run_id!r}; run_script creates it", run_id=run_id)
    return run

