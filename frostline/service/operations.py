"""What the HTTP API does, as plain functions over a Store: the route modules only map HTTP onto
these. Kept apart so the UI's read models (run detail, identity timeline) are testable alone."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from frostline.capabilities import DEFAULT_CATALOG, Catalog, Envelope
from frostline.contract.identity import program_order
from frostline.contract.jsonshape import check_storable
from frostline.contract.records import AttemptRecord, RunRecord, owner_view
from frostline.contract.status import AttemptStatus
from frostline.contract.waits import APPROVAL_SUFFIX
from frostline.embedded.answers import waits_of
from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import JobBody, JobQueue, JobSpec, precheck_script
from frostline.embedded.reconcile import NOT_GIVEN as NOT_GIVEN  # re-exported for the route
from frostline.embedded.reconcile import reconcile as reconcile_call
from frostline.errors import DefinitionError
from frostline.repair.author import AuthorResult, AuthorTask
from frostline.runtime.describe import INLINE_RESULT_BYTES as INLINE_RESULT_BYTES
from frostline.store.base import Store

# Outcome of one identity in one attempt, as the timeline shows it.
OUTCOMES = ("replayed", "executed", "diverged", "orphan", "semantic_repeat", "failed", "denied",
            "unresolved", "waiting")


# `payload` as its owner sees it: the run's store key shown as the run's name.
public = owner_view


def precheck_args(args: Any) -> None:
    """Args are data every store can hold (JSON, no NUL or lone surrogate, not too deep):
    refused with ValueNotStorable (HTTP 422) before any run record exists."""
    check_storable(args, "args")


def precheck(script: str, envelope: dict[str, Any], catalog: Catalog = DEFAULT_CATALOG, *,
             store: Store | None = None, run_id: str | None = None) -> None:
    """Refuse a script the checker rejects before anything is recorded (HTTP 422); for an
    existing run, its new spend against what is left of the budget."""
    precheck_script(script, envelope, catalog, store=store, run_id=run_id)


def envelope_dict(envelope: dict[str, Any], catalog: Catalog = DEFAULT_CATALOG) -> dict[str, Any]:
    return Envelope.from_dict(envelope, catalog).to_dict()


# A run's page inlines an attempt's result up to INLINE_RESULT_BYTES of JSON; a larger one is
# read on its own (`GET /v1/runs/{id}/attempts/{n}/result`), so a page of a run whose
# attempts returned 4 MiB each stays small, and so does what the server holds to build it.
# At most this many artifact refs are listed on a run's page.
MAX_LISTED_ARTIFACTS = 1000


def attempt_dict(a: AttemptRecord, result_bytes: int | None = None,
                 run_name: str | None = None) -> dict[str, Any]:
    """An attempt as the API shows it; with `result_bytes`, its result was too large to
    inline and `result_href` says where it is."""
    out = attempt_fields(a)
    if result_bytes is not None:
        out["result_bytes"] = result_bytes
        out["result_href"] = f"/v1/runs/{run_name or a.run_id}/attempts/{a.number}/result"
    return out


def attempt_fields(a: AttemptRecord) -> dict[str, Any]:
    return {
        "attempt": a.number,
        "status": a.status,
        "source_digest": a.source_digest,
        "gate": a.gate,
        "invoked": list(a.invoked),
        "orphans": list(a.orphans),
        "result": a.result,
        "error": a.error,
        "stats": a.stats,
        "started_at": a.started_at,
        "finished_at": a.finished_at,
    }


def spend(store: Store, run_id: str) -> float:
    """What the run has spent: the one figure `show`, the demo and the UI also give."""
    from frostline.runtime.spent import run_spent_usd

    return run_spent_usd(store, run_id)


def run_summary(store: Store, run: RunRecord,
                attempts: list[AttemptRecord] | None = None) -> dict[str, Any]:
    if attempts is None:
        attempts = [h.record for h in store.list_attempt_heads(run.run_id, 0)]
    return {
        "run_id": run.run_id,
        "status": attempts[-1].status if attempts else run.status,
        "kind": run.kind,
        "created_at": run.created_at,
        "attempts": len(attempts),
        "spend_usd": spend(store, run.run_id),
    }


def run_artifacts(store: Store, run_id: str) -> dict[str, dict[str, Any]]:
    """Artifact references found in the run's committed results, with where they came from
    (at most MAX_LISTED_ARTIFACTS; the results that name none are never read, and the
    others one at a time)."""
    found: dict[str, dict[str, Any]] = {}

    def walk(value: Any, ident: str, capability: str) -> None:
        if isinstance(value, dict):
            ref = value.get("artifact")
            if isinstance(ref, str) and ref.startswith("sha256:"):
                found.setdefault(ref, {"ref": ref, "mime": value.get("mime", "application/octet-stream"),
                                       "identity": ident, "capability": capability})
            for v in value.values():
                walk(v, ident, capability)
        elif isinstance(value, list):
            for v in value:
                walk(v, ident, capability)

    for ident in store.slots_mentioning(run_id, "sha256:"):
        if len(found) >= MAX_LISTED_ARTIFACTS:
            break
        slot = store.get_slot(run_id, ident)
        if slot is not None:
            walk(slot.result, str(slot.identity), slot.capability)
    # an A/B report's files are named by its attempts' results (it makes no calls)
    for head in store.list_attempt_heads(run_id, 0):
        a = head.record
        if a.report.get("kind") == "ab" and a.status == AttemptStatus.SUCCEEDED:
            full = store.get_attempt(run_id, a.number)
            walk(full.result if full is not None else None, f"report/{a.number}", "ab")
    return found


def timeline(store: Store, run_id: str,
             attempts: list[AttemptRecord] | None = None) -> dict[str, Any]:
    """Identity × attempt matrix: what happened to each identity in each attempt."""
    if attempts is None:
        attempts = [h.record for h in store.list_attempt_heads(run_id, 0)]
    rows: dict[str, dict[str, Any]] = {}

    def cell(ident: str, capability: str | None = None) -> dict[str, Any]:
        row = rows.setdefault(ident, {"identity": ident, "capability": capability, "attempts": {}})
        if capability and not row["capability"]:
            row["capability"] = capability
        return row

    first_seen: dict[str, int] = {}
    for ev in store.list_events(run_id):
        kind = ev.kind
        ident = ev.data.get("identity")
        number = ev.data.get("attempt")
        if not isinstance(ident, str) or not isinstance(number, int):
            continue
        outcome = _outcome(kind)
        if outcome is None:
            continue
        row = cell(ident, ev.data.get("capability"))
        first_seen.setdefault(ident, ev.seq)
        previous = row["attempts"].get(str(number))
        # A later, more specific outcome wins (e.g. failed after dispatch).
        if previous is None or OUTCOMES.index(outcome) >= OUTCOMES.index(previous):
            row["attempts"][str(number)] = outcome
        if isinstance(ev.data.get("moved_from"), str):  # a rebound replay (issue 30)
            row.setdefault("moved_from", {})[str(number)] = ev.data["moved_from"]
    for a in attempts:
        for ident in a.orphans:
            cell(ident)["attempts"].setdefault(str(a.number), "orphan")
        # The calls an attempt stopped at to wait (an approval, an event, a timer): they are
        # in no event of the call's own, only in the attempt's `waiting` error.
        waits = (a.error or {}).get("waits") if a.status == AttemptStatus.WAITING else None
        for w in waits if isinstance(waits, list) else []:
            ident = w.get("identity") if isinstance(w, dict) else None
            if isinstance(ident, str):
                # an implicit approval waits at `CALL~approval`: the row is the call's
                call = ident.removesuffix(APPROVAL_SUFFIX)
                cell(call, w.get("capability"))["attempts"][str(a.number)] = "waiting"
    for slot in store.list_slot_usages(run_id):
        cell(str(slot.identity), slot.capability)["committed_in"] = slot.attempt

    return {"attempts": [a.number for a in attempts],
            "rows": [rows[k] for k in timeline_order(rows, first_seen)]}


def timeline_order(identities: Iterable[str], first_seen: Mapping[str, int]) -> list[str]:
    """The timeline's row order: the program's (`program_order`), as `frostline show`'s."""
    return program_order(identities, first_seen)


