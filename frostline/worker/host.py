"""`frostline worker`: one process that takes jobs from the store's queue and runs them here,
with this host's sandbox, providers and credentials.

Three loops share one event loop; jobs run on threads of their own:

- Procrastinate's worker fetches jobs (at most `concurrency` at a time), heartbeats, and hands
  each job to `frostline.job`.
- A database watchdog connects every `ping_s`. The moment the database stops answering, the
  worker stops dispatching: it takes no more jobs, and stops the attempts it runs (no paid call
  leaves without its attempt record, and one already dispatched completes and commits if the
  store still takes the commit); their jobs are handed back. When the database answers again,
  the worker deletes its old registration, which makes the jobs it held stalled, requeues them,
  and starts over.
- Stalled-job detection: every `heartbeat_s`, jobs held by workers whose heartbeat is older
  than `stalled_after_s` (a host that was killed, or cut off) go back to the queue, and another
  worker runs them under the usual crash rules: committed calls replay, a crashed call on a
  provider with idempotency keys is retried with its key, any other crashed paid call leaves
  the run unresolved until an operator reconciles it. A job whose run recorded its end is
  marked done instead, never run again; registrations silent for `forget_after_s` are deleted.
- Database faults inside the worker (a status that could not be saved, a fetch whose reply was
  lost, a broken heartbeat or listener) are `frostline.worker.liveness`'s: nothing stays
  `doing` under a worker that does not run it.

SIGTERM (or SIGINT) stops taking jobs; running jobs get `grace_s` to finish, then their
attempts are stopped and handed back. A second signal hands back at once. The intervals are
chosen so that a worker cut off from the database lets go of its runs (watchdog, then at most
the TCP user timeout) well before the others declare it stalled.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, cast

from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import JobBody, JobSpec
from frostline.store.base import Store
from frostline.store.url import redact
from frostline.worker import schema
from frostline.worker.journal import JournaledStore, LockJournal
from frostline.worker.liveness import Keeper, LiveWorker, take_back
from frostline.worker.queue import ProcrastinateQueue
from frostline.worker.tasks import CONTEXT_KEY, QUEUE, HostContext, make_app

log = logging.getLogger("frostline.worker")
# libpq's shortest connect timeout: a dead database is noticed within ping_s + 2 seconds.
PING_TIMEOUT_S = 2


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker runs; the defaults suit production, tests shorten the intervals."""

    concurrency: int = 4
    queues: tuple[str, ...] = (QUEUE,)
    name: str = ""
    heartbeat_s: float = 5.0
    stalled_after_s: float = 30.0
    grace_s: float = 60.0
    ping_s: float = 1.0
    lock_journal: str | None = None
    # A registration silent this long is deleted (listed as stalled until then).
    forget_after_s: float = 300.0
    # A due timer's resume waits while its owner has more jobs than this (see tasks)
    resume_limit: int | None = None

    def label(self) -> str:
        return self.name or f"{schema.host_name()}:{os.getpid()}"


def open_worker_store(url: str) -> Store:
    """The PostgreSQL store at `url`, on connections that notice a dead link within seconds."""
    from frostline.store.postgres import PostgresStore

    return PostgresStore(schema.with_link_params(url))


