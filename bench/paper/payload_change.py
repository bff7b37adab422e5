"""s1: a repair that changes a committed payload is stopped at dispatch; a supersede-append completes.

The original script generates four shots in sequence from a module-level prompt table; the
fourth asks for a size the provider rejects, so three shots commit. Two repairs follow on the
same run id:

- *edit in place* changes the first prompt in the table. The call expression is untouched, so
  the static gate accepts; the runtime digest sees a different payload at a committed identity
  and raises Divergence before anything is dispatched: zero new calls, no stale artifact.
- *supersede-append* keeps the committed call as it was and appends a new call at a new
  identity with the corrected prompt, and uses its result in place of the first shot. The gate
  admits the new callsite, the digest stays quiet, and the run completes with two new calls
  (the failed fourth shot and the replacement), where a full rerun of that repair pays five.

Run: ``python -m bench.paper.payload_change``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.paper.common import Lab, counted, table

_SHOTS = '''
PROMPTS = ["{first}", "a snowy owl", "a grey wolf", "a brown bear"]
SIZES = ["512x512", "512x512", "512x512", "{last}"]


async def orchestrate(ctx, args):
    shots = []
    for i in range(4):
        img = await ctx.run("image.generate", {{"prompt": PROMPTS[i], "size": SIZES[i]}})
        shots.append(img["artifact"])
    {tail}return shots
'''
_SUPERSEDE = '''fix = await ctx.run("image.generate", {"prompt": "an arctic fox", "size": "512x512"})
    shots[0] = fix["artifact"]
    '''

ORIGINAL = _SHOTS.format(first="a red fox", last="2048x2048", tail="")
EDIT_IN_PLACE = _SHOTS.format(first="an arctic fox", last="512x512", tail="")
SUPERSEDE = _SHOTS.format(first="a red fox", last="512x512", tail=_SUPERSEDE)


@dataclass(frozen=True)
class Result:
    committed: int
    edit_status: str
    edit_gate_accepted: bool
    edit_new_calls: int
    edit_divergences: int
    supersede_status: str
    supersede_replayed: int
    supersede_new: int
    supersede_naive: int
    first_shot_replaced: bool  # the product carries the corrected artifact, not the stale one
    stale_artifact_returned: bool


def study(lab: Lab) -> Result:
    run_id = lab.fresh_id("s1")
    first = counted(lab, run_id, ORIGINAL)
    if first.status != "failed":
        raise RuntimeError(f"s1: the original run should fail, got {first.status}")
    slots = lab.store.list_slots(run_id)
    stale = next(s.result["artifact"] for s in slots if s.occurrence == 0)
    edit = counted(lab, run_id, EDIT_IN_PLACE)
    sup = counted(lab, run_id, SUPERSEDE)
    naive = counted(lab, lab.fresh_id("s1-naive"), SUPERSEDE)
    product = sup.outcome.result or []
    fix = next(c for c in lab.log()[::-1] if c["payload"].get("prompt") == "an arctic fox")
    return Result(len(slots), edit.status, (edit.outcome.gate is None
                                                or edit.outcome.gate.accepted),
                  edit.attempts, len(edit.outcome.divergences), sup.status,
                  sup.outcome.replayed, sup.attempts, naive.attempts,
                  bool(product) and product[0] != stale and fix["ok"],
                  stale in product)


def render(r: Result) -> str:
    rows: list[list[Any]] = [["edit in place", r.edit_status, "accepted" if r.edit_gate_accepted else "stopped",
             r.edit_divergences, 0, r.edit_new_calls, "-", "no output"],
            ["supersede-append", r.supersede_status, "accepted", 0, r.supersede_replayed,
             r.supersede_new, r.supersede_naive,
             "corrected first shot" if r.first_shot_replaced else "STALE"]]
    return table(["repair", "status", "gate", "divergences", "replayed", "new calls",
                  "full rerun", "product"], rows,
                 f"s1: a committed payload change ({r.committed} committed shots, the 4th "
                 "failed)")


def main(argv: Sequence[str] | None = None) -> int:
    with Lab() as lab:
        print(render(study(lab)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
