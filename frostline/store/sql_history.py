"""What a run leaves besides its prefix, as SQL (part of `SqlStore`): content-addressed
artifacts, certificates, race decisions and the append-only event log."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from frostline.contract.records import (
    Event,
)
from frostline.errors import DefinitionError, StoreUnavailable
from frostline.store.jsontext import json_text
from frostline.store.sqlbase import SqlBackend
from frostline.store.writes import AppendEvent, AppendEvents, Decide, PutCertificate, SqlForm

_ARTIFACT_REF = re.compile(r"sha256:[0-9a-f]{64}")


class HistoryQueries(SqlBackend):
    """The artifact, certificate, decision and event methods of the Store interface."""

    # artifacts ----------------------------------------------------------------------------------
    def put_artifact(self, data: bytes, mime: str, *, owner: str | None = None) -> str:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise DefinitionError(f"an artifact is bytes, not {type(data).__name__}")
        if not isinstance(mime, str) or "/" not in mime:
            raise DefinitionError(f"artifact mime type must look like 'image/png', not {mime!r}")
        blob = bytes(data)
        ref = "sha256:" + hashlib.sha256(blob).hexdigest()
        # Stored once: skip the durable write entirely when the content (and, for an owner,
        # the owner's claim on it) is already there.
        if self._read("put_artifact", lambda c: self._artifact_known(c, ref, owner)):
            return ref
        now = self._clock()

        def op(conn: Any) -> None:
            self._x(conn, "INSERT INTO artifacts (ref, mime, size, data, created_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (ref, mime, len(blob), blob, now))
            if owner is not None:
                self._x(conn, "INSERT INTO artifact_owners (ref, owner, created_at) "
                        "VALUES (?, ?, ?) ON CONFLICT DO NOTHING", (ref, owner, now))

        self._write("put_artifact", op)
        return ref

    def _artifact_known(self, conn: Any, ref: str, owner: str | None) -> bool:
        params: tuple[str, ...]
        if owner is None:
            sql, params = "SELECT 1 FROM artifacts WHERE ref = ?", (ref,)
        else:
            sql, params = ("SELECT 1 FROM artifact_owners WHERE ref = ? AND owner = ?",
                           (ref, owner))
        return bool(self._x(conn, sql, params).fetchall())

    def get_artifact(self, ref: str, *, owner: str | None = None) -> tuple[bytes, str] | None:
        if not isinstance(ref, str) or not _ARTIFACT_REF.fullmatch(ref):
            raise DefinitionError(f"malformed artifact ref {ref!r}; expected 'sha256:<64 hex>'")
        params: tuple[str, ...]
        if owner is None:
            sql, params = "SELECT data, mime FROM artifacts WHERE ref = ?", (ref,)
        else:  # another principal's artifact reads exactly like one that does not exist
            sql, params = ("SELECT a.data, a.mime FROM artifacts a JOIN artifact_owners o "
                           "ON o.ref = a.ref WHERE a.ref = ? AND o.owner = ?", (ref, owner))
        rows = self._read("get_artifact", lambda c: self._x(c, sql, params).fetchall())
        if not rows:
            return None
        data = bytes(rows[0][0])
        if "sha256:" + hashlib.sha256(data).hexdigest() != ref:
            # Fail closed rather than replay bytes that are not the committed artifact.
            raise StoreUnavailable(f"artifact {ref} is corrupted in the {self.backend_name} "
                                   "store: its bytes no longer match their hash",
                                   backend=self.backend_name, operation="get_artifact")
        return data, rows[0][1]

    # certificates, decisions, events ------------------------------------------------------------
    def put_certificate(self, run_id: str, attempt: int, certificate: dict[str, Any]) -> None:
        self._write("put_certificate", self.put_certificate_sql(
            PutCertificate(run_id, attempt, certificate), False).run)

    def put_certificate_sql(self, write: PutCertificate, piped: bool) -> SqlForm[None]:
        run_id, attempt = write.run_id, write.attempt
        body, now = self._j(write.certificate, "certificate"), self._clock()

        def op(conn: Any) -> None:
            self._insert_for_run(conn, run_id, "INSERT INTO certificates (run_id, attempt, body, "
                                 "created_at) VALUES (?, ?, ?, ?) RETURNING id",
                                 (run_id, attempt, body, now))

        return SqlForm(op)

    def latest_certificate(self, run_id: str) -> Any:
        # The attempt column orders them (the body says the same, and the verify checks the
        # body); among one attempt's certificates the last written wins.
        rows = self._read("latest_certificate", lambda c: self._x(
            c, "SELECT body FROM certificates WHERE run_id = ? ORDER BY attempt DESC, id DESC "
            "LIMIT 1", (run_id,)).fetchall())
        return self._json_value(rows[0][0]) if rows else None

    def list_certificates(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._read("list_certificates", lambda c: self._x(
            c, "SELECT body FROM certificates WHERE run_id = ? ORDER BY id", (run_id,)).fetchall())
        return [self._load(r[0]) for r in rows]

    def put_rebinding(self, run_id: str, attempt: int, rows: list[dict[str, str]]) -> None:
        now = self._clock()
        values = [(run_id, attempt, str(r["identity"]), str(r["bound_to"]), now) for r in rows]
        if len({v[2] for v in values}) != len(values):
            raise DefinitionError("a rebinding binds each new identity once",
                                  run_id=run_id, attempt=attempt)

        def op(conn: Any) -> None:
            for row in values:
                self._x(conn, "INSERT INTO rebindings (run_id, attempt, identity, bound_to, "
                        "created_at) VALUES (?, ?, ?, ?, ?)", row)

        self._write("put_rebinding", op)

    def list_rebindings(self, run_id: str, attempt: int | None = None) -> list[dict[str, Any]]:
        sql = "SELECT attempt, identity, bound_to FROM rebindings WHERE run_id = ?"
        params: tuple[Any, ...] = (run_id,)
        if attempt is not None:
            sql, params = sql + " AND attempt = ?", (run_id, attempt)
        rows = self._read("list_rebindings", lambda c: self._x(
            c, sql + " ORDER BY attempt, identity", params).fetchall())
        return [{"attempt": int(r[0]), "identity": r[1], "bound_to": r[2]} for r in rows]

    def decide(self, run_id: str, key: str, value: Any) -> Any:
        return self._write("decide", self.decide_sql(Decide(run_id, key, value), False).run)

    def decide_sql(self, write: Decide, piped: bool) -> SqlForm[Any]:
        run_id, key = write.run_id, write.key
        val, now = self._j(write.value, "decision"), self._clock()

        def op(conn: Any) -> Any:
            self._insert_for_run(conn, run_id, "INSERT INTO decisions (run_id, key, value, "
                                 "decided_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING "
                                 "RETURNING key", (run_id, key, val, now))
            rows = self._x(conn, "SELECT value FROM decisions WHERE run_id = ? AND key = ?",
                           (run_id, key)).fetchall()
            return self._load(rows[0][0])

        return SqlForm(op)

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int:
        return self._write("append_event", self.append_event_sql(
            AppendEvent(run_id, kind, data), False).run)

    def append_event_sql(self, write: AppendEvent, piped: bool) -> SqlForm[int]:
        run_id, kind = write.run_id, write.kind
        payload, now = self._j(write.data, "event"), self._clock()
        return SqlForm(lambda c: self._insert_event(c, run_id, kind, payload, now),
                       self._piped_append_event(run_id, kind, payload, now) if piped else None)

    def append_events(self, run_id: str, events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        if isinstance(events, list | tuple) and not events:
            return []  # nothing to make durable: no transaction
        return self._write("append_events", self.append_events_sql(
            AppendEvents(run_id, events), False).run)

    def append_events_sql(self, write: AppendEvents, piped: bool) -> SqlForm[list[int]]:
        run_id, events = write.run_id, write.events
        if not isinstance(events, list | tuple):
            raise DefinitionError("append_events takes a list of (kind, data) pairs")
        if not all(isinstance(e, list | tuple) and len(e) == 2 for e in events):
            raise DefinitionError("append_events takes (kind, data) pairs, e.g. "
                                  "[('replay', {'identity': 'main/#0@0'})]")
        rows = [(event_kind(kind), json_text(data, "event")) for kind, data in events]
        now = self._clock()

        def op(conn: Any) -> list[int]:
            self._before_event_insert(conn)
            return self._insert_events(conn, run_id, now, rows)

        # A graph's ledger batch and a broker's replay batch travel in the pipeline of the
        # attempt record they precede.
        return SqlForm(op, self._piped_append_events(run_id, now, rows) if piped else None)

    def event_cursor(self, run_id: str, position: int) -> tuple[int, int]:
        if position <= 0:
            return 0, 0

        def read(c: Any) -> tuple[int, int]:
            rows = self._x(c, "SELECT seq FROM events WHERE run_id = ? ORDER BY seq LIMIT 1 "
                           "OFFSET ?", (run_id, int(position) - 1)).fetchall()
            if rows:
                return int(rows[0][0]), int(position)
            last = self._x(c, "SELECT COUNT(*), MAX(seq) FROM events WHERE run_id = ?",
                           (run_id,)).fetchall()[0]
            return int(last[1] or 0), int(last[0])

        return self._read("event_cursor", read)

    def list_events(self, run_id: str, *, after: int = 0, limit: int = 10000) -> list[Event]:
        rows = self._read("list_events", lambda c: self._x(
            c, "SELECT seq, run_id, ts, kind, data FROM events WHERE run_id = ? AND seq > ? "
            "ORDER BY seq LIMIT ?", (run_id, int(after), int(limit))).fetchall())
        return [Event(seq=int(r[0]), run_id=r[1], ts=float(r[2]), kind=r[3],
                      data=self._load(r[4])) for r in rows]


def event_kind(kind: Any) -> str:
    if not isinstance(kind, str) or not kind:
        raise DefinitionError(f"an event kind is a non-empty string such as 'executed', "
                              f"not {kind!r}")
    return kind