class WorkerHost:
    """A worker process over the PostgreSQL store at `store_url`.

    Usage::

        host = WorkerHost(url, lambda stops: host_body(providers, runner, interrupts=stops),
                          sandbox="bubblewrap sandbox", settings=WorkerSettings(concurrency=4))
        sys.exit(host.run())
    """

    def __init__(self, store: Store, make_body: Callable[[Interrupts], JobBody], *,
                 sandbox: str, settings: WorkerSettings = WorkerSettings(),
                 say: Callable[[str], None] = print) -> None:
        store_schema = str(getattr(store, "schema_name", ""))
        if not store_schema:
            raise ValueError("a worker needs a PostgreSQL store (postgresql://…)")
        self.settings = settings
        self.name = settings.label()
        self.sandbox = sandbox
        self.say = say
        self.store_url = store.url
        self.jobs_schema = schema.jobs_schema_of(store_schema)
        self.conninfo = schema.ensure_jobs_schema(store.url, store_schema)
        self.interrupts = Interrupts()
        run_store: Any = store
        if settings.lock_journal:
            run_store = JournaledStore(store, LockJournal(settings.lock_journal, self.name))
        self._queue_store = store  # the PostgreSQL store itself (its schema names the jobs')
        self._scheduler: ProcrastinateQueue | None = None
        self.context = HostContext(cast(Store, run_store), make_body(self.interrupts),
                                   self.interrupts, self.name, schedule=self._schedule,
                                   resume_limit=settings.resume_limit, jobs=self._jobs_of)
        self.health = (f"frostline worker {self.name}: store {redact(store.url.split('?')[0])} (schema "
                       f"{store_schema}), jobs schema {self.jobs_schema}, queues "
                       f"{', '.join(settings.queues)}, concurrency {settings.concurrency}, "
                       f"sandbox: {sandbox}")
        self._worker: LiveWorker | None = None
        self._stopping = False
        self._lost = False
        self._signals = 0
        self._old_ids: list[int] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def _schedule(self, spec: JobSpec, at: float) -> object:
        """Queue `spec` to start at `at` (a waiting run's resume when its timer is due)."""
        if self._scheduler is None:  # job threads share one; its pool is thread-safe
            self._scheduler = ProcrastinateQueue(self._queue_store)
        return self._scheduler.schedule(self.context.store, spec, at)

    def _jobs_of(self, owner: str) -> int:
        """Jobs of `owner` waiting (due) or running, on every worker of this database."""
        if self._scheduler is None:
            self._scheduler = ProcrastinateQueue(self._queue_store)
        return self._scheduler.owned_jobs(owner)

    def run(self, *, handle_signals: bool = True) -> int:
        """Work until SIGTERM or SIGINT (or `stop()`); 0 after a graceful stop."""
        return asyncio.run(self._main(handle_signals))

    def stop(self) -> None:
        """Ask a running worker to stop, as SIGTERM does (from any thread)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._on_signal)

    async def _main(self, handle_signals: bool) -> int:
        loop = self._loop = asyncio.get_running_loop()
        # Jobs are blocking calls on threads: one per concurrent job, plus Procrastinate's own.
        loop.set_default_executor(ThreadPoolExecutor(self.settings.concurrency + 4,
                                                     thread_name_prefix="frostline-job"))
        if handle_signals:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, self._on_signal)
        watchdog = asyncio.create_task(self._watch(), name="database watchdog")
        self.say(self.health)
        try:
            while not self._stopping:
                if self._lost:
                    await asyncio.sleep(self.settings.ping_s)
                    continue
                await self._session()
        finally:
            watchdog.cancel()
        self.say(f"frostline worker {self.name}: stopped")
        return 0

    async def _session(self) -> None:
        """One registration with Procrastinate, until a stop or a lost database ends it."""
        s = self.settings
        app = make_app(self.conninfo, pool_size=s.concurrency + 3)
        try:
            async with app.open_async():
                await self._hand_back_previous(app)
                worker = LiveWorker(app, keeper=self._keeper(), check_every_s=s.heartbeat_s,
                                    queues=list(s.queues), name=self.name,
                                    concurrency=s.concurrency, install_signal_handlers=False,
                                    update_heartbeat_interval=s.heartbeat_s,
                                    stalled_worker_timeout=s.stalled_after_s,
                                    additional_context={CONTEXT_KEY: self.context},
                                    fetch_job_polling_interval=min(5.0, s.heartbeat_s))
                self._worker = worker
                if self._stopping:
                    return
                sides = [asyncio.create_task(self._register(app, worker)),
                         asyncio.create_task(self._requeue_stalled(app))]
                try:
                    await worker.run()  # type: ignore[no-untyped-call]
                finally:
                    for task in sides:
                        task.cancel()
                    self._worker = None
        except Exception as exc:  # the database went away under Procrastinate
            if not self._lost:
                log.warning("worker %s: the job session ended: %s", self.name, exc)
                self._lose(f"the job session ended: {exc}")

    def _keeper(self) -> Keeper:
        return Keeper(self.context.store, self.name, self.say, lambda: self._lost,
                      lambda why: self._lose(why) if not self._lost else None)

    # the database watchdog ------------------------------------------------------------------
    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.settings.ping_s)
            ok = await asyncio.to_thread(self._ping)
            if not ok and not self._lost:
                self._lose("the database stopped answering")
            elif ok and self._lost:
                self._lost = False
                self.interrupts.resume()
                self.say(f"frostline worker {self.name}: the database answers again; "
                         "handing back what it held and taking jobs again")

    def _ping(self) -> bool:
        try:
            with schema.connect(self.conninfo, timeout_s=PING_TIMEOUT_S) as conn:
                conn.execute("SELECT 1")
            return True
        except Exception:  # any failure to reach the database is a lost database
            return False

    def _lose(self, why: str) -> None:
        self._lost = True
        stopped = self.interrupts.interrupt_all("lost the database")
        self.say(f"frostline worker {self.name}: {why}; stopped dispatching ({stopped} "
                 "attempt(s) stopped, their jobs handed back)")
        if self._worker is not None:
            self._worker.stop()  # type: ignore[no-untyped-call]

    # registration, hand-back, stalled jobs -------------------------------------------------
    async def _register(self, app: Any, worker: LiveWorker) -> None:
        while worker.worker_id is None:
            await asyncio.sleep(0.02)
        self._old_ids.append(worker.worker_id)
        s = self.settings
        await app.connector.execute_query_async(
            "INSERT INTO frostline_workers (worker_id, name, host, pid, concurrency, queues, "
            "sandbox, started_at, stalled_after) VALUES (%(id)s, %(name)s, %(host)s, %(pid)s, "
            "%(concurrency)s, %(queues)s, %(sandbox)s, extract(epoch FROM now()), "
            "%(stalled_after)s) ON CONFLICT DO NOTHING",
            id=worker.worker_id, name=self.name, host=schema.host_name(), pid=os.getpid(),
            concurrency=s.concurrency, queues=",".join(s.queues), sandbox=self.sandbox,
            stalled_after=s.stalled_after_s)
        log.info("worker %s registered as %d", self.name, worker.worker_id)

    async def _hand_back_previous(self, app: Any) -> None:
        """Delete the registrations of this process's earlier sessions: the jobs they still
        hold become stalled, and go back to the queue now."""
        if not self._old_ids:
            return
        for old in self._old_ids:
            await app.job_manager.unregister_worker(old)
        self._old_ids.clear()
        await self._requeue_once(app)

    async def _requeue_stalled(self, app: Any) -> None:
        while True:
            await asyncio.sleep(self.settings.heartbeat_s)
            try:
                await self._requeue_once(app)
            except Exception as exc:  # the session's own failure handling takes over
                log.warning("worker %s: stalled-job check failed: %s", self.name, exc)

    async def _requeue_once(self, app: Any) -> None:
        """Take back the jobs of stalled workers (a finished one is marked done, never run
        again), then forget registrations silent for longer than `forget_after_s`."""
        stalled = await app.job_manager.get_stalled_jobs(
            seconds_since_heartbeat=self.settings.stalled_after_s)
        keeper = self._keeper()
        for job in stalled:
            why = (f"worker {job.worker_id} stopped sending heartbeats" if job.worker_id
                   else "its worker is gone")
            await take_back(app, keeper, job.id, job.worker_id, job.task_kwargs, why)
        after = max(self.settings.forget_after_s, self.settings.stalled_after_s)
        forgotten = await app.job_manager.prune_stalled_workers(after)
        if forgotten:
            self.say(f"frostline worker {self.name}: forgot worker(s) "
                     f"{', '.join(map(str, forgotten))}, silent for more than {after:g}s")

    # signals --------------------------------------------------------------------------------
    def _on_signal(self) -> None:
        self._signals += 1
        loop = asyncio.get_running_loop()
        if self._signals == 1:
            self._stopping = True
            running = len(self.interrupts)
            self.say(f"frostline worker {self.name}: stopping; {running} running attempt(s) "
                     f"get {self.settings.grace_s:g}s to finish, then are handed back")
            if self._worker is not None:
                self._worker.stop()  # type: ignore[no-untyped-call]
            loop.call_later(self.settings.grace_s, self._hand_back_running, "grace period over")
        else:
            self._hand_back_running("second signal")

    def _hand_back_running(self, why: str) -> None:
        stopped = self.interrupts.interrupt_all(f"shutdown ({why})")
        if stopped:
            self.say(f"frostline worker {self.name}: {why}: handed back {stopped} attempt(s)")
