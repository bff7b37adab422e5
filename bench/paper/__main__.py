"""Run every paper study and print its table: ``python -m bench.paper [--quick]``.

``--quick`` narrows the slow studies (fewer fanout widths, fewer overhead sizes and repeats);
the default reproduces the sizes the paper reports.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from bench.paper import (
    fanout,
    gate_edits,
    identity,
    orphans,
    overhead,
    payload_change,
    repairs,
    shifts,
)
from bench.paper.common import Lab


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args(argv)
    widths = (4, 8) if opts.quick else fanout.WIDTHS
    sizes = (1, 10, 50) if opts.quick else overhead.SIZES
    repeat = 20 if opts.quick else 200
    sections = []
    t0 = time.perf_counter()
    with Lab() as lab:
        scripts = gate_edits.choose(20)
        sections.append(gate_edits.render(gate_edits.study(scripts, lab), len(scripts)))
        sections.append(repairs.render(repairs.study(lab)))
        sections.append(identity.render(identity.study(lab)))
        sections.append(fanout.render(fanout.study(lab, widths, 1 if opts.quick else 3)))
        sections.append(payload_change.render(payload_change.study(lab)))
        sections.append(shifts.render(*shifts.study(lab)))
        sections.append(orphans.render(orphans.study(lab)))
    sections.append(overhead.render(overhead.study(sizes, repeat), repeat))
    print("\n\n".join(sections))
    print(f"\nall studies in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
