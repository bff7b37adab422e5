"""Keeping a worker's jobs live when the database fails under it (issue 31).

Procrastinate's worker loses track of a job in four places when its connections are ended
(a `pg_terminate_backend` sweep, a failover, a restarted server):

- saving a job's status (finished, or handed back for a retry) fails: the exception is lost
  in a task nobody awaits ("Task exception was never retrieved"), the job stays `doing` under a
  worker that keeps heart-beating, so no stall detector ever takes it back;
- fetching a job fails after the database committed it: the job is `doing` under this worker,
  which never learnt of it;
- a failed heartbeat or a broken listener ends the worker (and its heartbeats) while it still
  waits for its running jobs.

`LiveWorker` retries a status save until it is saved; it gives up only when the watchdog says the
database is gone, and then says so: the host re-registers when the database answers again,
which makes everything the old registration held stalled, and the stall detector takes it back.
After a failed fetch, and every few seconds, the worker compares the jobs the queue says it holds
with the jobs it runs, and takes back any it does not run. Heartbeats and the listener retry
their query instead of stopping the worker.

Taking a job back (`take_back`) never hands back a finished job: when the run's events hold the
job's `job.finished` (or `job.interrupted`), the job is marked done; otherwise it goes back to
the queue, but only while it is still held by the worker it was found under (two stall
detectors, or a detector and the job's next taker, cannot both act on it).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import psycopg
from procrastinate.worker import Worker

from frostline.embedded.jobs import job_state
from frostline.embedded.tickets import job_stream
from frostline.errors import StoreUnavailable
from frostline.store.base import Store

log = logging.getLogger("frostline.worker")

# Between two retries of a failed query: short at first (a sweep is over at once), then 1 s.
FIRST_PAUSE_S = 0.05
MAX_PAUSE_S = 1.0

# Each statement acts only while the job is still `doing` under the worker it was found under
# (NULL: a deleted registration); the row lock makes a concurrent taker wait, then re-check.
_HELD = ("SELECT id FROM procrastinate_jobs WHERE id = %(job_id)s AND status = 'doing' AND "
         "worker_id IS NOT DISTINCT FROM %(worker_id)s FOR UPDATE")
_REQUEUE = (f"SELECT procrastinate_retry_job_v2(id, now(), NULL, NULL, NULL) FROM ({_HELD}) "
            "AS held")
_MARK_DONE = ("SELECT procrastinate_finish_job_v1(id, 'succeeded'::procrastinate_job_status, "
              f"false) FROM ({_HELD}) AS held")
_HOLDS = ("SELECT id, args, lock FROM procrastinate_jobs WHERE status = 'doing' AND "
          "worker_id = %(w)s")
_BEAT = ("UPDATE procrastinate_workers SET last_heartbeat = now() WHERE id = %(w)s "
         "RETURNING id")


def transient(exc: BaseException) -> bool:
    """Whether `exc` is a lost or refused connection (worth retrying), not an answer."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, psycopg.OperationalError | psycopg.InterfaceError | OSError |
                      TimeoutError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@dataclass
class Keeper:
    """What the worker needs from its host: the store (job events), its name, a way to say
    things, whether the watchdog has lost the database, and a way to give up the session."""

    store: Store
    name: str
    say: Callable[[str], None]
    lost: Callable[[], bool]
    give_up: Callable[[str], None]


async def take_back(app: Any, keeper: Keeper, job_id: int, worker_id: int | None,
                    args: dict[str, Any] | None, why: str) -> str:
    """Take back job `job_id`, found `doing` under `worker_id`: 'done' when its run recorded
    the job's end (marked succeeded, never run again), 'requeued', 'moved' when it is no longer
    held there (someone else acted first), or 'unknown' when the store cannot say whether it
    finished (left alone until the next check)."""
    spec = (args or {}).get("job") or {}
    run_id, ticket = spec.get("run_id"), spec.get("ticket")
    finished = False
    if isinstance(run_id, str) and isinstance(ticket, str):
        try:
            state = await asyncio.to_thread(job_state, keeper.store, run_id, ticket)
        except StoreUnavailable as exc:
            log.warning("job %s: cannot tell whether it finished (%s); not taken back yet",
                        job_id, exc.message)
            return "unknown"
        finished = state is not None and state.done
    query = _MARK_DONE if finished else _REQUEUE
    rows = await app.connector.execute_query_all_async(query, job_id=job_id,
                                                       worker_id=worker_id)
    if not rows:
        return "moved"
    if finished:
        keeper.say(f"frostline worker {keeper.name}: job {job_id} of run {run_id} had "
                   f"finished ({why}); marked done, not run again")
        return "done"
    keeper.say(f"frostline worker {keeper.name}: requeued job {job_id} of run {run_id} ({why})")
    if isinstance(run_id, str) and isinstance(ticket, str):
        await asyncio.to_thread(_requeued_event, keeper, run_id, ticket, spec.get("kind"), why)
    return "requeued"


def _requeued_event(keeper: Keeper, run_id: str, ticket: str, kind: Any, why: str) -> None:
    try:
        keeper.store.append_event(job_stream(run_id, ticket), "job.requeued", {
            "job": ticket, "kind": kind, "worker": keeper.name, "reason": why})
    except StoreUnavailable as exc:  # the queue already has it back; the event is a courtesy
        log.warning("job %s: requeued, but the event was not stored: %s", ticket, exc.message)


