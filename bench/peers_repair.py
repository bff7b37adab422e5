"""Peers on the same repairs, in one run: what a repair pays, and what it delivers.

`bench.peers` compares what a durable call costs. This benchmark compares what decides spend
and correctness once a run has failed: a repair that fixes the failure and resumes. frostline,
DBOS and LangGraph each run the same workload, written the way each framework is meant to be
used, against one counting image provider (it appends a line per request to a log, accepted or
refused, so a request is counted the same way whoever made it).

The workload: an N-way fanout of image requests (N = 4, 8, 16, 32); request `i` asks for
``shot i of N``. In the original run branch `k` asks for a size the provider refuses, so the
run fails with the other N-1 images made. The repair fixes the size and resumes, for every
failing position k = 0 … N-1. Scenarios:

- ``fanout``: the repair fixes the size, nothing else;
- ``payload``: it also changes the prompt of a branch that had succeeded (branch k+1 mod N):
  the correct outcome is that image made again, or the run stopped; the old image is stale;
- ``relocate``: the durable call moves into a helper function (frostline's ``ctx.run``, DBOS's
  step call, LangGraph's task call; for the Graph API, the node's provider call);
- ``rename``: the step / node / task (frostline: the helper holding the call) is renamed.

How each system resumes, idiomatically:

- frostline: `execute` under the same run id (checker, gate, broker): committed calls replay,
  a changed committed payload is a Divergence, a moved or renamed call site stops at the gate
  unless the run's relocation is `rebind` (the default) and its dry replay admits the move;
- DBOS (SQLite system database): a ``@DBOS.workflow`` fans out on a queue, one child workflow
  per branch making its image in a ``@DBOS.step``; the repair is `DBOS.fork_workflow` of the
  failed workflow under the repaired code, from the failed step (the enqueue of the failed
  branch) and from the fanout's first step;
- LangGraph, Graph API: a ``StateGraph`` fanning out with ``Send``; the branches that finished
  in the failed superstep are kept as pending writes, and ``invoke(None)`` on the same thread
  resumes with the repaired graph. Functional API: an ``@entrypoint`` launching one ``@task``
  per branch; completed tasks are kept, and the repaired entrypoint resumes the thread. Both
  with a ``SqliteSaver`` and ``durability="sync"``.

Counted per case (original run plus repair): **paid calls**, requests the provider received;
**images delivered**, images in the repaired run's result; **stale results returned**, delivered
images that are not what the repaired code asked for; **silent acceptances**, repairs that
report success while delivering fewer than N images or any stale one. A repair that stops and
says why (a gate stop, a Divergence, an error) delivers nothing and is not silent.

Run: ``python -m bench.peers_repair [--sizes 4 8 16 32] [--scenarios ...] [--json FILE]``.
DBOS and LangGraph run in child processes (``--child SYSTEM``); a peer that is not installed
is named with its install command (``pip install 'frostline[bench]'``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import operator
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict

SIZES = (4, 8, 16, 32)
SCENARIOS = ("fanout", "payload", "relocate", "rename")
GOOD, BAD = "512x512", "999x999"
PEERS = ("dbos", "langgraph")
QUEUE = "peers-repair-images"
INSTALL = "pip install 'frostline[bench]'  (dbos, langgraph, langgraph-checkpoint-sqlite)"


# the workload, the provider and the score ---------------------------------------------------
def prompt(i: int, n: int, scenario: str, k: int, *, repaired: bool) -> str:
    """What branch i asks for; the payload scenario's repair changes a committed branch."""
    text = f"shot {i} of {n}"
    return text + ", at dusk" if repaired and scenario == "payload" and i == changed(n, k) \
        else text


def changed(n: int, k: int) -> int:
    return (k + 1) % n


def size(i: int, k: int, *, repaired: bool) -> str:
    return GOOD if repaired or i != k else BAD


class Refused(Exception):
    """The provider refused the request (an HTTP 400)."""


class CountingProvider:
    """One image provider for every system: a line per request in `log`, accepted or not."""

    def __init__(self, log: Path) -> None:
        self.log = log

    def render(self, prompt: str, size: str) -> dict[str, Any]:
        ok = size == GOOD
        with self.log.open("a") as f:
            f.write(json.dumps({"prompt": prompt, "size": size, "ok": ok}) + "\n")
        if not ok:
            raise Refused(f"400: unsupported size {size}")
        return {"artifact": "img:" + uuid.uuid5(uuid.NAMESPACE_URL, f"{prompt}|{size}").hex,
                "prompt": prompt, "size": size}

    def count(self) -> int:
        return len(self.log.read_text().splitlines()) if self.log.exists() else 0


