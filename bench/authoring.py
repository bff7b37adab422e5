"""Authoring figures (issue 29): task shapes end to end, the prompt against the catalog's size,
and the Python API's overhead over the command line's in-process path.

    python -m bench.authoring            # every section (~1 minute on 2 cores)
    python -m bench.authoring --quick    # tiny sizes (what the smoke test runs)

1. Task shapes with scripted replies (written by hand, labelled `scripted`: no model is
   called, so wall time is frostline's own: extraction, checking, running, repairing): the
   brand video (the demo's replies: a draft the checker refuses, then one whose fourth shot
   fails at run time, repaired without paying twice) and a customer-support flow. Drafts,
   repairs, tokens the replies report, wall time.
2. The authoring prompt against catalogs of 12 to 200 capabilities: its size, the time to
   build it, and the checker's time on one script under that catalog (medians).
3. `frostline.open(...).run` against `runtime.execute` on the same store, providers and
   runner (the path `frostline run` takes): medians and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from bench.common import render_table
from frostline.capabilities.catalog import DEFAULT_CATALOG, Capability, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.repair.author import AuthorTask, author, author_loop
from frostline.repair.extract import extract_code
from frostline.repair.loop import repair, task_from_store
from frostline.repair.replay import ReplayClient, ReplayPolicy
from frostline.script import check

HERE = Path(__file__).parent
SUPPORT_TASK = ("Classify args.ticket, draft a reply of at most 200 tokens, and send it to "
                "args.customer with echo; return the label, the reply and what was sent.")


def _replies(path: Path) -> ReplayClient:
    return ReplayClient(path, policy=ReplayPolicy(dirs=(path.parent,)))


def task_shapes(folder: Path) -> list[dict[str, Any]]:
    """Each task shape authored, run and (when its attempt fails) repaired once."""
    from frostline.demo import scenario
    from frostline.providers.local import LocalProviders
    from frostline.runtime.execute import execute
    from frostline.runtime.runners import ChildProcessRunner
    from frostline.store import open_store

    demo = resources.files("frostline.demo").joinpath("scripts")
    shapes = [
        ("brand video", scenario.TASK, scenario.ARGS, Envelope.from_dict(scenario.ENVELOPE),
         Path(str(demo.joinpath("scripted_author.json"))),
         Path(str(demo.joinpath("scripted_model.json")))),
        ("customer support", SUPPORT_TASK, {"ticket": "My order 1234 never arrived.",
                                            "customer": "ana@example.com"}, None,
         HERE / "authoring_replies" / "customer_support.json", None),
    ]
    rows = []
    for name, task, args, envelope, drafts, fixes in shapes:
        started = time.perf_counter()
        with open_store(f"sqlite:///{folder / (name.replace(' ', '_') + '.db')}") as store:
            result = author(_replies(drafts), AuthorTask(task, envelope=envelope, args=args))
            assert result.accepted is not None, name
            tokens = int(result.usage_total.get("total_tokens", 0))
            outcome = execute(store, "t", result.accepted, args=args, envelope=envelope,
                              providers=LocalProviders(log_path=None),
                              runner=ChildProcessRunner())
            repairs, paid, replayed = 0, outcome.executed, 0
            if outcome.status == "failed" and fixes is not None:
                fixed = repair(_replies(fixes), task_from_store(store, "t", max_rewrites=3))
                repairs = len(fixed.rewrites)
                tokens += int(fixed.usage_total.get("total_tokens", 0))
                assert fixed.accepted is not None, name
                outcome = execute(store, "t", fixed.accepted, providers=LocalProviders(
                    log_path=None), runner=ChildProcessRunner())
                paid, replayed = paid + outcome.executed, outcome.replayed
        rows.append({"task": name, "drafts": len(result.rewrites), "repair_rewrites": repairs,
                     "status": outcome.status, "paid_calls": paid, "replayed": replayed,
                     "tokens": tokens, "wall_ms": (time.perf_counter() - started) * 1000})
    return rows


def synthetic_catalog(n: int) -> Catalog:
    """The built-in catalog plus made-up capabilities up to `n` entries (three typed fields)."""
    extra = [Capability(f"tool{i:03d}.action", side_effecting=i % 2 == 0, price_usd=0.001 * i,
                        description=f"Synthetic tool {i}: does one thing to a record.",
                        input_schema={"type": "object", "required": ["id"], "properties": {
                            "id": {"type": "string", "maxLength": 64},
                            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                            "mode": {"enum": ["fast", "careful"]}}})
             for i in range(max(0, n - len(DEFAULT_CATALOG)))]
    return DEFAULT_CATALOG.extended(*extra)


def prompt_scaling(sizes: list[int], reps: int) -> list[dict[str, Any]]:
    replies = json.loads((HERE / "authoring_replies" / "customer_support.json").read_text())
    script = extract_code(replies["responses"][-1]["content"]) or ""
    rows = []
    for n in sizes:
        catalog = synthetic_catalog(n)
        build, checking, chars = [], [], 0
        for _ in range(reps):
            t0 = time.perf_counter()
            system, user = next(author_loop(AuthorTask(SUPPORT_TASK, catalog=catalog)))
            build.append((time.perf_counter() - t0) * 1000)
            chars = len(system["content"]) + len(user["content"])
            t0 = time.perf_counter()
            report = check(script, catalog=catalog)
            checking.append((time.perf_counter() - t0) * 1000)
            assert report.valid, report.violations
        rows.append({"capabilities": len(catalog), "prompt_chars": chars,
                     "prompt_tokens_est": chars // 4, "build_ms": statistics.median(build),
                     "check_ms": statistics.median(checking)})
    return rows


def api_overhead(folder: Path, reps: int) -> dict[str, float]:
    """Median wall time of a new one-call run: the facade vs `runtime.execute` directly."""
    import frostline
    from frostline.runtime.execute import execute

    script = ('async def orchestrate(ctx, args):\n'
              '    return await ctx.run("echo", {"n": args["n"]})\n')
    direct, facade = [], []
    with frostline.open(store=f"sqlite:///{folder / 'api.db'}", runner="process") as fl:
        registry, store, runner = fl._registry, fl._store, fl._make_runner()
        for i in range(reps):  # interleaved, so drift hits both alike
            t0 = time.perf_counter()
            execute(store, f"d{i}", script, args={"n": i}, providers=registry, runner=runner,
                    catalog=registry.catalog)
            direct.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            fl.run(script, run_id=f"f{i}", args={"n": i})
            facade.append((time.perf_counter() - t0) * 1000)
    d, f = statistics.median(direct), statistics.median(facade)
    return {"reps": reps, "direct_ms": d, "facade_ms": f, "ratio": f / d}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes")
    opts = parser.parse_args(argv)
    sizes = [12, 50] if opts.quick else [12, 50, 100, 200]
    reps = 2 if opts.quick else 9
    with tempfile.TemporaryDirectory(prefix="bench-authoring-") as tmp:
        folder = Path(tmp)
        shapes = task_shapes(folder)
        scaling = prompt_scaling(sizes, reps)
        overhead = api_overhead(folder, 3 if opts.quick else 15)
    print("Task shapes (scripted replies, labelled so; no model is called)")
    print(render_table(["task", "status", "drafts", "repair rewrites", "paid calls", "replayed",
                        "tokens", "wall ms"],
                       [[r["task"], r["status"], str(r["drafts"]), str(r["repair_rewrites"]),
                         str(r["paid_calls"]), str(r["replayed"]), str(r["tokens"]),
                         f"{r['wall_ms']:.0f}"] for r in shapes], labels=2))
    print("\nThe authoring prompt against the catalog's size (medians)")
    print(render_table(["capabilities", "prompt chars", "~tokens", "build ms", "check ms"],
                       [[str(r["capabilities"]), str(r["prompt_chars"]),
                         str(r["prompt_tokens_est"]), f"{r['build_ms']:.2f}",
                         f"{r['check_ms']:.2f}"] for r in scaling], labels=1))
    print("\nThe Python API over the in-process path (a new one-call run, medians)")
    print(render_table(["reps", "runtime.execute ms", "frostline.open().run ms", "ratio"],
                       [[str(overhead["reps"]), f"{overhead['direct_ms']:.1f}",
                         f"{overhead['facade_ms']:.1f}", f"{overhead['ratio']:.3f}x"]],
                       labels=0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
