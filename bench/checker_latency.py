"""Checker latency over the valid corpus, against ``ast.parse`` of the same sources.

The checker sits on the path of every submission and every repair candidate, so its cost must
stay a small multiple of parsing. Per script, the benchmark times many repetitions of
``frostline.script.check(source)`` (default envelope, every rule) and of ``ast.parse(source)``
with ``time.perf_counter_ns``, interleaved in the same loop after a warm-up so that both see the
same machine state, and reports p50 and p95 per script and pooled, and the checker/parse ratio
of the medians.

Targets: pooled p50 ≤ 1.0 ms, pooled p95 ≤ 2.5 ms, median checker/parse ratio ≤ 4
(the paper reports p50 1.70 ms and p95 4.21 ms for its checker).

Run: ``python -m bench.checker_latency [--reps 200] [--warmup 20] [--top 15] [--json]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.corpus import CorpusScript, load

TARGET_P50_MS = 1.0
TARGET_P95_MS = 2.5
TARGET_RATIO = 4.0
PAPER = {"p50_ms": 1.70, "p95_ms": 4.21}


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-quantile (0..1) by linear interpolation between closest ranks."""
    ordered = sorted(samples)
    if not ordered:
        raise ValueError("percentile of no samples")
    pos = (len(ordered) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True)
class ScriptTiming:
    name: str
    lines: int
    check_ns: tuple[int, ...]
    parse_ns: tuple[int, ...]
    check_cpu_ns: tuple[int, ...] = ()

    def check_ms(self, q: float) -> float:
        return percentile(self.check_ns, q) / 1e6

    def parse_ms(self, q: float) -> float:
        return percentile(self.parse_ns, q) / 1e6

    @property
    def ratio(self) -> float:
        return percentile(self.check_ns, 0.5) / max(percentile(self.parse_ns, 0.5), 1.0)


@dataclass(frozen=True)
class Result:
    reps: int
    warmup: int
    scripts: list[ScriptTiming]

    @property
    def pooled_check(self) -> list[int]:
        return [t for s in self.scripts for t in s.check_ns]

    @property
    def pooled_parse(self) -> list[int]:
        return [t for s in self.scripts for t in s.parse_ns]

    def cpu_ms(self, q: float) -> float:
        """Checker CPU time (thread clock): the same calls without the time spent preempted."""
        return percentile([t for s in self.scripts for t in s.check_cpu_ns], q) / 1e6

    @property
    def p50_ms(self) -> float:
        return percentile(self.pooled_check, 0.5) / 1e6

    @property
    def p95_ms(self) -> float:
        return percentile(self.pooled_check, 0.95) / 1e6

    @property
    def parse_p50_ms(self) -> float:
        return percentile(self.pooled_parse, 0.5) / 1e6

    @property
    def parse_p95_ms(self) -> float:
        return percentile(self.pooled_parse, 0.95) / 1e6

    @property
    def median_ratio(self) -> float:
        """Median over scripts of (checker p50 / parse p50)."""
        return statistics.median(s.ratio for s in self.scripts)

    def verdicts(self) -> dict[str, bool]:
        return {"p50": self.p50_ms <= TARGET_P50_MS, "p95": self.p95_ms <= TARGET_P95_MS,
                "ratio": self.median_ratio <= TARGET_RATIO}

    def to_dict(self) -> dict[str, Any]:
        return {
            "reps": self.reps, "warmup": self.warmup, "scripts": len(self.scripts),
            "python": platform.python_version(), "machine": platform.machine(),
            "check_p50_ms": self.p50_ms, "check_p95_ms": self.p95_ms,
            "parse_p50_ms": self.parse_p50_ms, "parse_p95_ms": self.parse_p95_ms,
            "check_cpu_p50_ms": self.cpu_ms(0.5), "check_cpu_p95_ms": self.cpu_ms(0.95),
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "median_ratio": self.median_ratio,
            "targets": {"p50_ms": TARGET_P50_MS, "p95_ms": TARGET_P95_MS, "ratio": TARGET_RATIO},
            "met": self.verdicts(), "paper": PAPER,
            "per_script": [{"name": s.name, "lines": s.lines, "check_p50_ms": s.check_ms(0.5),
                            "check_p95_ms": s.check_ms(0.95), "parse_p50_ms": s.parse_ms(0.5),
                            "ratio": s.ratio} for s in self.scripts],
        }


