"""The brand-video demo: a model writes the script (its first draft refused by the checker,
the second accepted), a failed fanout, a repair the gate stops, a repair it accepts.

It also shows the relocation policy on a run of its own: the repair the gate
stops only moves the image call into a helper, payloads unchanged, so under `relocation =
"stop"` it is stopped, and under `"rebind"` the dry replay admits it and the three committed
shots replay for free (only the failed fourth is paid).

Everything runs on the embedded default (a SQLite store under ./.frostline/, local providers
that render real PNGs, scripted authoring and repair model replies shipped with the package, labelled `scripted`:
written by hand, no model is called, no network). The
same repaired script is also run the naive way (a fresh run, no prefix) so the two paths can be
compared on provider calls, images and spend. Provider calls are counted from the provider's
own invocation log, which is independent of the run store.
"""

from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from frostline.capabilities import DEFAULT_CATALOG, Catalog, Envelope
from frostline.capabilities.costs import call_cost, rejected_cost
from frostline.providers.provider_log import ProviderLog
from frostline.repair.replay import ReplayPolicy
from frostline.store import open_store
from frostline.store.base import Store

BRIEF = "Thirty-second spot for Aurora, a trail running shoe: dawn, mountains, motion"
ARGS = {"brief": BRIEF}
ENVELOPE = {"budget": {"usd": 1.0, "calls": 40}, "concurrency": 4, "max_fanout": 8,
            "relocation": "stop"}  # the story: the callsite gate; then both, on a run of its own
TASK = ("A brand video for args.brief: plan a storyboard of four shots, then render the four "
        "shots in parallel, each in its own format (1024x1024, 1536x1024, 1024x1536, "
        "2048x2048) with its index as the seed; return the brief as the title and the shots' "
        "artifact refs.")


def script_text(name: str) -> str:
    return resources.files("frostline.demo").joinpath("scripts", name).read_text(encoding="utf-8")


@dataclass
class PathFigures:
    provider_calls: int = 0
    images: int = 0
    spend_usd: float = 0.0


@dataclass
class DemoResult:
    run_id: str
    store_url: str
    runner: str
    attempts: list[dict[str, Any]] = field(default_factory=list)
    authoring: dict[str, Any] = field(default_factory=dict)
    repair: dict[str, Any] = field(default_factory=dict)
    contract: PathFigures = field(default_factory=PathFigures)
    naive: PathFigures = field(default_factory=PathFigures)
    replayed: int = 0
    executed: int = 0
    gate_stops: int = 0
    byte_identical: bool = False  # every shot attempt 1 committed reached attempt 2 unchanged
    byte_identical_shots: int = 0  # how many shots that comparison covered and found equal
    counterexamples: list[dict[str, Any]] = field(default_factory=list)
    # the moved repair under each relocation policy: status, replayed, executed, paid calls
    relocation: dict[str, dict[str, Any]] = field(default_factory=dict)
    images: list[str] = field(default_factory=list)
    out_dir: str = ""
    elapsed_s: float = 0.0

    def compare_shots(self, before: dict[int, bytes], after: dict[int, bytes]) -> None:
        """Record whether every shot of attempt 1 (`before`) reached attempt 2 (`after`) as
        the same bytes."""
        same = replayed_bytes_identical(before, after)
        self.byte_identical_shots = len(same)
        self.byte_identical = bool(before) and len(same) == len(before)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "store": self.store_url,
            "runner": self.runner,
            "contract_calls": self.contract.provider_calls,
            "naive_calls": self.naive.provider_calls,
            "replayed": self.replayed,
            "executed": self.executed,
            "gate_stops": self.gate_stops,
            "images": self.contract.images,
            "naive_images": self.naive.images,
            "spend_usd": round(self.contract.spend_usd, 6),
            "naive_spend_usd": round(self.naive.spend_usd, 6),
            "byte_identical": self.byte_identical,
            "byte_identical_shots": self.byte_identical_shots,
            "counterexamples": self.counterexamples,
            "relocation": self.relocation,
            "attempts": self.attempts,
            "authoring": self.authoring,
            "repair": self.repair,
            "image_files": self.images,
            "out_dir": self.out_dir,
            "elapsed_s": round(self.elapsed_s, 3),
        }