def _outcome(kind: str) -> str | None:
    k = kind.lower()
    for needle, outcome in (("diverg", "diverged"), ("repeat", "semantic_repeat"),
                            ("unresolved", "unresolved"), ("denied", "denied"),
                            ("fail", "failed"), ("error", "failed"), ("replay", "replayed"), ("commit", "executed"),
                            ("execut", "executed")):
        if needle in k:
            return outcome
    return None


def run_detail(store: Store, run: RunRecord, *, executing: bool = False) -> dict[str, Any]:
    """A run's page: large results are left out (with where to read them), so building it
    holds at most INLINE_RESULT_BYTES of each attempt's result and one call result at once."""
    heads = store.list_attempt_heads(run.run_id, INLINE_RESULT_BYTES)
    attempts = [h.record for h in heads]
    last = attempts[-1] if attempts else None
    return {
        **run_summary(store, run, attempts),
        "executing": executing,
        "envelope": run.envelope,
        "attempts": [attempt_dict(h.record, h.result_bytes, run.name) for h in heads],
        "timeline": timeline(store, run.run_id, attempts),
        # a graph run's calls are keyed by (state, visit, ordinal), not by script sites; its
        # path and artifacts are at /v1/runs/{id}/graph
        "frozen_sites": frozen_sites(store, run.run_id, attempts) if run.kind != "graph"
        else [],
        "script": last.source if last else "",
        "gate": last.gate if last else None,
        "artifacts": list(run_artifacts(store, run.run_id).values()),
        "certificate": certificate(store, run.run_id, verify=True),
        "waits": waits_of(store, run.run_id),
    }


