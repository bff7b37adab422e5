"""Jobs on Procrastinate over the store's PostgreSQL database: attempts, repairs and durable
graph runs executed by `frostline worker` processes on any number of hosts.

`ProcrastinateQueue` submits jobs and reads the queue back (workers, depth, latency);
`WorkerHost` is the worker process; the jobs themselves are `frostline.embedded.jobs`, the same
ones the embedded default runs in the serving process.
"""

from __future__ import annotations

from frostline.worker.host import WorkerHost, WorkerSettings, open_worker_store
from frostline.worker.journal import JournaledStore, LockJournal
from frostline.worker.queue import ProcrastinateQueue
from frostline.worker.submit import submit_attempt, submit_graph

__all__ = ["JournaledStore", "LockJournal", "ProcrastinateQueue", "WorkerHost",
           "WorkerSettings", "open_worker_store", "submit_attempt", "submit_graph"]