def _figures(entries: list[dict[str, Any]], catalog: Catalog = DEFAULT_CATALOG) -> PathFigures:
    """Calls, images and spend of one path, from its provider's own invocation log: a call
    costs what the provider reported (frostline.capabilities.costs), a rejected one 0 unless
    the provider said otherwise."""
    fig = PathFigures(provider_calls=len(entries))
    for e in entries:
        if not e.get("ok"):
            fig.spend_usd += rejected_cost(e)
            continue
        cap = catalog.get(str(e.get("capability")))
        fig.spend_usd += call_cost(e, cap.price_usd if cap else 0.0)
        if e.get("capability") == "image.generate":
            fig.images += 1
    fig.spend_usd = round(fig.spend_usd, 6)
    return fig


def run_demo(*, store_url: str | None = None, out_dir: str | Path = "frostline-demo",
             runner_name: str = "auto", latency_s: float = 0.05, progress: Any = None,
             owner: str | None = None, config: str | Path | None = None) -> DemoResult:
    """Run the whole scenario; `progress(step: str)` is called as it goes. With `config` (a
    configuration file) the demo's capabilities are answered by the providers it configures,
    e.g. image.generate by an OpenAI-compatible endpoint; without it, by the local ones."""
    from frostline import embedded as engine

    started = time.perf_counter()
    say = progress or (lambda _msg: None)
    (out := Path(out_dir)).mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="frostline-demo-"))
    providers: Any = None
    try:
        store = open_store(store_url)
        run_id = name = f"demo-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
        contract_log = ProviderLog(workdir / "contract-provider.log")
        runner, runner_label = engine.make_runner(runner_name)
        result = DemoResult(run_id=run_id, store_url=store.url, runner=runner_label)
        envelope = Envelope.from_dict(ENVELOPE)
        providers = _providers(engine, config, contract_log.path, latency_s)
        catalog = getattr(providers, "catalog", DEFAULT_CATALOG)
        if owner is not None:  # e.g. shown in the web UI of a served store
            run_id = store.create_run(run_id, envelope.to_dict(), owner=owner).run_id

        say("authoring: the scripted model replies write the script, the checker vets it")
        script = _author(store, result, catalog, envelope)
        say("attempt 1: storyboard, then four shots in parallel")
        first = engine.execute(store, run_id, script, ARGS, envelope, providers, runner, catalog)
        result.attempts.append(first)
        shots_before = committed_shot_bytes(store, run_id, int(first["attempt"]))

        say("repair: asking the scripted model replies for a fix")
        candidate = _repair(engine, store, run_id, result)

        say("attempt 2: the accepted repair replays the committed prefix")
        second = engine.execute(store, run_id, candidate, ARGS, envelope, providers, runner,
                                catalog)
        result.attempts.append(second)
        result.replayed, result.executed = (int(second.get(k, 0)) for k in ("replayed", "executed"))
        result.contract = _figures(contract_log.read(), catalog)

        say("checking that the replayed shots are byte-identical")
        result.compare_shots(shots_before, received_shot_bytes(store, second))
        result.images = _export_images(store, second, out)
        say("naive path: the first attempt, then a full rerun of the repaired script")
        result.naive = _naive_path(engine, workdir, candidate, envelope, runner, latency_s,
                                   config)

        result.relocation = _relocation_path(engine, store, f"{name}-moved", result.repair,
                                             workdir, runner, latency_s, config, owner, say)
        result.out_dir = str(out.resolve())
        result.elapsed_s = time.perf_counter() - started
        _write_report(result, candidate, out)
        store.close()
        return result
    finally:
        if hasattr(providers, "close"):
            providers.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _providers(engine: Any, config: str | Path | None, log: Path, latency_s: float) -> Any:
    """The configured providers when a file is given, else the local ones; both log every
    real execution to `log`, which the demo's figures count."""
    if config is None:
        return engine.local_providers(log, latency_s)
    return engine.open_capabilities(config, log_path=log, latency_s=latency_s)