@dataclass(frozen=True)
class Row:
    """One case: a system (and how it resumed), a scenario, N, the failing branch k."""

    system: str
    scenario: str
    n: int
    k: int
    paid: int
    images: int
    stale: int
    outcome: str  # "succeeded", or how the repair stopped

    @property
    def silent(self) -> bool:
        return self.outcome == "succeeded" and (self.images < self.n or self.stale > 0)


def score(system: str, scenario: str, n: int, k: int, paid: int, result: Any,
          outcome: str) -> Row:
    """Compare the repaired run's images with what the repaired code asked for, branch by
    branch (`result`: the images in branch order, None when the repair delivered nothing)."""
    images = [r for r in (result or []) if isinstance(r, Mapping)]
    stale = sum(1 for i, img in enumerate(images)
                if (img.get("prompt"), img.get("size")) != (
                    prompt(i, n, scenario, k, repaired=True), GOOD))
    return Row(system, scenario, n, k, paid, len(images), stale, outcome)


# frostline ----------------------------------------------------------------------------------
_SCRIPT = '''
N = {n}
BAD = {k}
CHANGED = {changed}
{helper}

async def orchestrate(ctx, args):
    async def {name}(i):
        prompt = {prompt}
        size = {size}
        return await {call}

    return await ctx.parallel([{name}(i) for i in range(N)])
'''
_CALL = 'ctx.run("image.generate", {"prompt": prompt, "size": size})'
_HELPER = f'''

async def render_shot(ctx, prompt, size):
    return await {_CALL}
'''


def frostline_script(n: int, k: int, scenario: str, *, repaired: bool) -> str:
    moved = repaired and scenario == "relocate"
    text = 'f"shot {i} of {N}"'
    if repaired and scenario == "payload":
        text += ' + (", at dusk" if i == CHANGED else "")'
    return _SCRIPT.format(
        n=n, k=k, changed=changed(n, k), helper=_HELPER if moved else "",
        name="draw" if repaired and scenario == "rename" else "render", prompt=text,
        size=f'"{GOOD}"' if repaired else f'"{BAD}" if i == BAD else "{GOOD}"',
        call="render_shot(ctx, prompt, size)" if moved else _CALL)


def run_frostline(cases: Sequence[tuple[str, int, int]], folder: Path) -> list[Row]:
    from frostline.capabilities.provider import ProviderResult
    from frostline.errors import ProviderError
    from frostline.runtime.execute import execute
    from frostline.store import open_store
    from frostline.testing import InProcessRunner

    provider = CountingProvider(folder / "frostline-calls.jsonl")

    class Images:  # the counting provider behind frostline's Provider protocol
        def capabilities(self) -> frozenset[str]:
            return frozenset({"image.generate"})

        def honours_idempotency_keys(self, capability: str) -> bool:
            return False

        async def invoke(self, capability: str, payload: Mapping[str, Any],
                         ctx: Any) -> ProviderResult:
            try:
                image = provider.render(payload["prompt"], payload["size"])
            except Refused as exc:
                raise ProviderError(str(exc), status=400) from None
            return ProviderResult(image, {"cost_usd": 0.02})

    rows = []
    with open_store(f"sqlite:///{folder / 'frostline.db'}") as store:
        for scenario, n, k in cases:
            run_id = f"{scenario}-{n}-{k}-{uuid.uuid4().hex[:6]}"
            before = provider.count()
            for repaired in (False, True):
                out = execute(store, run_id, frostline_script(n, k, scenario, repaired=repaired),
                              args={}, providers=Images(), runner=InProcessRunner())
            outcome = out.status if out.status != "gate_stopped" else "gate stop"
            rows.append(score("frostline", scenario, n, k, provider.count() - before,
                              out.result if out.status == "succeeded" else None, outcome))
    return rows


