"""frostline as a Python library: `frostline.open(...)` and `frostline.open_async(...)`.

The facade over the same operations the command line runs, for a program (a web backend, an
agent framework, a notebook) that drives frostline in-process::

    import frostline
    with frostline.open(store="sqlite:///runs.db", config="frostline.toml") as fl:
        report = fl.check(source)                    # .ok, .violations[i].rule/.line/.hint
        attempt = fl.run(source, run_id="r1", args={"brief": "a trail shoe"})
        attempt.status, attempt.executed, attempt.replayed, attempt.result

Results are typed (dataclasses whose `to_dict()` is the JSON the matching command prints with
`--json`); errors are the `frostline.errors` tree. It sits on top of the layers, beside the
command line: nothing below imports it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from frostline.capabilities.envelope import Envelope
from frostline.contract.gate import frozen_map
from frostline.contract.records import LOCAL_PRINCIPAL
from frostline.contract.verdict import GateVerdict
from frostline.embedded.jobs import Submission
from frostline.errors import RunNotFound
from frostline.repair.author import DEFAULT_MAX_REWRITES, AuthorResult, AuthorTask
from frostline.repair.loop import RepairResult
from frostline.runtime.outcome import AttemptOutcome
from frostline.script.report import Report


@dataclass(frozen=True)
class Authored:
    """What `author` returns: the drafts and, when a run id was given, its first attempt."""

    run_id: str | None
    result: AuthorResult
    execution: AttemptOutcome | None = None

    @property
    def accepted(self) -> str | None:
        return self.result.accepted

    def to_dict(self) -> dict[str, Any]:
        """The JSON of `frostline author --json`."""
        data: dict[str, Any] = {"run_id": self.run_id, **self.result.to_dict()}
        if self.execution is not None:
            data["execution"] = self.execution.to_dict()
        return data


class Frostline:
    """An open store and configuration. Build it with `frostline.open(...)`; close it (or use
    it as a context manager) to stop the configured providers and close the store."""

    def __init__(self, store: str | None = None, config: str | Path | None = None, *,
                 runner: str = "auto") -> None:
        from frostline import embedded
        from frostline.store import open_store

        self._registry = embedded.open_capabilities(config)
        try:
            self._store = open_store(store)
        except BaseException:
            self._registry.close()
            raise
        self._runner_name = runner
        self._runner: Any = None

    @property
    def catalog(self) -> Any:
        """The catalog of the configuration in force."""
        return self._registry.catalog

    def check(self, source: str, envelope: Envelope | dict[str, Any] | None = None) -> Report:
        """The static checker's report: `.ok`, `.violations` (rule, line, hint), `.facts`."""
        from frostline.script import check

        return check(source, envelope, catalog=self._registry.catalog)

    def run(self, source: str, run_id: str, *, args: dict[str, Any] | None = None,
            envelope: Envelope | dict[str, Any] | None = None) -> AttemptOutcome:
        """One attempt of `source` under `run_id`, replaying what the run already committed."""
        from frostline.runtime.execute import execute

        return execute(self._store, run_id, source, args=args, envelope=envelope,
                       providers=self._registry, runner=self._make_runner(),
                       catalog=self._registry.catalog)

    def gate(self, run_id: str, candidate: str, *,
             relocation: str | None = None) -> GateVerdict:
        """Gate `candidate` against the run's frozen sites, as `frostline gate` does: under
        relocation `rebind` (the run's envelope, or `relocation`) a candidate stopped only
        because committed calls moved gets the dry replay. `.accepted`, `.counterexamples`
        (the callsite gate's), `.trace` (the dry replay's verdict, if it ran), `.to_dict()`
        (what `frostline gate --json` prints)."""
        from frostline.runtime.dry_replay import gate_with_trace
        from frostline.runtime.gate_check import gate_source

        self._require(run_id)
        frozen = frozen_map(self._store.list_slots(run_id), self._store.list_attempts(run_id))
        static = gate_source(frozen, candidate)
        if static.accepted:
            return GateVerdict(static)
        return gate_with_trace(self._store, run_id, candidate, runner=self._make_runner(),
                               relocation=relocation, catalog=self._registry.catalog)

    def repair(self, run_id: str, model: str, *, max_rewrites: int = 3) -> RepairResult:
        """The repair loop on the run's last failed attempt, with the model `model` names
        (a configured [models.NAME], openai:MODEL, or replay:FILE)."""
        from frostline.repair.loop import repair, task_from_store

        task = task_from_store(self._store, run_id, catalog=self._registry.catalog,
                               max_rewrites=max_rewrites)
        return repair(self._client(model), task)

    def author(self, task: str, model: str, *, run_id: str | None = None,
               args: dict[str, Any] | None = None,
               envelope: Envelope | dict[str, Any] | None = None,
               max_rewrites: int = DEFAULT_MAX_REWRITES) -> Authored:
        """A model writes the script for `task`; with `run_id` (a new run) it is run as the
        run's first attempt. Nothing is stored unless a draft is accepted: drafts all refused
        return `accepted` None, a model's error (ModelError) is raised with the drafts so far
        in `.fields["author"]`, and the name stays free."""
        from frostline.errors import DefinitionError
        from frostline.repair.author import author

        catalog = self._registry.catalog
        env = Envelope.from_dict(envelope, catalog) if isinstance(envelope, dict) else envelope
        if run_id is not None and self._store.get_run(run_id) is not None:
            raise DefinitionError(f"run {run_id!r} already exists; an authored script is a "
                                  "run's first attempt", run_id=run_id)
        result = author(self._client(model), AuthorTask(task, catalog=catalog, envelope=env,
                                                        args=args, max_rewrites=max_rewrites))
        execution = None
        if run_id is not None and result.accepted is not None:
            execution = self.run(result.accepted, run_id, args=args, envelope=env)
        return Authored(run_id, result, execution)

    def show(self, run_id: str) -> dict[str, Any]:
        """The run as `frostline show --json` prints it."""
        from frostline.runtime.describe import describe_run

        self._require(run_id)
        return describe_run(self._store, run_id)

    def approve(self, run_id: str, identity: str, *, approved: bool = True,
                reason: str | None = None, by: str = LOCAL_PRINCIPAL) -> dict[str, Any]:
        """Approve (or reject) the approval the run waits for at `identity`."""
        from frostline.embedded.answers import approve

        return approve(self._store, run_id, identity, by=by, approved=approved, reason=reason)

    def signal(self, run_id: str, name: str, data: Any) -> dict[str, Any]:
        """Send the event `name` with the JSON body `data` to the run."""
        from frostline.embedded.answers import signal

        return signal(self._store, run_id, name, data)

    def submit(self, source: str, run_id: str, *, args: dict[str, Any] | None = None,
               envelope: dict[str, Any] | None = None, key: str | None = None) -> Submission:
        """Queue `source` as the run's next attempt for a worker (`frostline worker`) to run:
        a PostgreSQL store only. Checked first: a rejected script queues nothing. With an
        idempotency `key`, a second submission returns the first one's Submission."""
        from frostline.errors import DefinitionError
        from frostline.worker.submit import submit_attempt

        if not self._store.url.startswith("postgresql"):
            raise DefinitionError("submit queues a job for workers, which share a PostgreSQL "
                                  f"store; {self._store.url} is not one (run it here with "
                                  "run())", store=self._store.url)
        return submit_attempt(self._store, run_id, source, args=args, envelope=envelope,
                              catalog=self._registry.catalog, key=key)

    def close(self) -> None:
        self._registry.close()
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _require(self, run_id: str) -> None:
        if self._store.get_run(run_id) is None:
            raise RunNotFound(f"no run {run_id!r} in the store {self._store.url}",
                              run_id=run_id)

    def _make_runner(self) -> Any:
        if self._runner is None:
            from frostline import embedded

            self._runner, _label = embedded.make_runner(self._runner_name)
        return self._runner

    def _client(self, model: str) -> Any:
        from frostline.repair.endpoints import model_client
        from frostline.repair.replay import ReplayPolicy

        replay = ReplayPolicy.for_cli(store_files=self._store.local_files())
        return model_client(model, self._registry.config, replay=replay)


