"""Job tickets, and where each job's life is recorded (its stream).

A ticket names one job: `j-…` for an attempt, a repair or a graph run, `a-…` for an author job;
one that carries a client's idempotency key is derived from it (`ticket_for`), so a retried
submission finds the job it queued. A job's events (`job.queued` … `job.finished`) are on
the run's own events, except an author job's, which are on a stream of their own,
`author_stream(run)`: that run exists only once a draft is accepted, and a failed authoring
leaves the run's events as if it never was, while its job stays readable by its ticket.
`job_stream` says where a ticket's events are.
"""

from __future__ import annotations

import hashlib
import secrets

from frostline.errors import DefinitionError

AUTHOR_TICKET = "a-"  # the tickets of author jobs, whose events are on their own stream
AUTHOR_STREAM = "~author/"  # no run key starts with "~" (a name starts with a letter or digit)


def new_ticket(kind: str = "attempt") -> str:
    return _prefix(kind) + secrets.token_hex(8)


def ticket_for(run_id: str, key: str, kind: str = "attempt") -> str:
    """The ticket of a submission that carries a client's idempotency key: the same key on the
    same run is the same ticket, so a retried submission finds the job it queued."""
    if not key or len(key) > 200:
        raise DefinitionError("an idempotency key is 1 to 200 characters, e.g. a UUID the "
                              "client chose for this submission")
    return _prefix(kind) + hashlib.sha256(f"{run_id}\0{key}".encode()).hexdigest()[:16]


def _prefix(kind: str) -> str:
    return AUTHOR_TICKET if kind == "author" else "j-"


def author_stream(run_id: str) -> str:
    """The events key of the author jobs of the run `run_id` (its store key)."""
    return AUTHOR_STREAM + run_id


def job_stream(run_id: str, ticket: str) -> str:
    """Where the events of job `ticket` of `run_id` are: an author job's on its own stream,
    any other job's on the run's."""
    return author_stream(run_id) if ticket.startswith(AUTHOR_TICKET) else run_id
