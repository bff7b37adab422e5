"""Benchmark: model-checking the shipped phase graphs.

For `seed` and `canonical` it reports the configurations explored and the median time of a full
check (reachability, safety, liveness) over repeated runs, against the 100 ms target. Two
references are measured in the same run:

- baseline: a bare breadth-first walk over the state graph alone (no artifacts, no budgets),
  the "minimal reachability walker" a 20-state graph would need at the least; the ratio says
  what the full product exploration costs on top of it;
- SPIN: the Promela export compiled with spin + gcc and searched by pan (the cross-check),
  when spin is installed.

Run: ``python -m bench.graph_check [--repeats 21] [--spin-repeats 3] [--no-spin] [--json]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import deque

from frostline.graph.graph import Graph, load_graph
from frostline.graph.modelcheck import check
from frostline.graph.promela import spin_available, spin_check

TARGET_MS = 100.0


def bare_walk(graph: Graph) -> int:
    """Reachable states of the bare state graph: the floor any checker pays."""
    seen = {graph.initial}
    queue = deque([graph.initial])
    while queue:
        s = queue.popleft()
        for t in graph.outgoing(s):
            if t.to not in seen:
                seen.add(t.to)
                queue.append(t.to)
    return len(seen)


def timed(fn, repeats: int, clock=time.perf_counter) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        out.append((clock() - t0) * 1000.0)
    return out


def measure(name: str, repeats: int, spin_repeats: int, with_spin: bool) -> dict[str, object]:
    graph = load_graph(name)
    result = check(graph)
    check_ms = timed(lambda: check(graph), repeats)
    # CPU time of this process: steadier than wall time on a shared machine
    cpu_ms = timed(lambda: check(graph), repeats, clock=time.process_time)
    base_ms = timed(lambda: bare_walk(graph), repeats)
    row: dict[str, object] = {
        "graph": name,
        "verdict": "green" if result.ok else "red",
        "states_explored": result.states_explored,
        "check_median_ms": statistics.median(check_ms),
        "check_min_ms": min(check_ms),
        "check_cpu_median_ms": statistics.median(cpu_ms),
        "baseline_median_ms": statistics.median(base_ms),
        "ratio_to_baseline": statistics.median(check_ms) / max(statistics.median(base_ms), 1e-9),
        "under_target": statistics.median(check_ms) < TARGET_MS,
        "cpu_under_target": statistics.median(cpu_ms) < TARGET_MS,
    }
    if with_spin:
        runs = [spin_check(graph) for _ in range(spin_repeats)]
        agree = all((r.reachability, r.safety, r.liveness) ==
                    (result.reachability.ok, result.safety.ok, result.liveness.ok) for r in runs)
        row["spin_median_ms"] = statistics.median(r.elapsed_ms for r in runs)
        row["spin_agrees"] = agree
        row["spin_to_checker"] = row["spin_median_ms"] / row["check_median_ms"]  # type: ignore[operator]
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--spin-repeats", type=int, default=3)
    ap.add_argument("--no-spin", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    with_spin = not args.no_spin and spin_available()
    rows = [measure(n, args.repeats, args.spin_repeats, with_spin) for n in ("seed", "canonical")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"model checking the shipped graphs ({args.repeats} repeats; medians of wall time, and of "
          f"process CPU time; target < {TARGET_MS:.0f} ms)")
    header = f"{'graph':<10} {'verdict':<7} {'configs':>8} {'check ms':>9} {'min ms':>8} {'cpu ms':>7} " \
             f"{'bare BFS ms':>11} {'ratio':>7} {'<100ms':>6}"
    if with_spin:
        header += f" {'SPIN ms':>9} {'SPIN/check':>10} {'agrees':>6}"
    print(header)
    print("-" * len(header))
    for r in rows:
        line = (f"{r['graph']:<10} {r['verdict']:<7} {r['states_explored']:>8} {r['check_median_ms']:>9.1f} "
                f"{r['check_min_ms']:>8.1f} {r['check_cpu_median_ms']:>7.1f} {r['baseline_median_ms']:>11.3f} {r['ratio_to_baseline']:>7.0f}x "
                f"{'yes' if r['under_target'] else 'NO':>5}")
        if with_spin:
            line += f" {r['spin_median_ms']:>9.0f} {r['spin_to_checker']:>9.0f}x {'yes' if r['spin_agrees'] else 'NO':>6}"
        print(line)
    if not with_spin:
        print("(SPIN cross-check skipped: spin or gcc not installed, or --no-spin)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
