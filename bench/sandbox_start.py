"""What the bubblewrap sandbox costs at start-up, against a bare interpreter measured in the same run.

    python -m bench.sandbox_start [--runs 20] [--e2e-runs 10]

Rows (medians over --runs cold starts, each a fresh process):
- ``python3 -c pass``: the bare interpreter, start to exit;
- ``python3 -S -c pass``: the same without site-packages, as the sandbox runs it (the
  baseline of the ratios: the stricter one);
- ``python3 -S -c print``: start to its first byte of output;
- ``sandbox probe``: the same print inside the sandbox (bubblewrap, namespaces, seccomp, the
  limits stage), start to first byte;
- ``child, first frame``: the runtime child as a plain process, from spawn to the first RPC
  frame (a ``call``) after the job frame was sent;
- ``sandbox child, first frame``: the same inside the sandbox;
- ``10-call script``: a ten-call script end to end through ``execute`` (SQLite store, local
  providers) with the plain child and with the sandbox runner (medians over --e2e-runs).

The target: the sandbox adds at most 2x the bare interpreter's start (``added / bare`` ≤ 2),
where "added" is the sandboxed time minus the same work as a plain process.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frostline.runtime.rpc import Channel
from frostline.runtime.sandbox import SandboxProfile
from frostline.runtime.sandbox_probe import verify_profile
from frostline.runtime.sandbox_process import SandboxProcess

SCRIPT = """
async def orchestrate(ctx, args):
    out = []
    for i in range(10):
        r = await ctx.run("echo", {"n": i})
        out.append(r["n"])
    return out
"""

FIRST_CALL = """
async def orchestrate(ctx, args):
    return await ctx.run("echo", {"n": 1}, _site="orchestrate/#0")
