"""`frostline.Client(url, token)`: the Python API's methods over a frostline HTTP server.

The same names and result types as `frostline.open(...)` (frostline.api), for a program that
talks to a `frostline serve` elsewhere::

    with frostline.Client("http://127.0.0.1:8000", token) as fl:
        attempt = fl.run(source, run_id="r1", args={"brief": "a trail shoe"})

`check` runs the checker here against the server's catalog (`GET /v1/catalog`: static, nothing
runs); `gate` asks the server's gate (`POST /v1/runs/{id}/gate`: spends and records nothing);
`run`, `repair` and `author` queue a job and wait for its outcome, `submit` queues an attempt
and returns its job at once; an error answer is raised as the `frostline.errors` class its code
names. The server's runs are the token's principal's.
"""

from __future__ import annotations

import time
from dataclasses import fields
from typing import Any, Self
from urllib.parse import quote

import httpx

from frostline.api import Authored
from frostline.capabilities.catalog import Capability, Catalog
from frostline.contract.verdict import GateVerdict
from frostline.embedded.jobs import TERMINAL, Submission
from frostline.errors import FrostlineError
from frostline.repair.author import DEFAULT_MAX_REWRITES, AuthorResult, Draft
from frostline.repair.feedback import RewriteFeedback
from frostline.repair.loop import RepairResult
from frostline.runtime.outcome import AttemptOutcome
from frostline.script.report import Report

MAX_WAIT_S = 300.0  # the server's bound on ?wait=


