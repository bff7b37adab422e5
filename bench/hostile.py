"""A hostile tenant against an honest one, on the real surfaces: the honest principal's latency
(submit → finished) alone and under attack, side by side in one run.

One PostgreSQL store (a scratch schema), a real `frostline serve` (uvicorn) queueing for two
real `frostline worker` processes, and `frostline mcp --transport http`, all on loopback. The
honest principal (alice) submits `--runs` runs one after another over HTTP and waits for each;
the hostile one (mallory) meanwhile sends poison values (NUL, lone surrogates, 600-deep bodies,
bodies over the cap, far-future timers, a NUL result), floods (runs, signals, event streams,
MCP tool calls) and answers its own approvals over HTTP and MCP. Every answer mallory gets is
recorded: it must be a 2xx, or a 4xx/5xx in the one JSON error shape. The campaign stops by
itself when alice's runs under attack have finished.

    python -m bench.hostile [--runs 20] [--pg URL]

The test suite runs a small campaign (tests/worker/test_issue26_campaign.py) and checks its
acceptance: nothing wedged, every read 200 or a JSON error, every honest run right.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.common import percentile, pg_base_url, pg_reachable, pg_scratch, render_table

ROOT = Path(__file__).resolve().parents[1]
HONEST = ('async def orchestrate(ctx, args):\n'
          '    a = await ctx.run("echo", {"n": args["n"]})\n'
          '    b = await ctx.run("echo", {"n": a["n"] * 2})\n'
          '    return {"n": args["n"], "double": b["n"]}\n')
NUL_RESULT = 'async def orchestrate(ctx, args):\n    return {"s": "a\\x00b"}\n'
SURROGATE_RESULT = 'async def orchestrate(ctx, args):\n    return {"s": "\\ud800"}\n'
DEEP_RESULT = ('async def orchestrate(ctx, args):\n    v = 1\n    for i in range(600):\n'
               '        v = [v]\n    return v\n')
FAR_TIMER = ('async def orchestrate(ctx, args):\n    return await ctx.run("timer.sleep", '
             '{"until": "9999-12-31T23:59:59-01:00"})\n')
WAITS = ('async def orchestrate(ctx, args):\n'
         '    ev = await ctx.run("event.wait", {"event": "go"})\n    return ev\n')
APPROVES = ('async def orchestrate(ctx, args):\n'
            '    ok = await ctx.run("human.approve", {"ask": "mine?"})\n    return ok\n')
SPIN = ('async def orchestrate(ctx, args):\n    t = 0\n    for i in range(6):\n'
        '        r = await ctx.run("echo", {"n": i})\n        t = t + r["n"]\n    return t\n')
APPROVAL = "orchestrate%2F%230%40%3A0"
CONFIG = """
[providers.local]
kind = "local"
latency_s = 0.02

[service.limits]
executing_attempts = 2
runs_per_minute = 40
"""
SERVE_LIMITS = ["--max-executing-attempts", "6", "--max-event-streams", "8",
                "--max-answers-per-minute", "40"]


def runs_per_minute(runs: int) -> int:
    """The server's runs-per-minute bound: room for the honest principal's own runs (warm-up,
    alone, under attack, after), which the hostile principal's floods then exceed."""
    return 2 * runs + 20


def deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post(c: Any, path: str, body: Any) -> Any:
    """POST `body` as JSON as a hostile client writes it: NaN and lone surrogates included."""
    return c.post(path, content=json.dumps(body, allow_nan=True),
                  headers={"Content-Type": "application/json"})


def json_error(response: Any) -> bool:
    """Whether a response is the one JSON error shape {"error": {"code", "message"}}."""
    try:
        body = response.json()
    except ValueError:
        return False
    err = body.get("error") if isinstance(body, dict) else None
    return isinstance(err, dict) and isinstance(err.get("code"), str) and "message" in err


