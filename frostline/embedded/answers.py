"""Answers to a run's waits: an approval (or a rejection) at an identity, an event by name.

The one place every surface (the command line, the HTTP API, the MCP server, the UI) commits
an answer, so each refuses the same bad input the same way and changes nothing when it does:
an unknown run or wait, a second answer (the first stands), a malformed answer, a run that has
finished. What a wait receives is what the next attempt of the run gets as the call's result.

Who may answer an approval is decided here too, on the wait the answer binds (inside its
transaction): given the configuration's `ApprovalPolicy`, the HTTP API and the MCP server
refuse a run's owner its own approvals (unless self_approval) and anyone who is not an approver.
The command line passes no policy: it is the local principal on its own machine.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import Any

from frostline.capabilities.approvals import ApprovalPolicy
from frostline.contract.jsonshape import check_storable
from frostline.contract.records import LOCAL_PRINCIPAL, RunRecord
from frostline.contract.waits import WaitRecord, approval_value, check_signal, iso
from frostline.errors import AnswerInvalid, ApprovalForbidden, NoEventWait, RunNotFound
from frostline.store.base import Store
from frostline.store.sql_waits import FINISHED_STATUSES


def _run(store: Store, run_id: str) -> RunRecord:
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r} in this store", run_id=run_id)
    return run


def approve(store: Store, run_id: str, identity: str, *, by: str, approved: bool = True,
            reason: str | None = None, clock: Callable[[], float] = time.time,
            policy: ApprovalPolicy | None = None, roles: Iterable[str] = ()) -> dict[str, Any]:
    """Approve (or reject) the approval wait `identity` of the run; returns the answer.

    With a `policy`, `by` (holding a token with `roles`) must be allowed to answer it:
    ApprovalForbidden (saying who may) when not, or RunNotFound for a principal who approves
    nothing at all (another principal's run reads like a missing one).

    Example: ``approve(store, "r1", "orchestrate/#1@:0", by="alice", reason="looks right")``
    """
    run = _run(store, run_id)
    if not isinstance(identity, str) or not identity or len(identity) > 1000:
        raise AnswerInvalid("identity must be a wait's identity, e.g. orchestrate/#0@:0")
    value, held, owner = approval_value(approved, by, reason, clock()), tuple(roles), _owner(run)
    if policy is not None and by != owner and not policy.approves_anything(by, held):
        raise RunNotFound(f"no run {run.name!r}", run_id=run.name)  # not even which waits
    authorize = None if policy is None else _authorizer(policy, run, by, held)
    return store.answer_wait(run_id, identity, value, by=by, kind="approval",
                             authorize=authorize).to_dict()


def _authorizer(policy: ApprovalPolicy, run: RunRecord, caller: str,
                roles: tuple[str, ...]) -> Callable[[WaitRecord], None]:
    def authorize(wait: WaitRecord) -> None:
        why = policy.refusal(capability=wait.capability, owner=_owner(run), caller=caller,
                             roles=roles)
        if why is None:
            return
        if caller == LOCAL_PRINCIPAL:
            why += (f"; on this machine, answer it with `frostline approve {run.name} "
                    f"{wait.identity}`")
        raise ApprovalForbidden(why, run_id=run.name, identity=wait.identity,
                                capability=wait.capability,
                                approvers=list(policy.rule(wait.capability).approvers))
    return authorize


def _owner(run: RunRecord) -> str:
    return run.owner or LOCAL_PRINCIPAL  # runs without an owner are the local principal's


def approvals_for(store: Store, policy: ApprovalPolicy, caller: str, roles: Iterable[str],
                  limit: int = 100) -> list[dict[str, Any]]:
    """The unanswered approvals of waiting runs that `caller` (with `roles`) may answer,
    oldest first: each with the run's owner and name, its identity and what it asks."""
    held = tuple(roles)
    out = []
    for owner, name, wait in store.open_approvals(limit=1000):
        if policy.refusal(capability=wait.capability, owner=owner, caller=caller,
                          roles=held) is None:
            out.append({"owner": owner, "run_id": name, "identity": wait.identity,
                        "capability": wait.capability, "payload": wait.payload,
                        "reached_at": iso(wait.reached_at)})
    return out[:limit]


def signal(store: Store, run_id: str, name: str, data: Any, *,
           by: str = LOCAL_PRINCIPAL) -> dict[str, Any]:
    """Send the event `name` with the JSON body `data` to the run, as the principal `by`: it
    goes to the earliest wait for `name` without an answer (whose answer records `by`), or is
    kept for the next one that is reached."""
    run = _run(store, run_id)
    try:
        size = len(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise AnswerInvalid(f"the event body must be JSON data: {exc}") from None
    check_signal(name, data, size)
    # A value no store holds is refused for what it is, before whether the run takes events.
    check_storable(data, "event body")
    if run.status not in FINISHED_STATUSES:  # a finished one: the store says so
        _takes_events(store, run_id)
    sent = store.send_signal(run_id, name, data, by=by)
    # The store's seq counts every run's signals: it is not the sender's to see.
    return {"run_id": run_id, "event": name, "delivered_to": sent["delivered_to"]}


def _takes_events(store: Store, run_id: str) -> None:
    """Refuse an event for a run whose script has no `event.wait`: nothing would ever take
    it, and it would be kept for ever. Before the first attempt, the script is not known."""
    heads = store.list_attempt_heads(run_id, 0)  # the reports, not the results
    facts = heads[-1].record.report.get("facts") if heads else None
    if not isinstance(facts, dict):
        return
    sites = facts.get("sites") or []
    dynamic = any(isinstance(s, dict) and s.get("capability") is None for s in sites)
    if "event.wait" not in (facts.get("capabilities") or {}) and not dynamic:
        raise NoEventWait(
            f"run {run_id!r} waits for no event: its script has no event.wait call, so the "
            "event would never be taken; nothing was recorded", run_id=run_id)


def waits_of(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The waits the run reached, each with its answer (None while it waits)."""
    _run(store, run_id)
    return [{**w.to_dict(), "answer": None if a is None else a.to_dict()}
            for w, a in store.list_waits(run_id)]


def open_waits(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The waits of the run that have no answer yet (what it waits for)."""
    return [w for w in waits_of(store, run_id) if w["answer"] is None]


def ready(store: Store, run_id: str, now: float) -> bool:
    """Whether a waiting run would get further if it were resumed now: one of its waits has
    an answer it has not received, or a timer (or a timeout) is due."""
    for wait, answer in store.list_waits(run_id):
        if answer is None and wait.due_at is not None and wait.due_at <= now:
            return True
    latest = store.list_attempts(run_id)
    stopped_on = _stopped_on(latest[-1].error if latest else None)
    answered = {w.identity for w, a in store.list_waits(run_id) if a is not None}
    return bool(stopped_on & answered)


def next_due_at(store: Store, run_id: str) -> float | None:
    """When the earliest unanswered timer or timeout of the run is due, or None."""
    due = [w.due_at for w, a in store.list_waits(run_id) if a is None and w.due_at is not None]
    return min(due) if due else None


def _stopped_on(error: Any) -> set[str]:
    if not isinstance(error, dict) or error.get("code") != "waiting":
        return set()
    waits = error.get("waits") or []
    return {str(w.get("identity")) for w in waits if isinstance(w, dict)} | (
        {str(error["identity"])} if error.get("identity") else set())