class Client:
    """The Python API over HTTP. `timeout_s` bounds how long a job is waited for."""

    def __init__(self, url: str, token: str, *, timeout_s: float = 600.0) -> None:
        self._http = httpx.Client(base_url=url.rstrip("/"),
                                  headers={"Authorization": f"Bearer {token}"},
                                  timeout=MAX_WAIT_S + 30)
        self._timeout_s = timeout_s
        self._catalog: Catalog | None = None

    def check(self, source: str, envelope: Any = None) -> Report:
        """The static checker's report, against the server's catalog."""
        from frostline.script import check

        if self._catalog is None:
            rows = self._json("GET", "/v1/catalog")["capabilities"]
            self._catalog = Catalog(Capability.from_dict(r) for r in rows)
        return check(source, envelope, catalog=self._catalog)

    def run(self, source: str, run_id: str, *, args: dict[str, Any] | None = None,
            envelope: dict[str, Any] | None = None) -> AttemptOutcome:
        """One attempt of `source` under `run_id` (a new run, or the next attempt of one)."""
        if self._exists(run_id):
            job = self._job("POST", f"/v1/runs/{quote(run_id)}/attempts",
                            {"script": source, "args": args})
        else:
            job = self._job("POST", "/v1/runs", {"script": source, "args": args or {},
                                                 "envelope": envelope or {}, "run_id": run_id})
        return outcome_of(job["outcome"])

    def gate(self, run_id: str, candidate: str, *,
             relocation: str | None = None) -> GateVerdict:
        """The server's gate on `candidate` as the run's next attempt (`.accepted`,
        `.counterexamples`, `.trace` after a dry replay); spends nothing, records nothing."""
        body = {"script": candidate, **({"relocation": relocation} if relocation else {})}
        verdict = self._json("POST", f"/v1/runs/{quote(run_id)}/gate", body)
        return GateVerdict.from_dict(verdict)

    def submit(self, source: str, run_id: str, *, args: dict[str, Any] | None = None,
               envelope: dict[str, Any] | None = None, key: str | None = None) -> Submission:
        """Queue `source` as the next attempt of `run_id` (a new run with `envelope`, or an
        existing one) and return its job at once (`.ticket`, `.attempt`, `.location`): the
        HTTP `frostline submit`. Checked first: a rejected script queues nothing. With an
        idempotency `key`, a second submission returns the first one's job."""
        headers = {"Idempotency-Key": key} if key else {}
        if self._exists(run_id):
            path, body = f"/v1/runs/{quote(run_id)}/attempts", {"script": source, "args": args}
        else:
            path, body = "/v1/runs", {"script": source, "args": args or {},
                                      "envelope": envelope or {}, "run_id": run_id}
        response = self._http.post(path, json=body, headers=headers)
        _raise_for(response)
        job = response.json()
        attempt, queue_id = job.get("attempt"), job.get("queue_job_id")
        # The HTTP answer does not carry the seq of its `job.queued` event: 0 here.
        return Submission(str(job["run_id"]), str(job["job"]), str(job["kind"]),
                          attempt if isinstance(attempt, int) else None, 0,
                          queue_id if isinstance(queue_id, int) else None)

    def repair(self, run_id: str, model: str, *, max_rewrites: int = 3) -> RepairResult:
        """The repair loop on the server, with a model endpoint configured there."""
        job = self._job("POST", f"/v1/runs/{quote(run_id)}/repair",
                        {"model": model, "max_rewrites": max_rewrites})
        out = job["outcome"]
        names = {f.name for f in fields(RewriteFeedback)}
        return RepairResult(out.get("accepted"),
                            [RewriteFeedback(**{k: v for k, v in r.items() if k in names})
                             for r in out.get("rewrites", [])], dict(out.get("usage_total", {})))

    def author(self, task: str, model: str, *, run_id: str | None = None,
               args: dict[str, Any] | None = None, envelope: dict[str, Any] | None = None,
               max_rewrites: int = DEFAULT_MAX_REWRITES) -> Authored:
        """A model configured on the server writes the script for `task`, run as the first
        attempt of a new run (`run_id`, or one the server names)."""
        body = {"task": task, "model": model, "args": args or {}, "envelope": envelope or {},
                "max_rewrites": max_rewrites, **({"run_id": run_id} if run_id else {})}
        job = self._job("POST", "/v1/runs", body)  # an author job (docs/authoring.md)
        outcome = job["outcome"]
        drafts = outcome["author"]
        names = {f.name for f in fields(Draft)}
        result = AuthorResult(drafts.get("accepted"),
                              [Draft(**{k: v for k, v in d.items() if k in names})
                               for d in drafts.get("rewrites", [])],
                              dict(drafts.get("usage_total", {})))
        execution = outcome_of(outcome) if isinstance(outcome.get("attempt"), int) else None
        return Authored(str(job.get("run_id") or run_id), result, execution)

    def show(self, run_id: str) -> dict[str, Any]:
        """The run as the server describes it (`GET /v1/runs/{id}`)."""
        return self._json("GET", f"/v1/runs/{quote(run_id)}")

    def approve(self, run_id: str, identity: str, *, approved: bool = True,
                reason: str | None = None) -> dict[str, Any]:
        """Approve (or reject) the approval the run waits for at `identity`."""
        return self._json("POST", f"/v1/runs/{quote(run_id)}/approvals/{quote(identity)}",
                          {"approved": approved, "reason": reason})

    def signal(self, run_id: str, name: str, data: Any) -> dict[str, Any]:
        """Send the event `name` with the JSON body `data` to the run."""
        return self._json("POST", f"/v1/runs/{quote(run_id)}/signals/{quote(name)}",
                          {"data": data})

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------------------------- HTTP
    def _exists(self, run_id: str) -> bool:
        response = self._http.get(f"/v1/runs/{quote(run_id)}")
        if response.status_code == 404:
            return False
        _raise_for(response)
        return True

    def _job(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._finish(self._request(method, path, body, wait=True))

    def _finish(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The job's end state: the answer when it ended within ?wait=, else polled."""
        deadline = time.monotonic() + self._timeout_s
        while answer.get("state") not in TERMINAL:
            if time.monotonic() > deadline:
                raise FrostlineError(f"the job {answer.get('job')} did not end within "
                                     f"{self._timeout_s} s; follow {answer.get('location')}",
                                     job=answer.get("job"))
            time.sleep(0.1)  # bounded by the deadline above
            answer = self._json("GET", str(answer["location"]))
        if not answer.get("outcome") and answer.get("error"):
            raise error_of(answer["error"])
        return answer

    def _request(self, method: str, path: str, body: Any = None, *,
                 wait: bool = False) -> dict[str, Any]:
        params = {"wait": MAX_WAIT_S} if wait else None
        response = self._http.request(method, path, json=body, params=params)
        _raise_for(response)
        data: dict[str, Any] = response.json()
        return data

    def _json(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        return self._request(method, path, body)


def outcome_of(data: dict[str, Any]) -> AttemptOutcome:
    """An attempt's JSON (`frostline run --json`) as the AttemptOutcome it came from."""
    names = {f.name for f in fields(AttemptOutcome)}
    given = {k: v for k, v in data.items() if k in names}
    if isinstance(given.get("gate"), dict):
        given["gate"] = GateVerdict.from_dict(given["gate"])
    return AttemptOutcome(**given)


def _raise_for(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        error = {"code": "http", "message": f"HTTP {response.status_code}: {response.text[:200]}"}
    raise error_of(error, status=response.status_code)


def error_of(error: Any, **extra: Any) -> FrostlineError:
    """The `frostline.errors` class an error object's code names (FrostlineError otherwise)."""
    if not isinstance(error, dict):
        return FrostlineError(str(error), **extra)
    code, message = error.get("code"), str(error.get("message", ""))
    rest = {k: v for k, v in error.items() if k not in ("code", "message", "type")}
    found: type[FrostlineError] = FrostlineError
    pending = [FrostlineError]
    while pending:
        cls = pending.pop()
        if cls.code == code:
            found = cls
            break
        pending.extend(cls.__subclasses__())
    # Built as a store rebuilds a persisted error: a subclass's own constructor may want more.
    err = found.__new__(found)
    FrostlineError.__init__(err, message, **rest, **extra)
    if found is FrostlineError and code:
        err.fields["code"] = code
    return err