"""

TARGET_ADDED_OVER_BARE = 2.0


def interleaved_medians_ms(variants: dict[str, Callable[[], float]], runs: int) -> dict[str, float]:
    """Median of each variant, measured round-robin so that load drifts hit all alike."""
    for fn in variants.values():
        fn()  # warm the page cache and any per-process cache once
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            samples[name].append(fn())
    return {name: statistics.median(values) * 1000 for name, values in samples.items()}


def bare_pass(*flags: str) -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *flags, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def bare_first_output() -> float:
    # The same interpreter flags as inside the sandbox (-S: no site-packages).
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-S", "-c", "print('ready', flush=True)"],
                            stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.read(1)
    elapsed = time.perf_counter() - t0
    proc.wait()
    return elapsed


def sandbox_first_output(profile: SandboxProfile) -> float:
    t0 = time.perf_counter()
    proc = SandboxProcess(["-c", "print('ready', flush=True)"], profile)
    assert proc.popen.stdout is not None
    proc.popen.stdout.read(1)
    elapsed = time.perf_counter() - t0
    proc.kill()
    proc.popen.stdout.close()
    assert proc.popen.stderr is not None
    proc.popen.stderr.close()
    return elapsed


def _first_frame(start: Callable[[int, int], Callable[[], None]]) -> float:
    """Spawn a child on two fresh pipes, send the job, time until its first call frame."""
    to_child_r, to_child_w = os.pipe()
    to_host_r, to_host_w = os.pipe()
    t0 = time.perf_counter()
    stop = start(to_child_r, to_host_w)
    os.close(to_child_r)
    os.close(to_host_w)
    channel = Channel(to_host_r, to_child_w)
    nonce = secrets.token_hex(16)
    channel.send({"type": "job", "nonce": nonce, "source": FIRST_CALL, "args": None,
                  "limits": {"concurrency": 8, "max_fanout": 64}})
    frame = channel.receive()
    elapsed = time.perf_counter() - t0
    assert frame is not None and frame["type"] == "call", frame
    stop()
    channel.close()
    return elapsed


def plain_child_first_frame() -> float:
    def start(r: int, w: int) -> Callable[[], None]:
        from frostline.runtime.runners import ChildProcessRunner

        runner = ChildProcessRunner()
        proc = subprocess.Popen(runner.child_argv(r, w), pass_fds=(r, w),
                                env=runner.child_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)

        def stop() -> None:
            proc.kill()
            proc.wait()

        return stop

    return _first_frame(start)


def sandbox_child_first_frame(profile: SandboxProfile) -> float:
    def start(r: int, w: int) -> Callable[[], None]:
        proc = SandboxProcess(["-m", "frostline.runtime.child", str(r), str(w)], profile,
                              pass_fds=(r, w), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        return proc.kill

    return _first_frame(start)


def end_to_end_variants(store_dir: str) -> dict[str, Callable[[], float]]:
    """One closure per runner: a ten-call script through `execute`, in a fresh run each time."""
    from frostline.providers.local import LocalProviders
    from frostline.runtime.execute import execute
    from frostline.runtime.runners import ChildProcessRunner
    from frostline.runtime.sandbox_runner import SandboxRunner
    from frostline.store import open_store
    from frostline.testing import InProcessRunner

    store = open_store(f"sqlite:///{Path(store_dir) / 'bench.db'}")
    providers = LocalProviders()
    counter = iter(range(10**9))

    def variant(runner: Any) -> Callable[[], float]:
        def once() -> float:
            t0 = time.perf_counter()
            out = execute(store, f"run-{next(counter)}", textwrap.dedent(SCRIPT),
                          providers=providers, runner=runner)
            elapsed = time.perf_counter() - t0
            assert out.status == "succeeded", out.error
            return elapsed

        return once

    return {"in-process": variant(InProcessRunner()), "child": variant(ChildProcessRunner()),
            "sandbox": variant(SandboxRunner())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--e2e-runs", type=int, default=10)
    opts = parser.parse_args(argv)

    profile = SandboxProfile()
    t0 = time.perf_counter()
    verify_profile(profile)
    verify_ms = (time.perf_counter() - t0) * 1000

    m = interleaved_medians_ms({
        "bare": bare_pass,
        "bare_S": lambda: bare_pass("-S"),
        "bare_print": bare_first_output,
        "probe": lambda: sandbox_first_output(profile),
        "child": plain_child_first_frame,
        "sandboxed_child": lambda: sandbox_child_first_frame(profile),
    }, opts.runs)
    bare, bare_s, bare_print, probe = m["bare"], m["bare_S"], m["bare_print"], m["probe"]
    child, sandboxed_child = m["child"], m["sandboxed_child"]
    logging.getLogger("frostline").setLevel(logging.ERROR)  # the plain child's warning
    with warnings.catch_warnings(), tempfile.TemporaryDirectory(prefix="frostline-bench-") as tmp:
        warnings.simplefilter("ignore")
        e2e = interleaved_medians_ms(end_to_end_variants(tmp), opts.e2e_runs)

    rows = [
        ("python3 -c pass (bare)", bare, f"{bare / bare_s:.2f}", "-"),
        ("python3 -S -c pass (bare, baseline)", bare_s, "1.00", "-"),
        ("python3 -S -c print, first output", bare_print, f"{bare_print / bare_s:.2f}", "-"),
        ("sandbox probe, first output", probe, f"{probe / bare_s:.2f}",
         f"{(probe - bare_print) / bare_s:.2f}"),
        ("plain child, first RPC frame", child, f"{child / bare_s:.2f}", "-"),
        ("sandbox child, first RPC frame", sandboxed_child, f"{sandboxed_child / bare_s:.2f}",
         f"{(sandboxed_child - child) / bare_s:.2f}"),
        ("10-call script, in-process runner", e2e["in-process"], "-", "-"),
        ("10-call script, plain child runner", e2e["child"], "-", "-"),
        ("10-call script, sandbox runner", e2e["sandbox"], "-",
         f"{(e2e['sandbox'] - e2e['child']) / bare_s:.2f}"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"sandbox start-up, medians over {opts.runs} runs "
          f"(end to end over {opts.e2e_runs}); one-off profile verification {verify_ms:.1f} ms")
    print(f"{'measurement'.ljust(width)}  {'ms':>8}  {'x bare':>7}  {'added/bare':>10}")
    # "added/bare": what the sandbox adds over the same thing run as a plain process,
    # divided by the bare interpreter's start with the sandbox's flags (-S), the stricter
    # baseline (plain `python3 -c pass` also loads site-packages and is slower).
    for name, ms, ratio, added in rows:
        print(f"{name.ljust(width)}  {ms:8.1f}  {ratio:>7}  {added:>10}")
    for label, extra in (("first output", (probe - bare_print) / bare_s),
                         ("first RPC frame", (sandboxed_child - child) / bare_s)):
        verdict = "met" if extra <= TARGET_ADDED_OVER_BARE else "MISSED"
        print(f"target: the sandbox adds at most {TARGET_ADDED_OVER_BARE:.0f}x the bare start "
              f"({label}): added/bare = {extra:.2f} -> {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
