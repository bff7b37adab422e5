"""Table III (E2b): repairs on committed prefixes, against a naive full rerun.

Each case runs an original script until a capability call fails at the provider, leaving the
calls before it committed, then runs the repaired script under the same run id through the
production runtime (checker, gate, broker, ledger, certificate). The naive baseline runs the
same repair under a fresh run id, as a rerun from scratch would. All counts of executions come
from the providers' own log, not from the runtime's report.

- e388: a parallel four-shot script; the fourth shot's size is rejected (HTTP 400). The repair
  fixes the size table, which is outside the call expression.
- a425: the same shape, and the repair moves the call into a helper (Fig. 1). The capability,
  payloads and order are unchanged, but the frozen site disappears: the gate stops it before
  anything is spent (``removed``).
- 5698a / 5698b: a loop of image + review over two frames, failing at the second iteration's
  image, or at its review (the review is sent a reference to an artifact that does not exist).

Columns as in the paper: Cmt. committed identities after the failed run, Rep. replayed by the
repair, New newly executed by it, Tot. successful executions over the failed run plus the
repair, Naive the failed run's successes plus a full rerun of the repair.

Run: ``python -m bench.paper.repairs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.paper.common import Lab, counted, table
from frostline.runtime import certificates as certificate

_FOUR = '''
SIZES = ["512x512", "512x512", "512x512", "{last}"]


async def orchestrate(ctx, args):
    async def gen(i):
        return await ctx.run("image.generate", {{"prompt": args["scout_shots"][i], "size": SIZES[i]}})

    images = await ctx.parallel([gen(i) for i in range(4)])
    return [img["artifact"] for img in images[:4]]
'''

_RELOCATED = '''
SIZES = ["512x512", "512x512", "512x512", "512x512"]


async def gen_one(ctx, args, i):
    return await ctx.run("image.generate", {"prompt": args["scout_shots"][i], "size": SIZES[i]})


async def orchestrate(ctx, args):
    images = await ctx.parallel([gen_one(ctx, args, i) for i in range(4)])
    return [img["artifact"] for img in images[:4]]
'''

_LOOP = '''
SIZES = ["512x512", "{second}"]
READABLE = {readable}


async def orchestrate(ctx, args):
    verdicts = []
    for i in range(2):
        img = await ctx.run("image.generate", {{"prompt": "frame " + str(i), "size": SIZES[i]}})
        ref = img["artifact"] if i < READABLE else "sha256:" + "0" * 64
        review = await ctx.run("review.visual", {{"image": ref}})
        verdicts.append(review["verdict"])
    return verdicts
'''

SCOUT = {"scout_shots": ["harbour at dawn", "gulls over the pier", "fishing boats", "lighthouse"]}


@dataclass(frozen=True)
class Case:
    """An original script that fails partway, and the repair a model wrote for it."""

    name: str
    shape: str
    original: str
    repair: str
    args: Any = None


CASES = (
    Case("e388", "parallel fanout", _FOUR.format(last="2048x2048"),
         _FOUR.format(last="512x512"), SCOUT),
    Case("a425", "relocate into helper", _FOUR.format(last="2048x2048"), _RELOCATED, SCOUT),
    Case("5698a", "loop, fails at image", _LOOP.format(second="2048x2048", readable=2),
         _LOOP.format(second="512x512", readable=2)),
    Case("5698b", "loop, fails at review", _LOOP.format(second="512x512", readable=1),
         _LOOP.format(second="512x512", readable=2)),
)


@dataclass(frozen=True)
class Row:
    """One case's episode, counted from the provider log."""

    case: str
    shape: str
    failed_at: int  # the k-th call of the original run, in program order, is the one that failed
    committed: int
    replayed: int
    new: int
    total: int
    naive: int
    attempts: int  # provider attempts over the episode, the injected failure included
    naive_attempts: int
    repair_status: str
    gate_kinds: tuple[str, ...]
    duplicates: int
    orphans: int
    certificate_differences: int


def replay_case(lab: Lab, case: Case) -> Row:
    """Run `case` as the paper does: original, repair on the same run id, naive rerun."""
    run_id = lab.fresh_id(case.name)
    first = counted(lab, run_id, case.original, args=case.args)
    if first.status != "failed":
        raise RuntimeError(f"{case.name}: the original run should fail, got {first.status}")
    failed_at = next(i for i, c in enumerate(first.outcome.calls, 1) if c["outcome"] == "failed")
    committed = {str(s.identity) for s in lab.store.list_slots(run_id)}
    repair = counted(lab, run_id, case.repair, args=case.args)
    executed = [c["identity"] for c in repair.outcome.calls if c.get("outcome") == "executed"]
    duplicates = sum(1 for i in executed if i in committed)
    naive = counted(lab, lab.fresh_id(case.name + "-naive"), case.repair, args=case.args)
    if naive.status != "succeeded":
        raise RuntimeError(f"{case.name}: the naive rerun should succeed, got {naive.status}")
    gate = repair.outcome.gate
    kinds = tuple(sorted({c.kind for c in gate.counterexamples})) if gate is not None else ()
    return Row(case.name, case.shape, failed_at, len(committed), repair.outcome.replayed,
               repair.successes, first.successes + repair.successes,
               first.successes + naive.successes, first.attempts + repair.attempts,
               first.attempts + naive.attempts, repair.status, kinds, duplicates,
               len(repair.outcome.orphans),
               len(certificate.verify(lab.store, run_id)["differences"]))


def study(lab: Lab, cases: Sequence[Case] = CASES) -> list[Row]:
    return [replay_case(lab, c) for c in cases]


def render(rows: Sequence[Row]) -> str:
    body = [[r.case, r.shape, r.failed_at, r.committed, r.replayed, r.new, r.total, r.naive,
             f"{r.attempts}/{r.naive_attempts}",
             r.repair_status + (f" ({', '.join(r.gate_kinds)})" if r.gate_kinds else ""),
             r.duplicates, r.orphans, r.certificate_differences] for r in rows]
    body.append(["total", "", "", sum(r.committed for r in rows),
                 sum(r.replayed for r in rows), sum(r.new for r in rows),
                 sum(r.total for r in rows), sum(r.naive for r in rows),
                 f"{sum(r.attempts for r in rows)}/{sum(r.naive_attempts for r in rows)}", "",
                 sum(r.duplicates for r in rows), sum(r.orphans for r in rows),
                 sum(r.certificate_differences for r in rows)])
    return table(["case", "shape", "k", "Cmt.", "Rep.", "New", "Tot.", "Naive",
                  "attempts c/n", "repair", "dup.", "orphans", "cert. diffs"], body,
                 "Table III (E2b): injected failures, repair on the committed prefix vs a full "
                 "rerun (successful executions; attempts include the injected failure)")


def main(argv: Sequence[str] | None = None) -> int:
    with Lab() as lab:
        print(render(study(lab)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