# DBOS ---------------------------------------------------------------------------------------
def run_dbos(cases: Sequence[tuple[str, int, int]], folder: Path) -> list[Row]:
    """Per scenario and N: the original runs under the original code, then each failed
    workflow forked twice under the repaired code (one DBOS launch per code version)."""
    rows = []
    provider = CountingProvider(folder / "dbos-calls.jsonl")
    url = f"sqlite:///{folder / 'dbos.sqlite'}"
    groups: dict[tuple[str, int], list[int]] = {}
    for scenario, n, k in cases:
        groups.setdefault((scenario, n), []).append(k)
    for (scenario, n), ks in groups.items():
        fanout = _dbos_launch(url, provider, scenario, repaired=False)
        runs = {k: _dbos_original(fanout, provider, n, k) for k in ks}
        _dbos_launch(url, provider, scenario, repaired=True)
        for k, (workflow_id, paid) in runs.items():
            rows += _dbos_forks(provider, scenario, n, k, workflow_id, paid)
        _dbos_destroy()
    return rows


def _dbos_launch(url: str, provider: CountingProvider, scenario: str, *,
                 repaired: bool) -> Any:
    """Register the workflows of one code version and launch DBOS. The fanout is DBOS's own:
    one child workflow per branch on a queue, each making its image in a step."""
    from dbos import DBOS

    _dbos_destroy()
    DBOS(config={"name": "frostline-peers-repair", "system_database_url": url,
                 "log_level": "ERROR"})
    name = "draw" if repaired and scenario == "rename" else "render"

    @DBOS.step(name=f"{name}.image")
    def image(prompt: str, size: str) -> dict[str, Any]:
        return provider.render(prompt, size)

    @DBOS.workflow(name=name)
    def render(prompt: str, size: str) -> dict[str, Any]:
        return image(prompt, size)

    def render_shot(queue: Any, prompt: str, size: str) -> Any:  # the relocation
        return queue.enqueue(render, prompt, size)

    @DBOS.workflow(name="fanout")
    def fanout(n: int, k: int) -> list[dict[str, Any]]:
        queue = DBOS.retrieve_queue(QUEUE)
        jobs = [(prompt(i, n, scenario, k, repaired=repaired), size(i, k, repaired=repaired))
                for i in range(n)]
        handles = [render_shot(queue, p, s) if repaired and scenario == "relocate"
                   else queue.enqueue(render, p, s) for p, s in jobs]
        return [h.get_result() for h in handles]

    DBOS.launch()
    # Polled every 20 ms (the default is 1 s), so that the benchmark does not count waiting.
    DBOS.register_queue(QUEUE, polling_interval_sec=0.02)
    return fanout


def _dbos_destroy() -> None:
    from dbos import DBOS

    DBOS.destroy(destroy_registry=True)


def _dbos_original(fanout: Any, provider: CountingProvider, n: int,
                   k: int) -> tuple[str, int]:
    from dbos import DBOS, SetWorkflowID

    workflow_id = f"fanout-{n}-{k}-{uuid.uuid4().hex[:8]}"
    before = provider.count()
    with SetWorkflowID(workflow_id):
        handle = DBOS.start_workflow(fanout, n, k)
    with contextlib.suppress(Refused):
        handle.get_result()
    _dbos_children_done(workflow_id)
    return workflow_id, provider.count() - before


def _dbos_children_done(workflow_id: str) -> None:
    """Wait for every child the workflow enqueued: the parent fails at the first failed
    child's result, while later children may still be running (and paying)."""
    from dbos import DBOS

    for step in DBOS.list_workflow_steps(workflow_id):
        child = step["child_workflow_id"]
        if child is not None and step["function_name"] != "DBOS.getResult":
            with contextlib.suppress(Exception):
                DBOS.retrieve_workflow(child).get_result()


def _dbos_forks(provider: CountingProvider, scenario: str, n: int, k: int, workflow_id: str,
                paid: int) -> list[Row]:
    from dbos import DBOS

    steps = DBOS.list_workflow_steps(workflow_id)
    failed_child = next(s["child_workflow_id"] for s in steps if s["error"] is not None)
    enqueued = [s for s in steps if s["function_name"] != "DBOS.getResult"]
    failed = next(s["function_id"] for s in enqueued if s["child_workflow_id"] == failed_child)
    first = min(s["function_id"] for s in enqueued)
    rows = []
    for mode, start in (("from the failed step", failed), ("from the fanout's start", first)):
        before = provider.count()
        forked = DBOS.fork_workflow(workflow_id, start)
        try:
            result, outcome = forked.get_result(), "succeeded"
        except Exception as exc:
            result, outcome = None, f"error: {type(exc).__name__}"
        _dbos_children_done(forked.get_workflow_id())
        rows.append(score(f"DBOS fork {mode}", scenario, n, k,
                          paid + provider.count() - before, result, outcome))
    return rows