class AsyncFrostline:
    """`Frostline`'s methods as coroutines, for a program that runs an event loop: each runs
    on a worker thread, so the loop is never blocked by a script or a model call."""

    def __init__(self, inner: Frostline) -> None:
        self._inner = inner

    async def check(self, source: str, envelope: Any = None) -> Report:
        return await asyncio.to_thread(self._inner.check, source, envelope)

    async def run(self, source: str, run_id: str, **options: Any) -> AttemptOutcome:
        return await asyncio.to_thread(lambda: self._inner.run(source, run_id, **options))

    async def gate(self, run_id: str, candidate: str, **options: Any) -> GateVerdict:
        return await asyncio.to_thread(lambda: self._inner.gate(run_id, candidate, **options))

    async def repair(self, run_id: str, model: str, **options: Any) -> RepairResult:
        return await asyncio.to_thread(lambda: self._inner.repair(run_id, model, **options))

    async def author(self, task: str, model: str, **options: Any) -> Authored:
        return await asyncio.to_thread(lambda: self._inner.author(task, model, **options))

    async def show(self, run_id: str) -> dict[str, Any]:
        return await asyncio.to_thread(self._inner.show, run_id)

    async def approve(self, run_id: str, identity: str, **options: Any) -> dict[str, Any]:
        return await asyncio.to_thread(lambda: self._inner.approve(run_id, identity, **options))

    async def signal(self, run_id: str, name: str, data: Any) -> dict[str, Any]:
        return await asyncio.to_thread(self._inner.signal, run_id, name, data)

    async def submit(self, source: str, run_id: str, **options: Any) -> Submission:
        return await asyncio.to_thread(lambda: self._inner.submit(source, run_id, **options))

    async def aclose(self) -> None:
        await asyncio.to_thread(self._inner.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def open(store: str | None = None, config: str | Path | None = None, *,
         runner: str = "auto") -> Frostline:
    """Open a store and a configuration (the command line's precedence: None means
    $FROSTLINE_STORE / ./.frostline/ and $FROSTLINE_CONFIG / ./frostline.toml / built-in).

    `runner` is "auto" (the sandbox when it works here, else a plain child process, said on
    stderr), "sandbox" or "process".
    Example: ``with frostline.open("sqlite:///runs.db") as fl: fl.run(src, run_id="r1")``
    """
    return Frostline(store, config, runner=runner)


def open_async(store: str | None = None, config: str | Path | None = None, *,
               runner: str = "auto") -> AsyncFrostline:
    """`open`, with every method a coroutine: ``async with frostline.open_async() as fl:``."""
    return AsyncFrostline(Frostline(store, config, runner=runner))
