"""Orphans: a committed loop shrunk from three iterations to one leaves two committed identities
that the repair never invokes.

Every frozen callsite is still in the source, so the gate accepts; only occurrence 0 is invoked
(and replays). The host compares the frozen identities with those invoked and reports the two
it skipped. Under ``orphan_policy = warn`` (the default) the report is persisted and the run
succeeds; under ``stop`` the same report fails the run. Neither executes anything.

Run: ``python -m bench.paper.orphans``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.paper.common import Lab, counted, table

_LOOP = '''
PROMPTS = ["dawn", "noon", "dusk"]


async def orchestrate(ctx, args):
    frames = []
    for i in range({n}):
        img = await ctx.run("image.generate", {{"prompt": "a harbour at " + PROMPTS[i], "size": "512x512"}})
        frames.append(img["artifact"])
    return frames
'''


@dataclass(frozen=True)
class Shrink:
    policy: str
    gate_accepted: bool
    status: str
    orphans: tuple[str, ...]
    replayed: int
    provider_calls: int
    persisted: bool  # the orphan report is an event of the run


def shrink(lab: Lab, policy: str) -> Shrink:
    run_id = lab.fresh_id(f"shrink-{policy}")
    env = {"orphan_policy": policy}
    first = lab.run(run_id, _LOOP.format(n=3), envelope=env)
    if (first.status, first.executed) != ("succeeded", 3):
        raise RuntimeError(f"shrink-{policy}: the original loop ended {first.status}")
    out = counted(lab, run_id, _LOOP.format(n=1), envelope=env)
    events = [e for e in lab.store.list_events(run_id) if e.kind == "orphans"]
    return Shrink(policy, out.outcome.gate is not None and out.outcome.gate.accepted, out.status,
                  tuple(out.outcome.orphans), out.outcome.replayed, out.attempts, bool(events))


def study(lab: Lab) -> list[Shrink]:
    return [shrink(lab, p) for p in ("warn", "stop")]


def render(rows: Sequence[Shrink]) -> str:
    return table(["policy", "gate", "status", "orphans", "replayed", "provider calls",
                  "report persisted", "orphan identities"],
                 [[r.policy, "accepted" if r.gate_accepted else "stopped", r.status,
                   len(r.orphans), r.replayed, r.provider_calls, r.persisted,
                   ", ".join(r.orphans)] for r in rows],
                 "Orphans: a committed loop shrunk from range(3) to range(1)")


def main(argv: Sequence[str] | None = None) -> int:
    with Lab() as lab:
        print(render(study(lab)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
