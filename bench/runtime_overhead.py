"""What the durable runtime costs per call: execute vs replay, in-process vs child process.

Each repeat runs one script of N sequential `echo` calls as a first attempt (every call is
checked, recorded durably before dispatch, executed and committed) and then again on the same
run id (every call is a replay hit). The baseline in the same run is the provider alone: N
direct `invoke` calls, no store, no broker. A fanout variant runs the N calls in one
`ctx.parallel`, where group commit lets concurrent attempt records share a transaction.

Usage::

    python bench/runtime_overhead.py [--calls 20] [--repeats 5] [--store URL]

Prints medians over the repeats and ratios against the in-process first attempt.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from frostline.capabilities.provider import CallContext  # noqa: E402
from frostline.providers.local import LocalProviders  # noqa: E402
from frostline.runtime.execute import execute  # noqa: E402
from frostline.runtime.runners import ChildProcessRunner, Runner  # noqa: E402
from frostline.store import open_store  # noqa: E402
from frostline.testing import InProcessRunner  # noqa: E402

SEQUENTIAL = """
async def orchestrate(ctx, args):
    out = []
    for i in range({n}):
        out.append(await ctx.run("echo", {{"n": i}}))
    return len(out)
"""
FANOUT = """
async def orchestrate(ctx, args):
    done = await ctx.parallel([ctx.run("echo", {{"n": i}}) for i in range({n})])
    return len(done)
"""


class _NoSink:
    def put(self, data: bytes, mime: str) -> str:
        raise RuntimeError("the provider baseline calls echo only, which stores no artifact")

    def get(self, ref: str) -> tuple[bytes, str] | None:
        return None


def _baseline(n: int) -> float:
    providers = LocalProviders()

    async def go() -> None:
        for i in range(n):
            await providers.invoke("echo", {"n": i}, CallContext("b", f"s@:{i}", None, _NoSink()))

    start = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - start


def _timed(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - start, out


def bench(url: str | None, n: int, repeats: int) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="frostline-bench-") as tmp:
        url = url or f"sqlite:///{tmp}/bench.db"
        providers = LocalProviders()
        with open_store(url) as store:
            runners: list[tuple[str, Runner]] = [("in-process", InProcessRunner()),
                                                 ("child process", ChildProcessRunner())]
            for r in range(repeats):
                samples.setdefault("provider only (baseline)", []).append(_baseline(n))
                for label, runner in runners:
                    for shape, source in (("sequential", SEQUENTIAL), ("fanout", FANOUT)):
                        run_id = f"bench-{label.replace(' ', '-')}-{shape}-{r}-{time.time_ns()}"
                        src = source.format(n=n)
                        t1, first = _timed(execute, store, run_id, src, providers=providers,
                                           runner=runner)
                        t2, again = _timed(execute, store, run_id, src, providers=providers,
                                           runner=runner)
                        assert first.executed == n and again.replayed == n, (first, again)
                        samples.setdefault(f"{label} {shape}: first attempt", []).append(t1)
                        samples.setdefault(f"{label} {shape}: replay", []).append(t2)
    return samples


def table(samples: dict[str, list[float]], n: int) -> str:
    ref = statistics.median(samples["in-process sequential: first attempt"])
    head = f"{'mode':<40}{'median ms':>11}{'per call ms':>13}{'vs in-process first':>21}"
    lines = [head, "-" * len(head)]
    for label, values in samples.items():
        med = statistics.median(values)
        lines.append(f"{label:<40}{med * 1000:>11.1f}{med * 1000 / n:>13.2f}{med / ref:>20.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--store", default=None)
    opts = parser.parse_args(argv)
    samples = bench(opts.store, opts.calls, opts.repeats)
    print(f"{opts.calls} calls per attempt, {opts.repeats} repeats, store "
          f"{opts.store or 'temporary SQLite'}")
    print(table(samples, opts.calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
