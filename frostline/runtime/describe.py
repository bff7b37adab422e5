"""What a run has done, as one JSON object: the body of `frostline show`, of the HTTP API's
run view and of the MCP server's `show_run`, so every surface says the same thing."""

from __future__ import annotations

from typing import Any

from frostline.contract.identity import program_order
from frostline.errors import RunNotFound
from frostline.runtime.spent import run_spent_usd
from frostline.store.base import Store

# A result larger than this (as JSON) is left out of a run's description, with its size: a
# read of a run never holds more than this per attempt (GET /v1/runs/{id}, MCP show_run).
INLINE_RESULT_BYTES = 64 * 1024


def describe_run(store: Store, run_id: str, *,
                 inline_bytes: int | None = None) -> dict[str, Any]:
    """The JSON of `frostline show`: run, attempts, identity × attempt outcomes (with, for a
    replay of a moved committed call, the committed identity it was moved from), unresolved
    calls, and the waits the run reached with their answers. With `inline_bytes`, each
    attempt also carries its `result`, or `result_bytes` when the result is larger; without,
    no result is read at all (nor any call's result)."""
    run = store.get_run(run_id)
    if run is None:
        raise RunNotFound(f"no run {run_id!r} in the store {store.url}", run_id=run_id)
    heads = store.list_attempt_heads(run_id, inline_bytes or 0)
    left_out = {h.record.number: h.result_bytes for h in heads}
    attempts = [h.record for h in heads]
    slots = {str(s.identity) for s in store.list_slot_usages(run_id)}
    found: dict[str, dict[str, str]] = {ident: {} for ident in slots}
    first_seen: dict[str, int] = {}
    moved: dict[str, dict[str, str]] = {}  # a rebound replay: what it was moved from
    rows = []
    for a in attempts:
        stats = a.stats or {}
        for ident in a.invoked:
            first_seen.setdefault(ident, len(first_seen))
        for call in stats.get("calls", []):
            first_seen.setdefault(call["identity"], len(first_seen))
            found.setdefault(call["identity"], {})[str(a.number)] = call.get("outcome", "?")
            if call.get("moved_from"):
                moved.setdefault(call["identity"], {})[str(a.number)] = call["moved_from"]
        for ident in a.orphans:
            found.setdefault(ident, {})[str(a.number)] = "orphan"
        rows.append({"number": a.number, "status": a.status,
                     "executed": stats.get("executed", 0), "replayed": stats.get("replayed", 0),
                     "provider_calls": stats.get("provider_calls", 0),
                     "spend_usd": stats.get("spend_usd", 0.0), "orphans": list(a.orphans),
                     "error": a.error, "gate": a.gate, "started_at": a.started_at,
                     "finished_at": a.finished_at, "catalog": a.catalog_digest})
        if inline_bytes is not None:
            size = left_out[a.number]
            rows[-1].update({"result": a.result} if size is None else {"result_bytes": size})
    # One order everywhere: the program's (the UI's timeline and `frostline run` use it too).
    identities = {ident: found[ident] for ident in program_order(found, first_seen)}
    unresolved = [{"identity": str(c.identity), "capability": c.capability,
                   "attempt": c.attempt, "call_id": c.call_id}
                  for c in store.unresolved_calls(run_id) if str(c.identity) not in slots]
    return {"run": {"run_id": run.run_id, "status": run.status, "envelope": run.envelope,
                    "kind": run.kind},
            "spend_usd": run_spent_usd(store, run_id),
            "attempts": rows, "committed": len(slots), "identities": identities,
            "moved_from": moved,
            "unresolved": unresolved,
            "catalog_changes": [e.data for e in store.list_events(run_id)
                                if e.kind == "catalog_changed"],
            "waits": [{**w.to_dict(), "answer": None if a is None else a.to_dict()}
                      for w, a in store.list_waits(run_id)]}