# LangGraph ----------------------------------------------------------------------------------
def run_langgraph(cases: Sequence[tuple[str, int, int]], folder: Path) -> list[Row]:
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    provider = CountingProvider(folder / "langgraph-calls.jsonl")
    conn = sqlite3.connect(folder / "langgraph.sqlite", check_same_thread=False)
    saver = SqliteSaver(conn)
    saver.setup()
    conn.execute("PRAGMA synchronous = FULL")
    rows = []
    try:
        for api, build in (("Graph API (Send, pending writes)", _lg_graph),
                           ("functional API (tasks)", _lg_functional)):
            for scenario, n, k in cases:
                config = {"configurable": {"thread_id": uuid.uuid4().hex}}
                before = provider.count()
                first, start = build(saver, provider, scenario, repaired=False)
                with contextlib.suppress(Refused):
                    first.invoke(start(n, k), config, durability="sync")
                resumed, _ = build(saver, provider, scenario, repaired=True)
                try:
                    out = resumed.invoke(None, config, durability="sync")
                    result, outcome = _lg_images(out), "succeeded"
                except Exception as exc:
                    result, outcome = None, f"error: {type(exc).__name__}"
                rows.append(score(f"LangGraph {api}", scenario, n, k,
                                  provider.count() - before, result, outcome))
    finally:
        conn.close()
    return rows


def _lg_images(out: Any) -> list[Any]:
    if isinstance(out, Mapping):  # the Graph API's state: images tagged with their branch
        return [img for _, img in sorted((img["i"], img) for img in out.get("images", []))]
    return list(out)


class FanoutState(TypedDict, total=False):
    """The Graph API's state: the fanout's width, the failing branch, the images so far."""

    n: int
    k: int
    images: Annotated[list[dict[str, Any]], operator.add]


def _lg_graph(saver: Any, provider: CountingProvider, scenario: str, *,
              repaired: bool) -> tuple[Any, Any]:
    from langgraph.graph import START, StateGraph
    from langgraph.types import Send

    node = "draw" if repaired and scenario == "rename" else "render"

    def shot(i: int, n: int, k: int) -> dict[str, Any]:  # the relocation's helper
        return provider.render(prompt(i, n, scenario, k, repaired=repaired),
                               size(i, k, repaired=repaired))

    def render(arg: dict[str, int]) -> dict[str, Any]:
        i, n, k = arg["i"], arg["n"], arg["k"]
        image = shot(i, n, k) if repaired and scenario == "relocate" else provider.render(
            prompt(i, n, scenario, k, repaired=repaired), size(i, k, repaired=repaired))
        return {"images": [{**image, "i": i}]}

    def fan(state: FanoutState) -> Any:
        return [Send(node, {"i": i, "n": state["n"], "k": state["k"]})
                for i in range(state["n"])]

    graph = StateGraph(FanoutState)
    graph.add_node(node, render)
    graph.add_conditional_edges(START, fan, [node])
    return graph.compile(checkpointer=saver), lambda n, k: {"n": n, "k": k}


def _lg_functional(saver: Any, provider: CountingProvider, scenario: str, *,
                   repaired: bool) -> tuple[Any, Any]:
    from langgraph.func import entrypoint, task

    @task(name="draw" if repaired and scenario == "rename" else "render")
    def render(prompt: str, size: str) -> dict[str, Any]:
        return provider.render(prompt, size)

    def render_shot(prompt: str, size: str) -> Any:  # the relocation
        return render(prompt, size)

    call = render_shot if repaired and scenario == "relocate" else render

    @entrypoint(checkpointer=saver)
    def fanout(job: dict[str, int]) -> list[dict[str, Any]]:
        n, k = job["n"], job["k"]
        futures = [call(prompt(i, n, scenario, k, repaired=repaired),
                        size(i, k, repaired=repaired)) for i in range(n)]
        return [f.result() for f in futures]

    return fanout, lambda n, k: {"n": n, "k": k}


CHILDREN = {"dbos": run_dbos, "langgraph": run_langgraph}