def measure(scripts: Sequence[CorpusScript], *, reps: int = 200, warmup: int = 20,
            check: Callable[[str], Any] | None = None) -> Result:
    """Time ``check`` and ``ast.parse`` on every script, interleaved, after a warm-up."""
    if check is None:
        from frostline.script import check as check_fn
        check = check_fn
    sources = [s.source for s in scripts]
    for _ in range(warmup):
        for src in sources:
            check(src)
            ast.parse(src)
    clock, cpu = time.perf_counter_ns, time.thread_time_ns
    check_ns: list[list[int]] = [[] for _ in sources]
    parse_ns: list[list[int]] = [[] for _ in sources]
    cpu_ns: list[list[int]] = [[] for _ in sources]
    for _ in range(reps):
        for i, src in enumerate(sources):
            c0 = cpu()
            t0 = clock()
            check(src)
            t1 = clock()
            c1 = cpu()
            ast.parse(src)
            t2 = clock()
            check_ns[i].append(t1 - t0)
            parse_ns[i].append(t2 - t1)
            cpu_ns[i].append(c1 - c0)
    timings = [ScriptTiming(s.name, s.source.count("\n") + 1, tuple(c), tuple(p), tuple(u))
               for s, c, p, u in zip(scripts, check_ns, parse_ns, cpu_ns, strict=True)]
    return Result(reps, warmup, timings)


def _summary_rows(result: Result) -> list[list[str]]:
    met = result.verdicts()

    def mark(ok: bool) -> str:
        return "met" if ok else "MISSED"

    return [
        ["checker p50 (pooled)", f"{result.p50_ms:.3f} ms", f"≤ {TARGET_P50_MS} ms",
         f"{PAPER['p50_ms']} ms", mark(met["p50"])],
        ["checker p95 (pooled)", f"{result.p95_ms:.3f} ms", f"≤ {TARGET_P95_MS} ms",
         f"{PAPER['p95_ms']} ms", mark(met["p95"])],
        ["checker CPU p50 / p95 (thread clock, pooled)",
         f"{result.cpu_ms(0.5):.3f} / {result.cpu_ms(0.95):.3f} ms", "context", "-", "-"],
        ["ast.parse p50 / p95 (pooled)",
         f"{result.parse_p50_ms:.3f} / {result.parse_p95_ms:.3f} ms", "baseline", "-", "-"],
        ["checker / parse (median of per-script p50 ratios)", f"{result.median_ratio:.2f}×",
         f"≤ {TARGET_RATIO}×", "-", mark(met["ratio"])],
    ]


def render(result: Result, top: int = 15) -> None:
    """Print the slowest scripts and the summary against the targets."""
    slowest = sorted(result.scripts, key=lambda s: s.check_ms(0.5), reverse=True)[:top]
    per_script = [[s.name, str(s.lines), f"{s.check_ms(0.5):.3f}", f"{s.check_ms(0.95):.3f}",
                   f"{s.parse_ms(0.5):.3f}", f"{s.ratio:.2f}"] for s in slowest]
    heads = ["script", "lines", "check p50 ms", "check p95 ms", "parse p50 ms", "ratio"]
    sheads = ["measure", "this run", "target", "paper", ""]
    # The load average says whether other processes competed for the CPU during the run:
    # wall-clock percentiles (p95 above all) include the time the process was preempted.
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    title = (f"Checker latency: {len(result.scripts)} valid scripts × {result.reps} reps "
             f"(warm-up {result.warmup}), Python {platform.python_version()}, "
             f"{os.cpu_count()} CPUs, load {load}")
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text keeps the benchmark runnable without rich
        print(title)
        for rows, hs in ((per_script, heads), (_summary_rows(result), sheads)):
            print(" | ".join(hs))
            for row in rows:
                print(" | ".join(row))
        return
    console = Console(width=max(Console().width, 110))
    table = Table(title=f"{title}; slowest {len(slowest)} by p50")
    for h in heads:
        table.add_column(h, justify="left" if h == "script" else "right")
    for row in per_script:
        table.add_row(*row)
    console.print(table)
    summary = Table(title="Against the targets (same run)")
    for h in sheads:
        summary.add_column(h)
    for row in _summary_rows(result):
        summary.add_row(*row)
    console.print(summary)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.checker_latency",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200, help="timed repetitions per script")
    parser.add_argument("--warmup", type=int, default=20, help="untimed passes first")
    parser.add_argument("--top", type=int, default=15, help="slowest scripts to list")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    ns = parser.parse_args(argv)
    if ns.reps < 1 or ns.warmup < 0:
        parser.error("--reps must be ≥ 1 and --warmup ≥ 0")
    result = measure(load("valid"), reps=ns.reps, warmup=ns.warmup)
    if ns.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        render(result, top=ns.top)
    return 0 if all(result.verdicts().values()) else 1


if __name__ == "__main__":
    sys.exit(main())