def _author(store: Store, result: DemoResult, catalog: Catalog, envelope: Envelope) -> str:
    """The authoring loop on the shipped scripted replies (written by hand, labelled
    `scripted`): the first draft fans out over a list of unknown length and the checker
    refuses it (R05); its counterexample goes back, and the second draft is accepted."""
    from frostline.repair.author import AuthorTask, author
    from frostline.repair.clients import client_from_spec

    model_file = resources.files("frostline.demo").joinpath("scripts", "scripted_author.json")
    with resources.as_file(model_file) as model_path:
        policy = ReplayPolicy.for_cli(store_files=store.local_files(), also=(model_path.parent,))
        client = client_from_spec(f"replay:{model_path}", replay=policy)
        authored = author(client, AuthorTask(TASK, catalog=catalog, envelope=envelope,
                                             args=ARGS, max_rewrites=2))
    result.authoring = {**authored.to_dict(), "model": {
        "name": getattr(client, "model", "scripted"),
        "source": getattr(client, "source", "scripted")}}
    if authored.accepted is None:
        raise RuntimeError("the scripted authoring replies produced no accepted script")
    return authored.accepted


def _repair(engine: Any, store: Store, run_id: str, result: DemoResult) -> str:
    """Ask the shipped model replies for a repair; returns the accepted candidate."""
    model_file = resources.files("frostline.demo").joinpath("scripts", "scripted_model.json")
    with resources.as_file(model_file) as model_path:
        policy = ReplayPolicy.for_cli(store_files=store.local_files(), also=(model_path.parent,))
        repaired = engine.repair(store, run_id, f"replay:{model_path}", max_rewrites=3,
                                 replay=policy)
    result.repair = repaired
    result.gate_stops = sum(1 for r in repaired["rewrites"] if r.get("counterexamples"))
    for r in repaired["rewrites"]:
        result.counterexamples.extend(r.get("counterexamples") or [])
    candidate = repaired.get("accepted")
    if not candidate:
        raise RuntimeError("the scripted model replies produced no accepted repair")
    return str(candidate)


def _relocation_path(engine: Any, store: Store, name: str, repair: dict[str, Any],
                     workdir: Path, runner: Any, latency_s: float, config: str | Path | None,
                     owner: str | None, say: Any) -> dict[str, dict[str, Any]]:
    """A run of its own (its own provider log): attempt 1, then the repair the gate stopped
    (it only moved the image call), under `stop` and then under `rebind`; what each did and
    what it paid. Nothing when no rewrite was stopped."""
    moved = next((r.get("candidate") for r in repair.get("rewrites", [])
                  if r.get("counterexamples") and r.get("candidate")), None)
    if not moved:
        return {}
    say("relocation: the moved repair under stop, then under rebind")
    log = ProviderLog(workdir / "relocation-provider.log")
    providers = _providers(engine, config, log.path, latency_s)
    catalog = getattr(providers, "catalog", DEFAULT_CATALOG)
    envelope = Envelope.from_dict({**ENVELOPE, "relocation": "stop"})
    run_id = store.create_run(name, envelope.to_dict(), owner=owner).run_id
    out: dict[str, dict[str, Any]] = {}
    try:
        engine.execute(store, run_id, script_text("brand_video_v1.py"), ARGS, envelope,
                       providers, runner, catalog)
        for policy in ("stop", "rebind"):
            before = len(log.read())
            got = engine.execute(store, run_id, moved, ARGS, envelope, providers, runner,
                                 catalog, relocation=policy)
            trace = (got.get("gate") or {}).get("trace") or {}
            out[policy] = {"run_id": name, "status": got.get("status"),
                           "replayed": got.get("replayed", 0),
                           "executed": got.get("executed", 0),
                           "rebound": trace.get("rebound", 0),
                           "provider_calls": len(log.read()) - before}
    finally:
        if hasattr(providers, "close"):
            providers.close()
    return out