def frozen_sites(store: Store, run_id: str,
                 attempts: list[AttemptRecord] | None = None) -> list[dict[str, Any]]:
    from frostline.contract.gate import frozen_map

    if attempts is None:
        attempts = [h.record for h in store.list_attempt_heads(run_id, 0)]
    fmap = frozen_map(store.list_slot_usages(run_id), attempts)
    return [{"site": f.site, "capability": f.capability, "line": f.line, "source_line": f.source_line}
            for f in fmap.values()]


def certificate(store: Store, run_id: str, *, verify: bool, deep: bool = False) -> dict[str, Any]:
    from frostline.runtime import certificates as cert

    if verify:
        return dict(cert.verify(store, run_id, deep=deep))
    return {"certificate": cert.latest(store, run_id, check_chain=False)}


def orphans(store: Store, run_id: str) -> dict[str, Any]:
    return {"attempts": [{"attempt": a.number, "orphans": list(a.orphans)}
                         for a in store.list_attempts(run_id)]}


def reconcile(store: Store, run_id: str, identity: str, *, abandon: bool,
              result: Any = NOT_GIVEN) -> dict[str, Any]:
    """The one reconcile (`frostline.embedded.reconcile`): under the run's lock, refusing
    a result given together with abandon."""
    return reconcile_call(store, run_id, identity, abandon=abandon, result=result)


def gate_verdict(store: Store, run_id: str, script: str, *, runner: Any,
                 relocation: str | None = None,
                 catalog: Catalog = DEFAULT_CATALOG) -> dict[str, Any]:
    """What `frostline gate --json` prints for `script` on `run_id`: the static gate's verdict,
    and when it stops the candidate, the dry replay's under relocation `rebind` (the run's or
    `relocation`). Spends nothing and records nothing."""
    from frostline.contract.gate import frozen_map
    from frostline.contract.verdict import GateVerdict
    from frostline.runtime.dry_replay import gate_with_trace
    from frostline.runtime.gate_check import gate_source

    frozen = frozen_map(store.list_slots(run_id), store.list_attempts(run_id))
    verdict = GateVerdict(gate_source(frozen, script))
    if not verdict.accepted:
        verdict = gate_with_trace(store, run_id, script, runner=runner, relocation=relocation,
                                  catalog=catalog)
    return verdict.to_dict()


