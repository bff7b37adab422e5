"""What a host does with a job: the job bodies, run with this host's providers, runner and
catalog (its credentials never leave it).

An attempt runs on its own event loop so that the host can stop it from another thread
(`Interrupts`): on a shutdown past its grace period, or when the worker lost its database. A
stopped attempt kills its script, lets every call it already dispatched complete and commit
(the broker drains), releases the run lock and hands the job back (`HandBack`); the attempt
that runs it again replays what was committed, and the crash rules decide the rest. The owner
cancelling the run stops its attempt the same way, but the job ends there (`JobCancelled`):
nothing is handed back, and the attempt is closed `cancelled`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.capabilities.provider import Provider
from frostline.config import Config
from frostline.embedded.jobs import HandBack, JobBody, JobCancelled, JobSpec, StoreHandBack
from frostline.runtime.runners import Runner
from frostline.store.base import Store

T = TypeVar("T")


class Interrupts:
    """The attempts running on this host, which `interrupt_all` stops (a hand-back) and
    `cancel` stops one run's (its owner cancelled it) (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: dict[int, tuple[asyncio.AbstractEventLoop, asyncio.Task[Any],
                                       str | None]] = {}
        self._cancelled: dict[str, str | None] = {}  # run id → who cancelled it
        self.reason: str | None = None

    def run(self, coro: Coroutine[Any, Any, T], *, run_id: str | None = None) -> T:
        """Run `coro` on a loop of its own; HandBack if it is (or already was) interrupted,
        JobCancelled if `run_id` is (or already was) cancelled."""
        loop = asyncio.new_event_loop()
        task = loop.create_task(coro)
        key = id(task)
        with self._lock:
            if self.reason is not None or (run_id is not None and run_id in self._cancelled):
                task.cancel()
            self._running[key] = (loop, task, run_id)
        try:
            return loop.run_until_complete(task)
        except asyncio.CancelledError:
            with self._lock:
                cancelled = run_id is not None and run_id in self._cancelled
                by = self._cancelled.get(run_id) if run_id is not None else None
            if cancelled:
                raise JobCancelled(by) from None
            raise HandBack(f"stopped on this host: {self.reason}") from None
        finally:
            with self._lock:
                self._running.pop(key, None)
            loop.close()

    def interrupt_all(self, reason: str) -> int:
        """Stop every running attempt (and any that starts later); return how many ran."""
        with self._lock:
            self.reason = reason
            running = list(self._running.values())
        for loop, task, _ in running:
            loop.call_soon_threadsafe(task.cancel)
        return len(running)

    def cancel(self, run_id: str, by: str | None = None) -> bool:
        """Stop the attempt of `run_id` running here, or the next one to start here, until
        `forget(run_id)`; return whether one ran here."""
        with self._lock:
            self._cancelled.setdefault(run_id, by)
            running = [(loop, task) for loop, task, rid in self._running.values()
                       if rid == run_id]
        for loop, task in running:
            loop.call_soon_threadsafe(task.cancel)
        return bool(running)

    def running(self, run_id: str) -> bool:
        """Whether an attempt of `run_id` runs here now."""
        with self._lock:
            return any(rid == run_id for _, _, rid in self._running.values())

    def cancelling(self, run_id: str) -> bool:
        """Whether a cancellation of `run_id` is asked and its job has not ended yet."""
        with self._lock:
            return run_id in self._cancelled

    def forget(self, run_id: str) -> None:
        """The job of `run_id` ended: a cancellation no longer applies to its next attempt."""
        with self._lock:
            self._cancelled.pop(run_id, None)

    def resume(self) -> None:
        """Let attempts run again (the database is back)."""
        with self._lock:
            self.reason = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._running)


def host_body(providers: Provider, runner: Runner, catalog: Catalog = DEFAULT_CATALOG, *,
              interrupts: Interrupts | None = None, config: Config | None = None) -> JobBody:
    """The job body of this host: attempts, repairs and authorings with `providers` and
    `runner` (a repair's or an authoring's model may be one of `config`'s [models]), graph runs with the bodies module the
    job names.

    Example: ``run_job(store, spec, host_body(LocalProviders(), ChildProcessRunner()), worker="w1")``
    """
    stops = interrupts if interrupts is not None else Interrupts()

    def attempt(store: Store, run_id: str, source: str, args: Any,
                envelope: dict[str, Any] | None,
                relocation: str | None = None) -> dict[str, Any]:
        from frostline.runtime.execute import execute_async

        outcome = stops.run(execute_async(store, run_id, source, args=args, envelope=envelope,
                                          providers=providers, runner=runner, catalog=catalog,
                                          relocation=relocation),
                            run_id=run_id)
        if (outcome.error or {}).get("code") == "store_unavailable":
            # The store stopped answering: this host cannot finish (nor even record) the
            # attempt. Another run of the job replays what was committed and applies the
            # crash rules to a call left pending.
            raise StoreHandBack("the store did not answer: "
                                f"{(outcome.error or {}).get('message')}")
        return dict(outcome.to_dict())

    def body(store: Store, spec: JobSpec) -> dict[str, Any]:
        p = spec.params
        if spec.kind == "attempt" and p.get("resume"):
            from frostline.embedded.resume import resumable_source

            source = resumable_source(store, spec.run_id)
            if source is None:  # answered twice, or resumed meanwhile: nothing waits now
                return {"run_id": spec.run_id, "status": None, "skipped": "not waiting"}
            return attempt(store, spec.run_id, source, None, None)
        if spec.kind == "attempt":
            return attempt(store, spec.run_id, str(p["source"]), p.get("args"),
                           p.get("envelope"), p.get("relocation"))
        if spec.kind == "repair":
            from frostline.embedded import repair

            result = repair(store, spec.run_id, str(p["model"]),
                            max_rewrites=int(p.get("max_rewrites", 3)), config=config,
                            catalog=catalog)
            if p.get("execute") and result.get("accepted"):
                result["attempt"] = attempt(store, spec.run_id, result["accepted"], None, None)
            return result
        if spec.kind == "author":
            from frostline.embedded.authoring import author_job, host_writer

            return author_job(store, spec.run_id, p, ticket=spec.ticket,
                              write=host_writer(config), catalog=catalog,
                              cancelled=lambda: stops.cancelling(spec.run_id),
                              execute=lambda source, args: attempt(store, spec.run_id, source,
                                                                   args, None))
        return _graph(store, spec)

    return body


def _graph(store: Store, spec: JobSpec) -> dict[str, Any]:
    from frostline.graph.bodies import load_bodies
    from frostline.graph.durable import run_durable
    from frostline.graph.graph import load_graph

    graph = load_graph(str(spec.params["graph"]))
    made = load_bodies(str(spec.params["bodies"]))
    outcome = run_durable(store, spec.run_id, graph, made["bodies"], made.get("tools") or {},
                          model=made.get("model"))
    return dict(outcome.to_dict())
