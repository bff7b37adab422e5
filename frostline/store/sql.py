"""The Store interface in SQL, shared by the SQLite and PostgreSQL backends.

Every query is written once here with ``?`` placeholders, on top of `SqlBackend` (connections,
the group-commit writer, the fail-closed boundary); a backend supplies the dialect. Writes are
closures that the writer runs inside a shared transaction; everything they need from the
caller (JSON text, timestamps) is computed before they are queued, so a bad value fails in the
caller's thread and a rerun of the closure after a rollback writes the same thing.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from typing import Any

from frostline.contract.identity import Identity, parse_path, path_text
from frostline.contract.records import (
    AttemptRecord,
    CallRecord,
    CallStatus,
    Event,
    RunRecord,
    SlotRecord,
)
from frostline.errors import DefinitionError, FrostlineError, RunNotFound, StoreUnavailable
from frostline.store.jsontext import json_text
from frostline.store.sqlbase import SqlBackend, no_run

_RUN_COLS = "run_id, envelope, status, owner, kind, created_at"
_ATTEMPT_COLS = ("run_id, number, source, source_digest, annotated, report, status, gate, "
                 "invoked, orphans, result, error, stats, started_at, finished_at, args")
SLOT_COLUMNS = ("run_id, site, path, occurrence, capability, digest, result, usage, attempt, "
                "committed_at")
_CALL_COLS = ("call_id, run_id, site, path, occurrence, capability, digest, attempt, status, "
              "idempotency_key, error, created_at, updated_at")
_ARTIFACT_REF = re.compile(r"sha256:[0-9a-f]{64}")
RUN_KINDS = ("script", "graph")


class SqlStore(SqlBackend):
    """The Store methods as SQL; `SQLiteStore` and `PostgresStore` add the dialect."""

    # runs ---------------------------------------------------------------------------------------
    def create_run(self, run_id: str, envelope: dict[str, Any], *, owner: str | None = None,
                   kind: str = "script") -> RunRecord:
        _check_run_id(run_id)
        if kind not in RUN_KINDS:
            raise DefinitionError(f"run kind must be one of {', '.join(RUN_KINDS)}, not {kind!r}")
        if not isinstance(envelope, dict):
            raise DefinitionError("a run's envelope is a JSON object (a dict)")
        env = self._j(envelope, "envelope")
        now = self._clock()

        def op(conn: Any) -> RunRecord:
            rows = self._x(conn, "INSERT INTO runs (run_id, envelope, status, owner, kind, "
                           "created_at, updated_at) VALUES (?, ?, 'created', ?, ?, ?, ?) "
                           f"ON CONFLICT DO NOTHING RETURNING {_RUN_COLS}",
                           (run_id, env, owner, kind, now, now)).fetchall()
            if not rows:
                raise FrostlineError(f"run {run_id!r} already exists; choose another run id",
                                     run_id=run_id)
            return self._run(rows[0])

        return self._write("create_run", op)

    def get_run(self, run_id: str) -> RunRecord | None:
        rows = self._read("get_run", lambda c: self._x(
            c, f"SELECT {_RUN_COLS} FROM runs WHERE run_id = ?", (run_id,)).fetchall())
        return self._run(rows[0]) if rows else None

    def list_runs(self, *, owner: str | None = None, limit: int = 100) -> list[RunRecord]:
        where, params = ("WHERE owner = ? ", (owner,)) if owner is not None else ("", ())
        rows = self._read("list_runs", lambda c: self._x(
            c, f"SELECT {_RUN_COLS} FROM runs {where}ORDER BY created_at DESC, run_id LIMIT ?",
            (*params, int(limit))).fetchall())
        return [self._run(r) for r in rows]

    def set_run_status(self, run_id: str, status: str) -> None:
        now = self._clock()

        def op(conn: Any) -> None:
            cur = self._x(conn, "UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?",
                          (status, now, run_id))
            if cur.rowcount == 0:
                raise no_run(run_id)

        self._write("set_run_status", op)

    def _run(self, r: Any) -> RunRecord:
        return RunRecord(run_id=r[0], envelope=self._load(r[1]), status=r[2], owner=r[3],
                         kind=r[4], created_at=float(r[5]))

    # attempts -----------------------------------------------------------------------------------
    def start_attempt(self, run_id: str, *, source: str, annotated: str,
                      report: dict[str, Any], args: Any = None) -> AttemptRecord:
        rep = self._j(report, "report")
        args_param = self._jn(args, "args")
        src_digest = hashlib.sha256(source.encode()).hexdigest()
        empty = self._j([], "invoked")
        null, stats = self._j(None, "result"), self._j({}, "stats")
        now = self._clock()

        def op(conn: Any) -> AttemptRecord:
            number = self._x(conn, "SELECT COALESCE(MAX(number), 0) + 1 FROM attempts "
                             "WHERE run_id = ?", (run_id,)).fetchall()[0][0]
            rows = self._insert_for_run(
                conn, run_id,
                f"INSERT INTO attempts ({_ATTEMPT_COLS}) VALUES (?, ?, ?, ?, ?, ?, 'running', "
                f"NULL, ?, ?, ?, NULL, ?, ?, NULL, ?) RETURNING {_ATTEMPT_COLS}",
                (run_id, number, source, src_digest, annotated, rep, empty, empty, null, stats,
                 now, args_param))
            return self._attempt(rows[0])

        return self._write("start_attempt", op)

    def finish_attempt(self, run_id: str, number: int, *, status: str,
                       gate: dict[str, Any] | None = None, invoked: list[str] | None = None,
                       orphans: list[str] | None = None, result: Any = None,
                       error: dict[str, Any] | None = None,
                       stats: dict[str, Any] | None = None) -> AttemptRecord:
        params = (status, self._jn(gate, "gate"), self._j(list(invoked or ()), "invoked"),
                  self._j(list(orphans or ()), "orphans"), self._j(result, "result"),
                  self._jn(error, "error"), self._j(stats or {}, "stats"), self._clock(),
                  run_id, number)

        def op(conn: Any) -> AttemptRecord:
            rows = self._x(conn, "UPDATE attempts SET status = ?, gate = ?, invoked = ?, "
                           "orphans = ?, result = ?, error = ?, stats = ?, finished_at = ? "
                           f"WHERE run_id = ? AND number = ? RETURNING {_ATTEMPT_COLS}",
                           params).fetchall()
            if not rows:
                raise RunNotFound(f"run {run_id!r} has no attempt {number}; start_attempt "
                                  "opens one", run_id=run_id, attempt=number)
            return self._attempt(rows[0])

        return self._write("finish_attempt", op)

    def list_attempts(self, run_id: str) -> list[AttemptRecord]:
        rows = self._read("list_attempts", lambda c: self._x(
            c, f"SELECT {_ATTEMPT_COLS} FROM attempts WHERE run_id = ? ORDER BY number",
            (run_id,)).fetchall())
        return [self._attempt(r) for r in rows]

    def get_attempt(self, run_id: str, number: int) -> AttemptRecord | None:
        rows = self._read("get_attempt", lambda c: self._x(
            c, f"SELECT {_ATTEMPT_COLS} FROM attempts WHERE run_id = ? AND number = ?",
            (run_id, number)).fetchall())
        return self._attempt(rows[0]) if rows else None

    def _attempt(self, r: Any) -> AttemptRecord:
        return AttemptRecord(
            run_id=r[0], number=int(r[1]), source=r[2], source_digest=r[3], annotated=r[4],
            report=self._load(r[5]), status=r[6], gate=self._load(r[7]),
            invoked=tuple(self._load(r[8])), orphans=tuple(self._load(r[9])),
            result=self._load(r[10]), error=self._load(r[11]), stats=self._load(r[12]),
            started_at=float(r[13]), finished_at=None if r[14] is None else float(r[14]),
            args=self._load(r[15]),
        )

    # slots --------------------------------------------------------------------------------------
    def list_slots(self, run_id: str) -> list[SlotRecord]:
        rows = self._read("list_slots", lambda c: self._x(
            c, f"SELECT {SLOT_COLUMNS} FROM slots WHERE run_id = ?", (run_id,)).fetchall())
        # Replay reads whole prefixes: decode the JSON columns in bulk, and parse each
        # distinct path once (a prefix repeats few of them).
        results = self._json_values([r[6] for r in rows])
        usages = self._json_values([r[7] for r in rows])
        paths: dict[str, tuple[int, ...]] = {}
        slots = []
        for r, result, usage in zip(rows, results, usages, strict=True):
            path = paths.get(r[2])
            if path is None:
                path = paths[r[2]] = parse_path(r[2])
            slots.append(SlotRecord(r[0], r[1], path, int(r[3]), r[4], r[5], result, usage,
                                    int(r[8]), float(r[9])))
        # Sorted like identities (paths as integer tuples, so branch 10 follows branch 9).
        slots.sort(key=lambda s: (s.site, s.path, s.occurrence))
        return slots

    def get_slot(self, run_id: str, identity: Identity) -> SlotRecord | None:
        rows = self._read("get_slot", lambda c: self._get_slot(c, run_id, identity))
        return self._slot(rows[0]) if rows else None

    def _get_slot(self, conn: Any, run_id: str, identity: Identity) -> list[Any]:
        rows: list[Any] = self._x(
            conn, f"SELECT {SLOT_COLUMNS} FROM slots WHERE run_id = ? AND site = ? AND path = ? "
            "AND occurrence = ?",
            (run_id, identity.site, path_text(identity.path), identity.occurrence)).fetchall()
        return rows

    def _slot(self, r: Any) -> SlotRecord:
        value = self._json_value
        return SlotRecord(run_id=r[0], site=r[1], path=parse_path(r[2]), occurrence=int(r[3]),
                          capability=r[4], digest=r[5], result=value(r[6]), usage=value(r[7]),
                          attempt=int(r[8]), committed_at=float(r[9]))

    # call attempts ------------------------------------------------------------------------------
    def begin_call(self, run_id: str, attempt: int, identity: Identity, capability: str,
                   digest: str, idempotency_key: str | None = None) -> int:
        return self._write("begin_call", self._begin_call_op(
            run_id, attempt, identity, capability, digest, idempotency_key))

    def _begin_call_op(self, run_id: str, attempt: int, identity: Identity, capability: str,
                       digest: str, idempotency_key: str | None = None) -> Callable[[Any], int]:
        now = self._clock()
        params = (run_id, identity.site, path_text(identity.path), identity.occurrence,
                  capability, digest, attempt, idempotency_key, now, now)

        def op(conn: Any) -> int:
            rows = self._insert_for_run(
                conn, run_id,
                "INSERT INTO calls (run_id, site, path, occurrence, capability, digest, attempt, "
                "status, idempotency_key, error, created_at, updated_at) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, 'pending', ?, NULL, ?, ?) RETURNING call_id", params)
            return int(rows[0][0])

        return op

    def commit_call(self, call_id: int, slot: SlotRecord, *,
                    event: tuple[str, dict[str, Any]] | None = None,
                    resolve_pending: bool = False) -> SlotRecord:
        return self._write("commit_call", self._commit_call_op(
            call_id, slot, event=event, resolve_pending=resolve_pending))

    def _commit_call_op(self, call_id: int, slot: SlotRecord, *,
                        event: tuple[str, dict[str, Any]] | None = None,
                        resolve_pending: bool = False) -> Callable[[Any], SlotRecord]:
        result, usage = self._j(slot.result, "result"), self._j(slot.usage, "usage")
        audit = None if event is None else (_event_kind(event[0]), self._j(event[1], "event"))
        now = self._clock()

        def op(conn: Any) -> SlotRecord:
            fast = self._commit_in_one(conn, call_id, slot, result, usage, audit, now)
            if fast is not None:
                if resolve_pending:
                    self._resolve_retried(conn, slot.run_id, slot.identity, call_id,
                                          slot.capability, slot.digest, now)
                return self._slot(fast)
            # Common case in one statement: mark the pending call committed and learn what
            # it was. Raising below undoes the update with the rest of this write.
            rows = self._x(conn, "UPDATE calls SET status = 'committed', updated_at = ? "
                           "WHERE call_id = ? AND status IN ('pending', 'abandoned') "
                           "RETURNING run_id, site, path, occurrence, capability, digest",
                           (now, call_id)).fetchall()
            if rows:
                r = rows[0]
                run_id, identity = r[0], Identity(r[1], parse_path(r[2]), int(r[3]))
                capability, call_digest = r[4], r[5]
            else:
                call = self._call_row(conn, call_id)
                if call.status is CallStatus.FAILED:
                    raise FrostlineError(f"call {call_id} is recorded as failed; a failed call "
                                         "cannot commit. Begin a new call", call_id=call_id)
                run_id, identity = call.run_id, call.identity
                capability, call_digest = call.capability, call.digest
            if (slot.run_id, slot.identity, slot.capability, slot.digest) != (
                    run_id, identity, capability, call_digest):
                raise FrostlineError(
                    f"commit_call({call_id}): the slot ({slot.run_id} {slot.identity} "
                    f"{slot.capability} {slot.digest[:12]}) is not the call's "
                    f"({run_id} {identity} {capability} {call_digest[:12]})", call_id=call_id)
            inserted = self._insert_slot(conn, slot, result, usage, call_id, now)
            if audit is not None:
                # In the commit's transaction: the audit row exists iff the commit does.
                self._insert_event(conn, run_id, audit[0], audit[1], now)
            if resolve_pending:
                self._resolve_retried(conn, run_id, identity, call_id, capability,
                                      call_digest, now)
            # Read back what the database holds, so a first run and a replay see one value.
            return self._slot(inserted[0] if inserted else
                              self._get_slot(conn, run_id, identity)[0])

        return op

    def _resolve_retried(self, conn: Any, run_id: str, identity: Identity, call_id: int,
                         capability: str, call_digest: str, now: float) -> None:
        """Mark reconciled the crashed dispatches of `identity` that call `call_id` retried."""
        rows = self._x(conn, "UPDATE calls SET status = 'reconciled', updated_at = ? "
                       "WHERE run_id = ? AND site = ? AND path = ? AND occurrence = ? "
                       "AND status = 'pending' AND call_id <> ? RETURNING call_id",
                       (now, run_id, identity.site, path_text(identity.path),
                        identity.occurrence, call_id)).fetchall()
        if rows:
            self._insert_event(conn, run_id, "call.reconciled", self._j({
                "identity": str(identity), "call_ids": sorted(int(r[0]) for r in rows),
                "capability": capability, "digest": call_digest, "by": "retry",
                "committed_call": call_id}, "event"), now)

    def _insert_slot(self, conn: Any, slot: SlotRecord, result: Any, usage: Any,
                     call_id: int | None, now: float) -> list[Any]:
        """Insert if absent (an identity keeps its first record forever); [] if it existed."""
        return self._insert_for_run(  # type: ignore[no-any-return]
            conn, slot.run_id,
            f"INSERT INTO slots ({SLOT_COLUMNS}, call_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            f"ON CONFLICT DO NOTHING RETURNING {SLOT_COLUMNS}",
            (slot.run_id, slot.site, path_text(slot.path), slot.occurrence, slot.capability,
             slot.digest, result, usage, slot.attempt, now, call_id))

    def fail_call(self, call_id: int, error: dict[str, Any]) -> None:
        self._write("fail_call", self._fail_call_op(call_id, error))

    def _fail_call_op(self, call_id: int, error: dict[str, Any]) -> Callable[[Any], None]:
        err = self._j(error, "error")
        now = self._clock()

        def op(conn: Any) -> None:
            cur = self._x(conn, "UPDATE calls SET status = 'failed', error = ?, updated_at = ? "
                          "WHERE call_id = ? AND status IN ('pending', 'abandoned')",
                          (err, now, call_id))
            if cur.rowcount == 0:
                call = self._call_row(conn, call_id)
                raise FrostlineError(f"call {call_id} is {call.status.value}, not pending; "
                                     "only a pending call can fail", call_id=call_id,
                                     status=call.status.value)

        return op

    def list_calls(self, run_id: str) -> list[CallRecord]:
        rows = self._read("list_calls", lambda c: self._x(
            c, f"SELECT {_CALL_COLS} FROM calls WHERE run_id = ? ORDER BY call_id",
            (run_id,)).fetchall())
        return [self._call(r) for r in rows]

    def unresolved_calls(self, run_id: str) -> list[CallRecord]:
        rows = self._read("unresolved_calls", lambda c: self._x(
            c, f"SELECT {_CALL_COLS} FROM calls WHERE run_id = ? AND status = 'pending' "
            "ORDER BY call_id", (run_id,)).fetchall())
        return [self._call(r) for r in rows]

    def _call_row(self, conn: Any, call_id: int) -> CallRecord:
        rows = self._x(conn, f"SELECT {_CALL_COLS} FROM calls WHERE call_id = ?",
                       (call_id,)).fetchall()
        if not rows:
            raise FrostlineError(f"no call {call_id} in this store; begin_call returns the id",
                                 call_id=call_id)
        return self._call(rows[0])

    def _call(self, r: Any) -> CallRecord:
        return CallRecord(call_id=int(r[0]), run_id=r[1], site=r[2], path=parse_path(r[3]),
                          occurrence=int(r[4]), capability=r[5], digest=r[6], attempt=int(r[7]),
                          status=CallStatus(r[8]), idempotency_key=r[9], error=self._load(r[10]),
                          created_at=float(r[11]), updated_at=float(r[12]))

    def reconcile_call(self, run_id: str, identity: Identity, *, abandon: bool,
                       result: Any = None, usage: dict[str, Any] | None = None,
                       attempt: int | None = None) -> CallRecord:
        if abandon and (result is not None or usage is not None):
            raise DefinitionError("reconcile either abandons the call (abandon=True) or writes "
                                  "back its result (abandon=False, result=...), not both")
        res, use = self._j(result, "result"), self._j(usage or {}, "usage")
        now = self._clock()

        def op(conn: Any) -> CallRecord:
            rows = self._x(conn, f"SELECT {_CALL_COLS} FROM calls WHERE run_id = ? AND site = ? "
                           "AND path = ? AND occurrence = ? AND status = 'pending' "
                           "ORDER BY call_id", (run_id, identity.site, path_text(identity.path),
                                                identity.occurrence)).fetchall()
            if not rows:
                raise FrostlineError(
                    f"run {run_id!r} has no pending call at {identity}; nothing to reconcile "
                    "(list the unresolved calls to see which identities wait for a decision)",
                    run_id=run_id, identity=str(identity))
            calls = [self._call(r) for r in rows]
            last = calls[-1]
            status = "abandoned" if abandon else "reconciled"
            if not abandon:
                slot = SlotRecord(run_id, identity.site, identity.path, identity.occurrence,
                                  last.capability, last.digest, result, usage or {},
                                  attempt if attempt is not None else last.attempt)
                self._insert_slot(conn, slot, res, use, last.call_id, now)
            ids = tuple(c.call_id for c in calls)
            marks = ", ".join("?" for _ in ids)
            self._x(conn, f"UPDATE calls SET status = ?, updated_at = ? WHERE call_id IN ({marks})",
                    (status, now, *ids))
            data: dict[str, Any] = {"identity": str(identity), "call_ids": list(ids),
                                    "capability": last.capability, "digest": last.digest}
            if not abandon:
                data["attempt"] = attempt if attempt is not None else last.attempt
            self._insert_event(conn, run_id, f"call.{status}", self._j(data, "event"), now)
            return self._call_row(conn, last.call_id)

        return self._write("reconcile_call", op)

    # artifacts ----------------------------------------------------------------------------------
    def put_artifact(self, data: bytes, mime: str) -> str:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise DefinitionError(f"an artifact is bytes, not {type(data).__name__}")
        if not isinstance(mime, str) or "/" not in mime:
            raise DefinitionError(f"artifact mime type must look like 'image/png', not {mime!r}")
        blob = bytes(data)
        ref = "sha256:" + hashlib.sha256(blob).hexdigest()
        # Stored once: skip the durable write entirely when the content is already there.
        if self._read("put_artifact", lambda c: self._x(
                c, "SELECT 1 FROM artifacts WHERE ref = ?", (ref,)).fetchall()):
            return ref
        now = self._clock()
        self._write("put_artifact", lambda c: self._x(
            c, "INSERT INTO artifacts (ref, mime, size, data, created_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT DO NOTHING", (ref, mime, len(blob), blob, now)))
        return ref

    def get_artifact(self, ref: str) -> tuple[bytes, str] | None:
        if not isinstance(ref, str) or not _ARTIFACT_REF.fullmatch(ref):
            raise DefinitionError(f"malformed artifact ref {ref!r}; expected 'sha256:<64 hex>'")
        rows = self._read("get_artifact", lambda c: self._x(
            c, "SELECT data, mime FROM artifacts WHERE ref = ?", (ref,)).fetchall())
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
        body, now = self._j(certificate, "certificate"), self._clock()
        self._write("put_certificate", lambda c: self._insert_for_run(
            c, run_id, "INSERT INTO certificates (run_id, attempt, body, created_at) "
            "VALUES (?, ?, ?, ?) RETURNING id", (run_id, attempt, body, now)))

    def list_certificates(self, run_id: str) -> list[dict[str, Any]]:
        rows = self._read("list_certificates", lambda c: self._x(
            c, "SELECT body FROM certificates WHERE run_id = ? ORDER BY id", (run_id,)).fetchall())
        return [self._load(r[0]) for r in rows]

    def decide(self, run_id: str, key: str, value: Any) -> Any:
        return self._write("decide", self._decide_op(run_id, key, value))

    def _decide_op(self, run_id: str, key: str, value: Any) -> Callable[[Any], Any]:
        val, now = self._j(value, "decision"), self._clock()

        def op(conn: Any) -> Any:
            self._insert_for_run(conn, run_id, "INSERT INTO decisions (run_id, key, value, "
                                 "decided_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING "
                                 "RETURNING key", (run_id, key, val, now))
            rows = self._x(conn, "SELECT value FROM decisions WHERE run_id = ? AND key = ?",
                           (run_id, key)).fetchall()
            return self._load(rows[0][0])

        return op

    def append_event(self, run_id: str, kind: str, data: dict[str, Any]) -> int:
        return self._write("append_event", self._append_event_op(run_id, kind, data))

    def _append_event_op(self, run_id: str, kind: str, data: dict[str, Any]
                         ) -> Callable[[Any], int]:
        payload, now = self._j(data, "event"), self._clock()
        return lambda c: self._insert_event(c, run_id, kind, payload, now)

    def append_events(self, run_id: str, events: list[tuple[str, dict[str, Any]]]) -> list[int]:
        if isinstance(events, list | tuple) and not events:
            return []  # nothing to make durable: no transaction
        return self._write("append_events", self._append_events_op(run_id, events))

    def _append_events_op(self, run_id: str, events: list[tuple[str, dict[str, Any]]]
                          ) -> Callable[[Any], list[int]]:
        if not isinstance(events, list | tuple):
            raise DefinitionError("append_events takes a list of (kind, data) pairs")
        if not all(isinstance(e, list | tuple) and len(e) == 2 for e in events):
            raise DefinitionError("append_events takes (kind, data) pairs, e.g. "
                                  "[('replay', {'identity': 'main/#0@0'})]")
        rows = [(_event_kind(kind), json_text(data, "event")) for kind, data in events]
        now = self._clock()

        def op(conn: Any) -> list[int]:
            self._before_event_insert(conn)
            return self._insert_events(conn, run_id, now, rows)

        return op

    def _insert_event(self, conn: Any, run_id: str, kind: str, payload: Any, now: float) -> int:
        self._before_event_insert(conn)
        rows = self._x(conn, "INSERT INTO events (run_id, ts, kind, data) VALUES (?, ?, ?, ?) "
                       "RETURNING seq", (run_id, now, kind, payload)).fetchall()
        return int(rows[0][0])

    def list_events(self, run_id: str, *, after: int = 0, limit: int = 10000) -> list[Event]:
        rows = self._read("list_events", lambda c: self._x(
            c, "SELECT seq, run_id, ts, kind, data FROM events WHERE run_id = ? AND seq > ? "
            "ORDER BY seq LIMIT ?", (run_id, int(after), int(limit))).fetchall())
        return [Event(seq=int(r[0]), run_id=r[1], ts=float(r[2]), kind=r[3],
                      data=self._load(r[4])) for r in rows]

    # principals ---------------------------------------------------------------------------------
    def create_token(self, principal: str) -> str:
        if not isinstance(principal, str) or not principal.strip():
            raise DefinitionError("a token needs a principal name, e.g. create_token('alice')")
        token = secrets.token_urlsafe(32)
        hashed, now = _token_hash(token), self._clock()
        self._write("create_token", lambda c: self._x(
            c, "INSERT INTO tokens (token_hash, principal, created_at) VALUES (?, ?, ?)",
            (hashed, principal, now)))
        return token

    def principal_for_token(self, token: str) -> str | None:
        if not isinstance(token, str) or not token:
            return None
        hashed = _token_hash(token)
        rows = self._read("principal_for_token", lambda c: self._x(
            c, "SELECT token_hash, principal FROM tokens WHERE token_hash = ?",
            (hashed,)).fetchall())
        if rows and hmac.compare_digest(rows[0][0], hashed):
            return str(rows[0][1])
        return None


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _event_kind(kind: Any) -> str:
    if not isinstance(kind, str) or not kind:
        raise DefinitionError(f"an event kind is a non-empty string such as 'executed', "
                              f"not {kind!r}")
    return kind


def _check_run_id(run_id: str) -> None:
    if (not isinstance(run_id, str) or not run_id or len(run_id) > 200
            or any(ch.isspace() or not ch.isprintable() for ch in run_id)):
        raise DefinitionError(f"run id {run_id!r} must be 1-200 printable characters without "
                              "spaces, e.g. 'run-2024-01'")