def _naive_path(engine: Any, workdir: Path, candidate: str, envelope: Envelope, runner: Any,
                latency_s: float, config: str | Path | None) -> PathFigures:
    """The same two scripts without the contract: a fresh run each, in a scratch store."""
    naive_log = ProviderLog(workdir / "naive-provider.log")
    naive_providers = _providers(engine, config, naive_log.path, latency_s)
    catalog = getattr(naive_providers, "catalog", DEFAULT_CATALOG)
    try:
        with open_store(f"sqlite:///{workdir / 'naive.db'}") as naive_store:
            engine.execute(naive_store, "naive-1", script_text("brand_video_v1.py"), ARGS,
                           envelope, naive_providers, runner, catalog)
            engine.execute(naive_store, "naive-2", candidate, ARGS, envelope, naive_providers,
                           runner, catalog)
    finally:
        if hasattr(naive_providers, "close"):
            naive_providers.close()
    return _figures(naive_log.read(), catalog)


def _shot_refs(attempt: dict[str, Any]) -> list[str]:
    res = attempt.get("result") or {}
    return [r for r in res.get("shots", []) if isinstance(r, str)] if isinstance(res, dict) else []


def committed_shot_bytes(store: Store, run_id: str, attempt: int) -> dict[int, bytes]:
    """The bytes of each shot `attempt` committed, by fanout branch (the shot's index), read
    as they stand right after that attempt."""
    out: dict[int, bytes] = {}
    for slot in store.list_slots(run_id):
        if slot.capability != "image.generate" or slot.attempt != attempt or len(slot.path) != 1:
            continue
        ref = slot.result.get("artifact") if isinstance(slot.result, dict) else None
        found = store.get_artifact(ref) if isinstance(ref, str) else None
        if found is not None:
            out[slot.path[0]] = bytes(found[0])
    return out


def received_shot_bytes(store: Store, attempt: dict[str, Any]) -> dict[int, bytes]:
    """The bytes of each shot an attempt's script received and returned, by index."""
    out: dict[int, bytes] = {}
    for i, ref in enumerate(_shot_refs(attempt)):
        found = store.get_artifact(ref)
        if found is not None:
            out[i] = bytes(found[0])
    return out


def replayed_bytes_identical(before: dict[int, bytes], after: dict[int, bytes]) -> list[int]:
    """The shots of attempt 1 (`before`) whose bytes attempt 2 received unchanged (`after`);
    the check holds when that is every one of them, and there is at least one."""
    return [i for i, data in sorted(before.items()) if after.get(i) == data]


def _export_images(store: Store, attempt: dict[str, Any], out: Path) -> list[str]:
    files = []
    for i, ref in enumerate(_shot_refs(attempt), start=1):
        found = store.get_artifact(ref)
        if found is None:
            continue
        data, _mime = found
        path = out / f"shot-{i}.png"
        path.write_bytes(data)
        files.append(str(path))
    return files


def _write_report(result: DemoResult, candidate: str, out: Path) -> None:
    (out / "report.json").write_text(json.dumps(result.to_dict(), indent=2, default=str))
    (out / "repaired_script.py").write_text(candidate)
    lines = [
        "# frostline demo report", "",
        f"Run `{result.run_id}` in `{result.store_url}` (runner: {result.runner}).", "",
        "| path | provider calls | images produced | spend (USD) |",
        "|---|---|---|---|",
        f"| revision contract | {result.contract.provider_calls} | {result.contract.images} | {result.contract.spend_usd:.3f} |",
        f"| naive full rerun | {result.naive.provider_calls} | {result.naive.images} | {result.naive.spend_usd:.3f} |",
        "",
        f"Gate stops before spending: {result.gate_stops}. Replayed identities: {result.replayed}; "
        f"newly executed: {result.executed}. Replayed shots byte-identical to attempt 1's bytes: "
        f"{result.byte_identical} ({result.byte_identical_shots} compared byte for byte).",
        "",
    ]
    for c in result.counterexamples:
        lines.append(f"- gate counterexample: `{c.get('kind')}` at frozen site `{c.get('site')}`"
                     f" (`{(c.get('source_line') or '').strip()}`)")
    if result.relocation:
        lines += ["", "The repair that only moved the image call, on a run of its own:", "",
                  "| relocation | status | replayed | rebound (moved) | executed | "
                  "provider calls |", "|---|---|---|---|---|---|"]
        for policy, r in result.relocation.items():
            lines.append(f"| {policy} | {r['status']} | {r['replayed']} | {r['rebound']} | "
                         f"{r['executed']} | {r['provider_calls']} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")