@dataclass
class Log:
    """What mallory sent and got; `bad` keeps every answer that was neither 2xx nor a JSON
    error, and every read (GET) that was neither 200 nor a JSON error."""

    answers: Counter[str] = field(default_factory=Counter)
    bad: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, what: str, response: Any) -> Any:
        code = response.status_code
        ok = 200 <= code < 300 or json_error(response)
        with self.lock:
            self.answers[f"{what} {code}"] += 1
            if not ok:
                self.bad.append(f"{what}: {code} {response.text[:200]!r}")
        return response

    def fault(self, what: str, problem: str) -> None:
        with self.lock:
            self.bad.append(f"{what}: {problem}")


@dataclass
class Stack:
    """The running processes and what a client needs to reach them."""

    url: str
    api: str
    mcp: str
    alice: str
    mallory: str
    procs: list[subprocess.Popen[bytes]]
    folder: Path


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def _start(args: list[str], folder: Path, name: str) -> subprocess.Popen[bytes]:
    log = open(folder / f"{name}.log", "ab")  # noqa: SIM115 — the process owns it
    return subprocess.Popen([sys.executable, "-m", "frostline", *args], cwd=folder, stdout=log,
                            stderr=subprocess.STDOUT, env=_env(), start_new_session=True)


def _until(check: Callable[[], bool], what: str, procs: list[subprocess.Popen[bytes]],
           timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        dead = [p.args for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            raise RuntimeError(f"{what} never came up (exited: {dead})")
        time.sleep(0.1)


def _logged(path: Path, line: str) -> Callable[[], bool]:
    return lambda: path.exists() and line in path.read_text(errors="replace")


def _answers(url: str) -> Callable[[], bool]:
    import httpx

    def check() -> bool:
        try:
            httpx.get(url, timeout=5)
        except httpx.HTTPError:
            return False
        return True
    return check


@contextmanager
def stack(base: str, folder: Path, runs: int) -> Iterator[Stack]:
    """serve + two workers + the MCP server over a scratch PostgreSQL schema; all stopped (and
    reaped) on exit, the schema and its jobs schema dropped."""
    import psycopg

    from frostline.store import open_store

    with pg_scratch(base) as url:
        with open_store(url) as store:
            alice, mallory = store.create_token("alice"), store.create_token("mallory")
            store.create_token("ops", roles=["approver"])
        config = folder / "frostline.toml"
        config.write_text(CONFIG)
        common = ["--store", url, "--config", str(config), "--runner", "process"]
        api_port, mcp_port = free_port(), free_port()
        procs: list[subprocess.Popen[bytes]] = []
        try:
            procs.append(_start(["serve", *common, "--port", str(api_port), *SERVE_LIMITS,
                                 "--max-runs-per-minute", str(runs_per_minute(runs))],
                                folder, "serve"))
            for name in ("w1", "w2"):
                procs.append(_start(["worker", *common, "--name", name, "--concurrency", "2",
                                     "--heartbeat", "1"], folder, name))
            procs.append(_start(["mcp", "--transport", "http", "--port", str(mcp_port),
                                 *common], folder, "mcp"))
            api, mcp = f"http://127.0.0.1:{api_port}", f"http://127.0.0.1:{mcp_port}/mcp"
            _until(_answers(api + "/v1/catalog"), "frostline serve", procs)
            _until(_answers(mcp), "frostline mcp", procs)
            for name in ("w1", "w2"):
                _until(_logged(folder / f"{name}.log", "frostline worker"), name, procs)
            yield Stack(url, api, mcp, alice, mallory, procs, folder)
        finally:
            for proc in procs:
                with suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                proc.wait(30)
            schema = url.rsplit("%3D", 1)[1]
            with psycopg.connect(base, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}_jobs" CASCADE')


# ---- the honest principal ----------------------------------------------------------------

@dataclass
class Honest:
    latencies: list[float] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)


def honest_runs(live: Stack, runs: int, tag: str) -> Honest:
    """Alice's runs one after another: submit and wait (`?wait=`), then check the result."""
    import httpx

    out = Honest()
    with httpx.Client(base_url=live.api, timeout=180,
                      headers={"Authorization": f"Bearer {live.alice}"}) as c:
        for i in range(runs):
            began = time.monotonic()
            r = c.post("/v1/runs", params={"wait": 120},
                       json={"script": HONEST, "run_id": f"{tag}{i}", "args": {"n": i}})
            took = time.monotonic() - began
            body = r.json() if r.headers.get("content-type", "").startswith("application/json") \
                else {}
            outcome = body.get("outcome") or {}
            if r.status_code != 200 or outcome.get("status") != "succeeded":
                out.wrong.append(f"{tag}{i}: {r.status_code} {r.text[:300]}")
                continue
            shown = c.get(f"/v1/runs/{tag}{i}").json()
            got = shown["attempts"][-1].get("result")
            if got != {"n": i, "double": 2 * i}:
                out.wrong.append(f"{tag}{i}: result {got!r}")
            out.latencies.append(took)
    return out


# ---- the hostile principal ---------------------------------------------------------------

def _http_attacks(live: Stack, log: Log, stop: threading.Event) -> None:
    """Poison values, floods and self-approvals over HTTP, round after round until `stop`."""
    import httpx

    headers = {"Authorization": f"Bearer {live.mallory}"}
    with httpx.Client(base_url=live.api, timeout=60, headers=headers) as c:
        for what, script in (("waits", WAITS), ("approves", APPROVES)):
            log.note(f"POST runs {what}", c.post("/v1/runs", json={
                "script": script, "run_id": f"m-{what}"}))
        for run in ("m-waits", "m-approves"):  # both stop at their wait before the rounds
            deadline = time.monotonic() + 60
            while c.get(f"/v1/runs/{run}").json().get("status") != "waiting":
                if time.monotonic() > deadline:
                    log.fault(run, "never reached its wait")
                    break
                stop.wait(0.1)
        n = 0
        while not stop.is_set():
            n += 1
            tag = f"m{n}-"
            poison = [("args nul", {"s": "a\x00b"}), ("args surrogate", {"s": "\ud800"}),
                      ("args deep", deep(600)), ("args nan", {"x": float("nan")})]
            for what, args in poison:
                log.note(f"POST runs {what}", post(c, "/v1/runs", {
                    "script": HONEST, "run_id": tag + "p", "args": args}))
            log.note("POST runs huge", c.post("/v1/runs", content=b"[" + b"1," * 700_000 + b"1]",
                                              headers={"Content-Type": "application/json"}))
            for what, script in (("nul result", NUL_RESULT), ("surrogate result", SURROGATE_RESULT),
                                 ("deep result", DEEP_RESULT), ("far timer", FAR_TIMER)):
                log.note(f"POST runs {what}", c.post("/v1/runs", json={
                    "script": script, "run_id": tag + what.replace(" ", "-")}))
            waiting = "m-waits"
            for body in ({"data": "a\x00b"}, {"data": "\ud800"}, {"data": deep(600)}):
                log.note("POST signal poison", post(c, f"/v1/runs/{waiting}/signals/go", body))
            for i in range(12):  # a flood of signals (beyond the per-minute answers)
                log.note("POST signal flood", c.post(f"/v1/runs/{waiting}/signals/x{i}",
                                                     json={"data": i}))
            log.note("POST self-approval", c.post(
                f"/v1/runs/m-approves/approvals/{APPROVAL}", json={"approved": True}))
            for i in range(8):  # a flood of runs (beyond the executing and per-minute limits)
                log.note("POST runs flood", c.post("/v1/runs", json={
                    "script": SPIN, "run_id": f"{tag}f{i}"}))
            _streams(c, log, ["m-waits"] * 10 + [tag + "nul-result", tag + "far-timer"])
            _reads(c, log, tag)
            stop.wait(0.2)


def _streams(c: Any, log: Log, runs: list[str]) -> None:
    """Open many event streams at once (beyond the per-principal cap), read a little, drop."""
    import httpx

    def one(run: str) -> None:
        try:
            with c.stream("GET", f"/v1/runs/{run}/events", timeout=10) as r:
                if r.status_code != 200:
                    r.read()
                    log.note("GET events flood", r)
                    return
                log.answers["GET events flood 200"] += 1
                for _ in r.iter_bytes():
                    break
        except httpx.TimeoutException:
            pass  # a followed stream with nothing new: the client gives up, as mallory would
    threads = [threading.Thread(target=one, args=(run,)) for run in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)


def _reads(c: Any, log: Log, tag: str) -> None:
    """Every read of mallory's own runs: 200 or a JSON error, never a plain-text page."""
    runs = [tag + w for w in ("nul-result", "surrogate-result", "deep-result", "far-timer", "p")]
    for run in [*runs, "m-waits", "m-approves"]:
        for what, path in (("run", f"/v1/runs/{run}"),
                           ("events", f"/v1/runs/{run}/events?follow=false"),
                           ("waits", f"/v1/runs/{run}/waits"),
                           ("result", f"/v1/runs/{run}/attempts/1/result")):
            log.note(f"GET {what}", c.get(path))
    for path in ("/v1/runs", "/v1/workers", "/v1/approvals"):
        log.note(f"GET {path}", c.get(path))


def _mcp_attacks(live: Stack, log: Log, stop: threading.Event) -> None:
    """Floods of MCP tool calls (run_script, show_run, catalog), poison args and a
    self-approval over the MCP server, until `stop`."""
    import anyio
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> None:
        headers = {"Authorization": f"Bearer {live.mallory}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as client, \
                streamable_http_client(live.mcp, http_client=client) as streams, \
                ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            n = 0
            while not stop.is_set():
                n += 1

                async def call(name: str, args: dict[str, Any], what: str) -> None:
                    try:
                        result = await session.call_tool(name, args)
                    except Exception as exc:  # the transport itself failed: a finding
                        log.fault(f"mcp {what}", f"{type(exc).__name__}: {exc}")
                        return
                    text = getattr(result.content[0], "text", "") if result.content else ""
                    if result.is_error:
                        try:
                            code = json.loads(text)["error"]["code"]
                        except (ValueError, KeyError, TypeError):
                            log.fault(f"mcp {what}", f"tool error not in the JSON shape: {text!r}")
                            return
                        log.answers[f"mcp {what} {code}"] += 1
                    else:
                        log.answers[f"mcp {what} ok"] += 1

                await call("run_script", {"run_id": f"x{n}-nul", "script": HONEST,
                                          "args": {"n": "\x00"}}, "run_script nul")
                await call("run_script", {"run_id": f"x{n}-r", "script": NUL_RESULT},
                           "run_script nul result")
                async with anyio.create_task_group() as tg:
                    for i in range(10):
                        tg.start_soon(call, "run_script", {"run_id": f"x{n}-{i}", "script": SPIN},
                                      "run_script flood")
                    for _ in range(10):
                        tg.start_soon(call, "show_run", {"run_id": f"m{max(n - 1, 1)}-nul-result"},
                                      "show_run flood")
                        tg.start_soon(call, "catalog", {}, "catalog flood")
                await call("approve", {"run_id": "m-approves", "identity": "orchestrate/#0@:0",
                                       "approved": True}, "self-approve")
                await anyio.sleep(0.2)

    try:
        anyio.run(main)
    except Exception as exc:  # the session itself broke: a finding, reported as such
        log.fault("mcp session", f"{type(exc).__name__}: {exc}")


@contextmanager
def attacking(live: Stack) -> Iterator[Log]:
    """Mallory's attacks on HTTP and MCP in background threads while the body runs."""
    log, stop = Log(), threading.Event()

    def guarded(attack: Callable[[Stack, Log, threading.Event], None]) -> None:
        try:
            attack(live, log, stop)
        except Exception as exc:  # an attack that could not go on is a finding
            log.fault(attack.__name__, f"{type(exc).__name__}: {exc}")
    threads = [threading.Thread(target=guarded, args=(a,), daemon=True)
               for a in (_http_attacks, _mcp_attacks)]
    for t in threads:
        t.start()
    try:
        yield log
    finally:
        stop.set()
        for t in threads:
            t.join(120)
            if t.is_alive():
                log.fault(t.name, "an attack thread did not stop within 120 s (wedged?)")


def stuck_jobs(url: str) -> list[tuple[str, str]]:
    """Jobs still queued or running (none should be, once everything has had time to end)."""
    import psycopg

    base, _, _ = url.partition("?")
    schema = url.rsplit("%3D", 1)[1]
    with psycopg.connect(base, autocommit=True) as conn:
        rows = conn.execute(f'SELECT status::text, args::text FROM "{schema}_jobs".'
                            "procrastinate_jobs WHERE status IN ('todo', 'doing')").fetchall()
    return [(str(s), str(a)[:120]) for s, a in rows]


# ---- the report --------------------------------------------------------------------------

@dataclass
class Report:
    alone: Honest
    attacked: Honest
    after: Honest
    log: Log
    stuck: list[tuple[str, str]]

    def table(self) -> str:
        def cells(label: str, h: Honest) -> list[str]:
            p50, p95 = percentile(h.latencies, 0.5), percentile(h.latencies, 0.95)
            return [label, f"{len(h.latencies)}", f"{len(h.wrong)}", f"{p50:.3f}", f"{p95:.3f}"]
        rows = [cells("alone", self.alone), cells("under attack", self.attacked)]
        a50, u50 = percentile(self.alone.latencies, 0.5), percentile(self.attacked.latencies, 0.5)
        a95, u95 = (percentile(self.alone.latencies, 0.95),
                    percentile(self.attacked.latencies, 0.95))
        rows.append(["ratio", "", "", f"{u50 / a50:.2f}x", f"{u95 / a95:.2f}x"])
        return render_table(["honest principal", "runs", "wrong", "p50 (s)", "p95 (s)"], rows,
                            labels=1)

    def attacks(self) -> str:
        rows = [[k, str(v)] for k, v in sorted(self.log.answers.items())]
        return render_table(["hostile request and answer", "count"], rows, labels=1)


def campaign(base: str, folder: Path, runs: int) -> Report:
    """The whole campaign: alice alone, alice under attack, alice after; the findings."""
    with stack(base, folder, runs) as live:
        honest_runs(live, 2, "warm")
        alone = honest_runs(live, runs, "a")
        with attacking(live) as log:
            attacked = honest_runs(live, runs, "u")
        after = honest_runs(live, 2, "z")
        deadline = time.monotonic() + 60
        while (stuck := stuck_jobs(live.url)) and time.monotonic() < deadline:
            time.sleep(0.2)
    return Report(alone, attacked, after, log, stuck)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--pg", default=None)
    opts = parser.parse_args()
    base = pg_base_url(opts.pg)
    why = pg_reachable(base)
    if why:
        sys.exit(f"PostgreSQL unreachable at {base}: {why}")
    with tempfile.TemporaryDirectory() as tmp:
        report = campaign(base, Path(tmp), opts.runs)
    print(report.table())
    print()
    print(report.attacks())
    print(f"\nfindings: {report.log.bad or 'none'}; jobs stuck: {report.stuck or 'none'}; "
          f"honest wrong: {report.alone.wrong + report.attacked.wrong + report.after.wrong}")


if __name__ == "__main__":
    main()
