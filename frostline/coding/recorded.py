"""An A/B report kept in the store as a run of kind "ab", so the API and the UI can show it
beside the runs it compares.

The run has one attempt per driver invocation: its source is the driver's configuration, its
result the report (the `arms` and `decisions` of `frostline ab --json`) and the files it wrote
(markdown, JSON, figures), each stored as an artifact of the run's owner and named in the
result by reference.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from frostline.contract.records import run_key
from frostline.errors import ReportInvalid, RunKindMismatch
from frostline.store.base import Store

KIND = "ab"
MIME = {".png": "image/png", ".svg": "image/svg+xml", ".md": "text/markdown",
        ".json": "application/json"}


def record_report(store: Store, name: str, report: Mapping[str, Any],
                  files: Mapping[str, bytes], *, config: Mapping[str, Any] | None = None,
                  owner: str | None = None) -> str:
    """Record `report` and `files` (file name -> bytes) as a new attempt of A/B run `name` of
    `owner`; returns the run's store key.

    Raises:
        FrostlineError: `name` is taken by a run that is not an A/B report.
    """
    if not isinstance(report.get("arms"), Mapping):
        raise ReportInvalid("an A/B report needs an 'arms' object; nothing was recorded")
    key = run_key(owner, name)
    run = store.get_run(key)
    if run is None:
        store.create_run(name, {}, kind=KIND, owner=owner)
    elif run.kind != KIND:
        raise RunKindMismatch(f"run {name!r} is a {run.kind} run, not an A/B report; pick "
                              "another name", run_id=name, kind=run.kind)
    listed = []
    for file_name, data in sorted(files.items()):
        mime = MIME.get(file_name[file_name.rfind("."):].lower(), "application/octet-stream")
        listed.append({"name": file_name, "mime": mime,
                       "artifact": store.put_artifact(data, mime, owner=owner)})
    source = json.dumps(dict(config or {}), sort_keys=True, indent=2)
    attempt = store.start_attempt(key, source=source, annotated="", report={"kind": KIND})
    store.finish_attempt(key, attempt.number, status="succeeded",
                         result={"report": dict(report), "files": listed})
    store.set_run_status(key, "succeeded")
    return key


def latest_report(store: Store, key: str) -> dict[str, Any] | None:
    """The result of the A/B run's latest attempt: ``{"report", "files"}``, or None."""
    attempts = [a for a in store.list_attempts(key) if a.status == "succeeded"]
    return dict(attempts[-1].result) if attempts and isinstance(attempts[-1].result, dict) else None


__all__ = ["KIND", "latest_report", "record_report"]
