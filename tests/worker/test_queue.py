"""The jobs schema and submission, against a real PostgreSQL (no worker runs here)."""

from __future__ import annotations

import psycopg
import pytest

from frostline.embedded.jobs import JobSpec, job_state
from frostline.errors import AlreadyQueued
from frostline.worker import ProcrastinateQueue
from frostline.worker import schema as jobs_schema

pytestmark = pytest.mark.postgres

ECHO = 'async def orchestrate(ctx, args):\n    a = await ctx.run("echo", {"n": 1})\n    return a\n'


def _tables(url: str, schema: str) -> set[str]:
    base = url.partition("?")[0]
    with psycopg.connect(base) as conn:
        rows = conn.execute("SELECT table_name FROM information_schema.tables WHERE "
                            "table_schema = %s", (schema,)).fetchall()
    return {r[0] for r in rows}


def test_procrastinate_lives_in_its_own_schema_applied_once(pg_store, pg_store_url):
    queue = ProcrastinateQueue(pg_store)
    queue.close()
    again = ProcrastinateQueue(pg_store)  # a second opener finds the schema done
    again.close()
    store_schema = pg_store.schema_name
    jobs = _tables(pg_store_url, store_schema + "_jobs")
    assert {"procrastinate_jobs", "procrastinate_workers", "procrastinate_events",
            "frostline_workers", "frostline_job_schema"} <= jobs
    assert not any(t.startswith("procrastinate_") for t in _tables(pg_store_url, store_schema))
    with jobs_schema.connect(queue.conninfo) as conn:
        rows = conn.execute("SELECT procrastinate_migration, procrastinate_version FROM "
                            "frostline_job_schema").fetchall()
    newest = jobs_schema._migration_files()[-1].name
    import procrastinate

    assert rows == [(newest, procrastinate.__version__)]


def test_a_run_has_one_job_at_a_time(pg_store):
    queue = ProcrastinateQueue(pg_store)
    try:
        first = queue.submit(pg_store, JobSpec("attempt", "r1", {"source": ECHO}))
        assert first.attempt == 1 and first.queue_job_id is not None
        assert job_state(pg_store, "r1", first.ticket).state == "queued"
        with pytest.raises(AlreadyQueued) as waiting:
            queue.submit(pg_store, JobSpec("attempt", "r1", {"source": ECHO}))
        assert waiting.value.fields["job"] == first.ticket
        assert "waiting" in waiting.value.message
        # a worker took it: still refused while it runs
        with jobs_schema.connect(queue.conninfo) as conn:
            conn.execute("UPDATE procrastinate_jobs SET status = 'doing' WHERE id = %s",
                         (first.queue_job_id,))
        with pytest.raises(AlreadyQueued, match="running"):
            queue.submit(pg_store, JobSpec("repair", "r1", {"model": "openai:m"}))
        other = queue.submit(pg_store, JobSpec("attempt", "r2", {"source": ECHO}))
        assert other.ticket != first.ticket
        with jobs_schema.connect(queue.conninfo) as conn:
            conn.execute("UPDATE procrastinate_jobs SET status = 'succeeded' WHERE id = %s",
                         (first.queue_job_id,))
        again = queue.submit(pg_store, JobSpec("attempt", "r1", {"source": ECHO}))
        assert again.queue_job_id != first.queue_job_id
        with jobs_schema.connect(queue.conninfo) as conn:
            locks = conn.execute("SELECT lock, queueing_lock, queue_name FROM procrastinate_jobs "
                                 "WHERE id = %s", (again.queue_job_id,)).fetchone()
        assert locks == ("r1", "r1", "frostline")
        assert queue.stats().depth == {"queued": 2, "running": 0}
    finally:
        queue.close()


def test_a_sqlite_store_has_no_worker_queue(sqlite_store):
    from frostline.errors import StoreUnavailable

    with pytest.raises(StoreUnavailable, match="PostgreSQL"):
        ProcrastinateQueue(sqlite_store)
