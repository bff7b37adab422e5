"""Reconcile an unresolved call: the one implementation behind `frostline reconcile`, the MCP
tool `reconcile_call` and `POST /v1/runs/{id}/reconcile`.

An unresolved call is a side-effecting dispatch whose outcome the store never recorded: the
provider may have run it. An operator either writes back the result it is known to have
produced, or abandons it (the next attempt may execute it once more, audited). The decision is
taken under the run's lock, so it never interleaves with an attempt of the same run (a running
attempt makes it answer `run_busy`), and contradictory input (a result *and* abandon, or
neither) is refused before anything is touched, on every surface alike.
"""

from __future__ import annotations

from typing import Any, Final

from frostline.contract.identity import Identity
from frostline.errors import DefinitionError
from frostline.store.base import Store


class _NotGiven:
    """The type of NOT_GIVEN: no result was given (a JSON null result is a result)."""

    def __repr__(self) -> str:
        return "NOT_GIVEN"


NOT_GIVEN: Final = _NotGiven()


def reconcile(store: Store, run_id: str, identity: str, *, abandon: bool = False,
              result: Any = NOT_GIVEN) -> dict[str, Any]:
    """Abandon the pending call of run `run_id` (the store's key) at `identity`, or write back
    `result` as its slot; exactly one of the two. Returns the call's new state.

    Example: ``reconcile(store, "r1", "orchestrate/#0@:0", result={"ok": True})``

    Raises DefinitionError for contradictory or malformed input, RunBusy while an attempt of
    the run holds its lock, FrostlineError when no call is pending at `identity`.
    """
    given = result is not NOT_GIVEN
    if abandon and given:
        raise DefinitionError(
            "give either abandon=true or a result, not both: abandon lets the next attempt "
            "execute the call once more, a result is written back as the call's outcome",
            identity=identity)
    if not abandon and not given:
        raise DefinitionError(
            "give either abandon=true or the result the provider is known to have produced",
            identity=identity)
    if not isinstance(identity, str) or not identity or len(identity) > 2048:
        raise DefinitionError("identity must be SITE@PATH:OCCURRENCE, as `show` lists it",
                              identity=str(identity)[:200])
    try:
        ident = Identity.parse(identity)
    except ValueError as exc:
        raise DefinitionError(f"{exc}; write the identity as SITE@PATH:OCCURRENCE, as `show` "
                              "lists it", identity=identity) from None
    with store.run_lock(run_id):  # never while an attempt of the run executes
        call = store.reconcile_call(run_id, ident, abandon=abandon,
                                    result=None if abandon else result)
    return {"run_id": run_id, "identity": str(ident), "status": call.status.value,
            "capability": call.capability, "call_id": call.call_id}
