"""Fig. 5: an N-way fanout with one failing branch — the contract makes N + 1 calls, a rerun 2N.

The original script fans out N image calls; the last branch asks for a size the provider
rejects, so N - 1 branches commit. The repair fixes the size table (outside the call
expression) and runs under the same run id: the N - 1 committed branches replay, the failed
branch executes once. A full rerun of the repair under a fresh run id pays for all N again.
Counts are provider attempts from the provider log (a rejected request is a paid attempt), as
in the paper's figure; the saving is N - 1.

Run: ``python -m bench.paper.fanout [--widths 4 8 16 32] [--repeats 1]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass

from bench.paper.common import Lab, table
from bench.paper.repairs import Case, replay_case

WIDTHS = (4, 8, 16, 32)

_FANOUT = '''
SIZES = {sizes}


async def orchestrate(ctx, args):
    async def shot(i):
        return await ctx.run("image.generate", {{"prompt": "shot " + str(i), "size": SIZES[i]}})

    images = await ctx.parallel([shot(i) for i in range({n})])
    return [img["artifact"] for img in images[:{n}]]
'''


def case(n: int) -> Case:
    """The width-`n` fanout whose last branch fails, and its repair."""
    return Case(f"fanout-{n}", f"{n}-way fanout",
                _FANOUT.format(sizes=["512x512"] * (n - 1) + ["2048x2048"], n=n),
                _FANOUT.format(sizes=["512x512"] * n, n=n))


@dataclass(frozen=True)
class Point:
    n: int
    contract_calls: int
    rerun_calls: int
    replayed: int
    new: int
    duplicates: int


def measure(lab: Lab, n: int) -> Point:
    row = replay_case(lab, case(n))
    if row.repair_status != "succeeded":
        raise RuntimeError(f"fanout {n}: the repair ended {row.repair_status}")
    return Point(n, row.attempts, row.naive_attempts, row.replayed, row.new, row.duplicates)


def study(lab: Lab, widths: Sequence[int] = WIDTHS, repeats: int = 1) -> list[list[Point]]:
    return [[measure(lab, n) for _ in range(repeats)] for n in widths]


def render(points: Sequence[Sequence[Point]]) -> str:
    rows = []
    for reps in points:
        p = reps[0]
        same = all((q.contract_calls, q.rerun_calls) == (p.contract_calls, p.rerun_calls)
                   for q in reps)
        rows.append([p.n, p.contract_calls, p.n + 1, p.rerun_calls, 2 * p.n,
                     p.rerun_calls - p.contract_calls, p.replayed, p.new, p.duplicates,
                     f"{len(reps)}{'' if same else ' (varied)'}"])
    return table(["N", "contract", "N+1", "full rerun", "2N", "saved", "replayed", "new",
                  "dup.", "repeats"], rows,
                 "Fig. 5: N-way fanout with one failing branch (provider attempts over the "
                 "failed run plus the repair)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=list(WIDTHS))
    parser.add_argument("--repeats", type=int, default=3)
    opts = parser.parse_args(argv)
    with Lab() as lab:
        print(render(study(lab, opts.widths, opts.repeats)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