@dataclass
class Services:
    """The executing side of the API, injected so tests choose providers, runner and models.

    `execute` and `repair` are what the in-process pool runs (the embedded default);
    `make_queue`, when given, builds the queue jobs go to instead (Procrastinate's, for the
    workers of a PostgreSQL store), and this process executes nothing itself. `interrupts`
    is what `execute` runs its attempts under, so the pool can stop one (a cancellation).
    """

    # (store, run_id, source, args) and, for an attempt that names one, relocation=...
    execute: Callable[..., dict[str, Any]]
    repair: Callable[[Store, str, str, int, bool], dict[str, Any]]
    extra: dict[str, Any] = field(default_factory=dict)
    make_queue: Callable[[Store], JobQueue] | None = None
    interrupts: Interrupts = field(default_factory=Interrupts)
    # A task to a script (`POST /v1/runs` with `task` and `model`): the authoring loop with
    # the model endpoint the spec names. None: this server writes no scripts.
    author: Callable[[AuthorTask, str], AuthorResult] | None = None
    # What the gate's dry replay runs a candidate in (a Runner; no provider is reachable
    # there): the attempts' runner, or on an API host whose jobs run on workers one made
    # here on first use (the sandbox when it verifies).
    runner: Any = None

    def dry_runner(self) -> Any:
        if self.runner is None:
            from frostline import embedded

            self.runner, _ = embedded.make_runner(str(self.extra.get("dry_runner", "auto")))
        return self.runner

    def body(self) -> JobBody:
        """The job body of the in-process pool: attempts and repairs through these services."""

        def body(store: Store, spec: JobSpec) -> dict[str, Any]:
            p = spec.params
            if spec.kind == "attempt" and p.get("resume"):
                from frostline.embedded.resume import resumable_source

                source = resumable_source(store, spec.run_id)
                if source is None:  # resumed meanwhile: nothing waits now
                    return {"run_id": spec.run_id, "status": None, "skipped": "not waiting"}
                return self.execute(store, spec.run_id, source, None)
            if spec.kind == "attempt":
                policy = {"relocation": p["relocation"]} if p.get("relocation") else {}
                return self.execute(store, spec.run_id, str(p["source"]), p.get("args"),
                                    **policy)
            if spec.kind == "repair":
                return self.repair(store, spec.run_id, str(p["model"]),
                                   int(p.get("max_rewrites", 3)), bool(p.get("execute")))
            if spec.kind == "author":
                from frostline.embedded.authoring import author_job

                if self.author is None:
                    removed = store.discard_authoring(spec.run_id)
                    raise DefinitionError("this server has no model endpoint to write "
                                          "scripts with; send `script` instead of `task`",
                                          field="task", removed=removed)
                return author_job(store, spec.run_id, p, ticket=spec.ticket, write=self.author,
                                  catalog=self.extra.get("catalog", DEFAULT_CATALOG),
                                  cancelled=lambda: self.interrupts.cancelling(spec.run_id),
                                  execute=lambda source, args: self.execute(
                                      store, spec.run_id, source, args))
            raise DefinitionError(f"the HTTP service does not run {spec.kind} jobs")

        return body

    @classmethod
    def remote(cls, make_queue: Callable[[Store], JobQueue], *,
               runner_name: str = "auto") -> Services:
        """Services of an API host whose jobs run on workers: it needs no providers or
        credentials, and a runner (`runner_name`) only for the gate's dry replay."""

        def elsewhere(*_: Any) -> dict[str, Any]:
            raise DefinitionError("this server queues jobs for workers and executes none")

        return cls(execute=elsewhere, repair=elsewhere,
                   extra={"runner": "workers", "dry_runner": runner_name},
                   make_queue=make_queue)

    @classmethod
    def default(cls, *, catalog: Catalog = DEFAULT_CATALOG, runner_name: str = "auto",
                latency_s: float = 0.0, capabilities: Any = None) -> Services:
        """The default runner (the sandbox when it verifies here) and the providers of
        `capabilities` (an open CapabilityRegistry: the configured catalog and providers), or
        the local providers. A repair's model spec may name a configured [models.NAME]."""
        from frostline import embedded

        config = None
        if capabilities is not None:
            providers, catalog, config = capabilities, capabilities.catalog, capabilities.config
        else:
            providers = embedded.local_providers(embedded.default_log_path(), latency_s)
        runner, label = embedded.make_runner(runner_name)
        stops = Interrupts()

        def execute(store: Store, run_id: str, source: str, args: dict[str, Any] | None,
                    relocation: str | None = None) -> dict[str, Any]:
            run = store.get_run(run_id)
            # args=None: the run's latest recorded args (execute() resolves it under the lock)
            return embedded.execute(store, run_id, source, args, run.envelope if run else None,
                                    providers, runner, catalog, interrupts=stops,
                                    relocation=relocation)

        def author(task: AuthorTask, spec: str) -> AuthorResult:
            from frostline.repair.author import author as run_author
            from frostline.repair.endpoints import model_client

            # No replay policy: a client's spec never becomes a path the server opens.
            return run_author(model_client(spec, config), task)

        def repair(store: Store, run_id: str, spec: str, max_rewrites: int,
                   run_it: bool) -> dict[str, Any]:
            result = embedded.repair(store, run_id, spec, max_rewrites=max_rewrites,
                                     config=config, catalog=catalog)
            if run_it and result.get("accepted"):
                result["attempt"] = execute(store, run_id, result["accepted"], None)
            return result

        return cls(execute=execute, repair=repair, extra={"runner": label, "catalog": catalog},
                   interrupts=stops, author=author, runner=runner)
