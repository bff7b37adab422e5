"""Issue 26 §2: the store's URL never reaches a client.

A store failure used to answer 503 with the driver's message and the store URL in it (its
`?password=` unmasked), and to write the same text into `job.requeued` events the run's owner
reads. Clients now get a generic message and a request id; the operator's log keeps the
detail, every secret-bearing part masked.
"""

from __future__ import annotations

import logging

import pytest

from frostline.embedded.jobs import JobSpec
from frostline.errors import StoreUnavailable
from frostline.store import open_store
from frostline.store.url import redact, redact_text
from frostline.worker.tasks import HostContext, _record_requeue
from tests.service.conftest import serving
from tests.store.helpers import Raw

SECRET = "hunter2secret"

ECHO = '''
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    return a["n"]
'''


@pytest.mark.parametrize(("url", "hidden"), [
    ("postgresql://u:pw1@h:5432/db", ["pw1"]),
    ("postgresql://h/db?password=pw2&sslmode=require", ["pw2"]),
    ("postgresql://h/db?sslpassword=pw3&sslkey=/keys/k.pem&passfile=/p/.pgpass", ["pw3", "k.pem",
                                                                                  ".pgpass"]),
    ("postgresql://h/db?application_name=x&my_api_token=pw4&AUTH_secret=pw5", ["pw4", "pw5"]),
    ("host=h dbname=db password=pw6 sslpassword='pw 7'", ["pw6", "pw 7"]),
])
def test_issue26_redact_masks_userinfo_and_secret_query_options(url, hidden):
    for text in (redact(url), redact_text(f"cannot open {url}: refused")):
        for secret in hidden:
            assert secret not in text, text
    assert "sslmode=require" in redact("postgresql://h/db?password=x&sslmode=require")
    assert redact("postgresql://u@h:5432/db") == "postgresql://u@h:5432/db"


def _where(url: str) -> list[str]:
    """What of `url` a client must never see: the secret, the host and port, the database or
    the file."""
    if url.startswith("sqlite"):
        return [url.split("///", 1)[1], "frostline.db"]
    return [SECRET, "127.0.0.1", "5432", "search_path", "postgresql://"]


def test_issue26_store_failure_answers_generic_503_with_request_id(store_url, caplog):
    url = store_url if store_url.startswith("sqlite") else f"{store_url}&password={SECRET}"
    with serving(open_store(url)) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": ECHO, "run_id": "r"},
                      params={"wait": 60}).status_code == 200
        raw = Raw(store_url)
        try:
            raw.execute("ALTER TABLE events RENAME TO events_elsewhere")
            with caplog.at_level(logging.ERROR, logger="frostline.service"):
                r = c.get("/v1/runs/r")
        finally:
            raw.execute("ALTER TABLE events_elsewhere RENAME TO events")
            raw.close()
    assert r.status_code == 503, r.text
    error = r.json()["error"]
    assert error["code"] == "store_unavailable"
    assert set(error) <= {"type", "code", "message", "operation", "outcome", "run_id",
                          "request_id"}
    for part in _where(url):
        assert part not in r.text, (part, r.text)
    # the operator's log has the detail under the same request id, with the secret masked
    logged = [rec.getMessage() for rec in caplog.records if error["request_id"] in
              rec.getMessage()]
    assert logged and "events" in logged[0]
    assert SECRET not in caplog.text


def test_issue26_requeued_event_keeps_the_store_detail_out(store_url, caplog):
    """A worker hands a job back after a store failure: the `job.requeued` event the run's
    owner reads over HTTP says the store failed, not where it lives."""
    url = store_url if store_url.startswith("sqlite") else f"{store_url}&password={SECRET}"
    with serving(open_store(url)) as live, live.client(live.alice) as c:
        assert c.post("/v1/runs", json={"script": ECHO, "run_id": "r"},
                      params={"wait": 60}).status_code == 200
        key = live.store.find_run("alice", "r").run_id
        detail = StoreUnavailable(f"cannot queue a job at {url}: connection to server at "
                                  f"\"127.0.0.1\", port 5432 failed", operation="enqueue")
        host = HostContext(store=live.store, body=lambda *_: {}, interrupts=None,  # type: ignore[arg-type]
                           name="w1")
        with caplog.at_level(logging.WARNING, logger="frostline.worker"):
            _record_requeue(host, JobSpec("attempt", key, {}), detail)
        r = c.get("/v1/runs/r/events", params={"follow": "false"})
    assert r.status_code == 200 and "job.requeued" in r.text
    for part in _where(url):
        assert part not in r.text, (part, r.text)
    assert "the store failed during enqueue" in r.text
    assert "127.0.0.1" in caplog.text and SECRET not in caplog.text