class LiveWorker(Worker):
    """Procrastinate's worker, kept live under database faults (see the module docstring)."""

    def __init__(self, app: Any, *, keeper: Keeper, check_every_s: float,
                 **options: Any) -> None:
        super().__init__(app, **options)
        self.keeper = keeper
        self.check_every_s = check_every_s
        self._check_held = False
        self._next_check = 0.0

    # saving a job's status --------------------------------------------------------------------
    async def _persist_job_status(self, job: Any, status: Any, retry_decision: Any,
                                  context: Any, job_result: Any) -> None:
        pause, failed_at = FIRST_PAUSE_S, None
        loop = asyncio.get_running_loop()
        what = "handed back" if retry_decision else status.value
        while True:
            try:
                await super()._persist_job_status(job, status, retry_decision, context,
                                                  job_result)
            except Exception as exc:
                if not transient(exc):  # an answer: the job is no longer this worker's
                    self.keeper.say(f"frostline worker {self.keeper.name}: job {job.id} of run "
                                    f"{job.lock} ({what}) was not saved: {exc}; it is no "
                                    "longer held here")
                    return
                if failed_at is None:
                    failed_at = loop.time()
                    self.keeper.say(f"frostline worker {self.keeper.name}: could not save job "
                                    f"{job.id} of run {job.lock} as {what} ({exc}); retrying "
                                    "until it is saved")
                if self.keeper.lost():
                    self.keeper.say(f"frostline worker {self.keeper.name}: cannot tell the "
                                    f"database that job {job.id} of run {job.lock} is {what}: "
                                    "the database is gone; the job is taken back when this "
                                    "worker registers again")
                    return
                await asyncio.sleep(pause)
                pause = min(pause * 2, MAX_PAUSE_S)
                continue
            if failed_at is not None:
                self.keeper.say(f"frostline worker {self.keeper.name}: saved job {job.id} of "
                                f"run {job.lock} as {what} after "
                                f"{loop.time() - failed_at:.1f}s of retries")
            return

    # fetching, and what this worker holds -----------------------------------------------------
    async def _fetch_and_process_jobs(self) -> None:
        try:
            await super()._fetch_and_process_jobs()  # type: ignore[no-untyped-call]
        except Exception as exc:
            if not transient(exc):
                raise
            # The database may have handed this worker a job whose reply was lost.
            self.keeper.say(f"frostline worker {self.keeper.name}: fetching a job failed "
                            f"({exc}); it cannot tell what it holds, so it checks")
            self._check_held = True
        now = asyncio.get_running_loop().time()
        if self._check_held or now >= self._next_check:
            self._next_check = now + self.check_every_s
            try:
                await self._take_back_unrun()
                self._check_held = False
            except Exception as exc:
                if not transient(exc):
                    raise
                log.warning("worker %s: could not check what it holds: %s", self.keeper.name,
                            exc)

    async def _take_back_unrun(self) -> None:
        """Take back every job the queue says this worker holds and it does not run. Called
        from the fetch loop, so no fetch is in flight: a job fetched here is already in
        `_running_jobs`."""
        if self.worker_id is None:
            return
        rows = await self.app.connector.execute_query_all_async(_HOLDS, w=self.worker_id)
        running = {c.job.id for c in self._running_jobs.values()}
        for row in rows:
            if row["id"] not in running:
                await take_back(self.app, self.keeper, row["id"], self.worker_id, row["args"],
                                f"held by worker {self.keeper.name}, which does not run it")

    # heartbeats and the listener --------------------------------------------------------------
    async def _update_heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.update_heartbeat_interval)
            try:
                rows = await self.app.connector.execute_query_all_async(_BEAT, w=self.worker_id)
            except Exception as exc:
                if not transient(exc):
                    raise
                log.warning("worker %s: heartbeat failed (%s); retrying", self.keeper.name, exc)
                continue
            if not rows:  # pruned as stalled: its jobs are someone else's to take back now
                self.keeper.give_up("its registration was removed (it was taken for stalled)")
                return

    def _start_side_tasks(self) -> list[asyncio.Task[Any]]:
        tasks = [asyncio.create_task(self._update_heartbeat(), name="update_heartbeats"),
                 asyncio.create_task(self._periodic_deferrer(),  # type: ignore[no-untyped-call]
                                     name="deferrer"),
                 asyncio.create_task(self._poll_jobs_to_abort(),  # type: ignore[no-untyped-call]
                                     name="poll_jobs_to_abort")]
        if self.listen_notify:
            tasks.append(asyncio.create_task(self._listen(), name="listener"))
        return tasks

    async def _listen(self) -> None:
        pause, loop = FIRST_PAUSE_S, asyncio.get_running_loop()
        while True:
            began = loop.time()
            try:
                await self.app.job_manager.listen_for_jobs(
                    on_notification=self._handle_notification, queues=self.queues)
                return  # it could not start listening: polling alone finds the jobs
            except Exception as exc:
                if not transient(exc):
                    raise
                if loop.time() - began > MAX_PAUSE_S:  # it had listened: a new outage
                    pause = FIRST_PAUSE_S
                if pause == FIRST_PAUSE_S:  # once per outage, not once per retry
                    log.warning("worker %s: the job listener lost its connection (%s); "
                                "listening again", self.keeper.name, exc)
                self._new_job_event.set()  # a notification may have been missed: fetch now
                await asyncio.sleep(pause)
                pause = min(pause * 2, MAX_PAUSE_S)
