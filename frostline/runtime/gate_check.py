"""The gate applied to a candidate's source text.

The gate itself (frostline.contract.gate) compares frozen sites with candidate sites and never
parses anything; the static side (frostline.script) owns how a source becomes sites. This module
is where the two meet, for the callers that hold only a candidate's text.
"""

from __future__ import annotations

from collections.abc import Mapping

from frostline.contract.gate import FrozenSite, GateResult, gate
from frostline.errors import ScriptRejected
from frostline.script import sites


def gate_source(frozen: Mapping[str, FrozenSite], candidate_source: str) -> GateResult:
    """Parse `candidate_source`, compute its sites and gate them.

    Example: ``gate_source(frozen_map(slots, attempts), repaired_text).accepted``

    Raises ScriptRejected (never a GateResult) when the candidate does not parse.
    """
    try:
        candidate = sites(candidate_source)
    except ScriptRejected as exc:
        raise ScriptRejected(
            f"the candidate does not parse ({exc.message}); fix the syntax, the gate can only "
            "compare a parsed script", rule="R00", line=exc.fields.get("line")) from None
    except (SyntaxError, ValueError) as exc:  # defensive: a parser error that escaped sites()
        raise ScriptRejected(f"the candidate does not parse: {exc}", rule="R00") from None
    return gate(frozen, candidate)