# the run and its table ----------------------------------------------------------------------
def cases(sizes: Sequence[int], scenarios: Sequence[str]) -> list[tuple[str, int, int]]:
    """Every failing position of every N for the fanout; N = 4 for the other scenarios."""
    out = []
    for scenario in scenarios:
        for n in (sizes if scenario == "fanout" else [min(sizes)]):
            out += [(scenario, n, k) for k in range(n)]
    return out


def missing_peer(system: str) -> str | None:
    from bench.peers import missing_peer as missing

    return missing(system)


def run_peer(system: str, todo: Sequence[tuple[str, int, int]], notes: list[str]) -> list[Row]:
    """One peer in its own interpreter (DBOS is a process-wide singleton)."""
    missing = missing_peer(system)
    if missing is not None:
        notes.append(f"{system}: not measured, module {missing} is missing; {INSTALL}")
        return []
    done = subprocess.run([sys.executable, "-m", "bench.peers_repair", "--child", system,
                           "--cases", json.dumps(list(todo))], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=3600)
    if done.returncode != 0:
        notes.append(f"{system}: the child failed: {done.stderr.strip().splitlines()[-1:]}")
        return []
    return [Row(**r) for r in json.loads(done.stdout.strip().splitlines()[-1])]


def summary(rows: Sequence[Row]) -> list[list[str]]:
    """One line per scenario, N and system: every failing position k folded into it."""
    groups: dict[tuple[str, int, str], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.scenario, r.n, r.system), []).append(r)
    order = {s: i for i, s in enumerate(SCENARIOS)}
    lines = []
    for (scenario, n, system), group in sorted(
            groups.items(), key=lambda g: (order.get(g[0][0], 9), g[0][1], _system_order(g[0][2]))):
        group.sort(key=lambda r: r.k)
        paid = [r.paid for r in group]
        paid_text = (str(paid[0]) if len(set(paid)) == 1 else
                     "/".join(map(str, paid)) if n <= 4 else f"{min(paid)}-{max(paid)}")
        images = sorted({r.images for r in group})
        image_text = (f"{images[0]} of {n}" if len(images) == 1
                      else f"{images[0]}-{images[-1]} of {n}")
        outcomes = sorted({r.outcome for r in group})
        lines.append([scenario, str(n), system, paid_text, image_text,
                      str(sum(r.stale for r in group)),
                      f"{sum(r.silent for r in group)} of {len(group)}", ", ".join(outcomes)])
    return lines


def _system_order(system: str) -> tuple[int, str]:
    return (0 if system == "frostline" else 1 if system.startswith("DBOS") else 2, system)


HEAD = ["scenario", "N", "system", "paid calls (k = 0..N-1)", "images delivered",
        "stale returned", "silent acceptances", "repair ends"]


def table(rows: Sequence[Row]) -> str:
    cells = [HEAD, *summary(rows)]
    widths = [max(len(r[i]) for r in cells) for i in range(len(HEAD))]
    out = []
    for j, r in enumerate(cells):
        out.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--peers", nargs="*", choices=PEERS, default=list(PEERS))
    parser.add_argument("--json", type=Path, default=None, help="also write every case here")
    parser.add_argument("--child", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--cases", default="[]", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="peers-repair-") as tmp:
        if opts.child:  # a peer's own interpreter: print its rows as one JSON line
            import logging

            logging.disable(logging.ERROR)
            todo = [tuple(c) for c in json.loads(opts.cases)]
            rows = CHILDREN[opts.child](todo, Path(tmp))  # type: ignore[arg-type]
            print(json.dumps([asdict(r) for r in rows]))
            return 0
        todo = cases(opts.sizes, opts.scenarios)
        started = time.perf_counter()
        notes: list[str] = []
        rows = run_frostline(todo, Path(tmp))
        for peer in opts.peers:
            rows += run_peer(peer, todo, notes)
    print(f"repairs on a failed N-way fanout, every failing position k; {len(todo)} cases per "
          f"system, {time.perf_counter() - started:.0f} s\n")
    print(table(rows))
    for note in notes:
        print(f"\nnote: {note}")
    if opts.json is not None:
        opts.json.write_text(json.dumps({"rows": [asdict(r) for r in rows], "notes": notes},
                                        indent=1))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("DBOS__APPVERSION", "peers-repair")
    raise SystemExit(main())
