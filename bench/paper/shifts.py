"""Section IV-F shifts: occurrence extension under each ledger policy, and a fanout path shift.

*Occurrence extension.* A retry loop with a constant payload commits occurrences 0, 1, 2 of one
site. Widening ``range(3)`` to ``range(6)`` leaves the site, its capability and its call
expression unchanged, so the gate accepts; occurrences 3, 4, 5 are new identities whose payload
was already paid for at the same (site, path) — semantic repeats the occurrence ledger names
before dispatch. Each policy runs on its own run (the policy is part of the run's envelope):
``warn`` records three repeats and executes them, ``deny`` stops before dispatch and spends
nothing, ``auto`` resolves to deny for the side-effecting ``image.generate``.

*Path shift.* A three-way fanout commits its branches; the repair inserts a new branch in front,
so every committed branch moves one path index. The gate accepts (no site changed); the branch
that now reaches committed path 0 carries another payload, and the digest raises Divergence.
The study counts executions during the shifted attempt and whether any committed identity ran
again.

Run: ``python -m bench.paper.shifts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.paper.common import Lab, counted, table

_RETRY = '''
async def orchestrate(ctx, args):
    takes = []
    for i in range({n}):
        img = await ctx.run("image.generate", {{"prompt": "a lighthouse in fog", "size": "512x512"}})
        takes.append(img["artifact"])
    return takes
'''

_BRANCHES = '''
PROMPTS = {prompts}


async def orchestrate(ctx, args):
    async def shot(p):
        return await ctx.run("image.generate", {{"prompt": p, "size": "512x512"}})

    images = await ctx.parallel([shot(p) for p in PROMPTS[:{n}]])
    return [img["artifact"] for img in images[:{n}]]
'''
COMMITTED_PROMPTS = ["a harbour", "a pier", "a lighthouse"]


@dataclass(frozen=True)
class Extension:
    policy: str
    status: str
    gate_accepted: bool
    repeats: int
    executed: int
    provider_calls: int


@dataclass(frozen=True)
class PathShift:
    status: str
    gate_accepted: bool
    executed: int  # provider executions during the shifted attempt
    divergences: int
    identity_duplicates: int  # committed identities executed again
    payload_repeats: int  # executions whose (capability, payload) some committed slot holds


def occurrence_extension(lab: Lab, policy: str) -> Extension:
    run_id = lab.fresh_id(f"widen-{policy}")
    env = {"ledger_policy": policy}
    first = lab.run(run_id, _RETRY.format(n=3), envelope=env)
    if (first.status, first.executed) != ("succeeded", 3):
        raise RuntimeError(f"widen-{policy}: the original loop ended {first.status}")
    widened = counted(lab, run_id, _RETRY.format(n=6), envelope=env)
    gate = widened.outcome.gate
    return Extension(policy, widened.status, gate is not None and gate.accepted,
                     len(widened.outcome.semantic_repeats), widened.outcome.executed,
                     widened.attempts)


def path_shift(lab: Lab) -> PathShift:
    run_id = lab.fresh_id("path-shift")
    first = lab.run(run_id, _BRANCHES.format(prompts=COMMITTED_PROMPTS, n=3))
    if (first.status, first.executed) != ("succeeded", 3):
        raise RuntimeError(f"path shift: the original fanout ended {first.status}")
    slots = lab.store.list_slots(run_id)
    committed_ids = {str(s.identity) for s in slots}
    committed_work = {(s.capability, s.digest) for s in slots}
    shifted = counted(lab, run_id, _BRANCHES.format(prompts=["a gull", *COMMITTED_PROMPTS], n=4))
    executed = [c for c in shifted.outcome.calls if c.get("outcome") == "executed"]
    return PathShift(shifted.status, (shifted.outcome.gate is not None
                                      and shifted.outcome.gate.accepted),
                     shifted.successes, len(shifted.outcome.divergences),
                     sum(1 for c in executed if c["identity"] in committed_ids),
                     sum(1 for c in executed if (c["capability"], c["digest"]) in committed_work))


def study(lab: Lab) -> tuple[list[Extension], PathShift]:
    return ([occurrence_extension(lab, p) for p in ("warn", "deny", "auto")], path_shift(lab))


def render(ext: Sequence[Extension], shift: PathShift) -> str:
    a = table(["policy", "gate", "status", "semantic repeats", "executed", "provider calls"],
              [[e.policy, "accepted" if e.gate_accepted else "stopped", e.status, e.repeats,
                e.executed, e.provider_calls] for e in ext],
              "Occurrence extension: a constant-payload loop widened from range(3) to range(6)")
    b = table(["gate", "status", "divergences", "executed", "identity dup.", "payload repeats"],
              [["accepted" if shift.gate_accepted else "stopped", shift.status,
                shift.divergences, shift.executed, shift.identity_duplicates,
                shift.payload_repeats]],
              "Path shift: a fanout branch inserted before three committed branches")
    return a + "\n\n" + b


def main(argv: Sequence[str] | None = None) -> int:
    with Lab() as lab:
        print(render(*study(lab)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
