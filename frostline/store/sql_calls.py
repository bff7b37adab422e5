"""The frozen prefix and the dispatch records, as SQL (part of `SqlStore`).

A slot is inserted once and never updated; a call record moves pending → committed, failed,
abandoned or reconciled, and its commit writes the slot in the same transaction.
"""

from __future__ import annotations

from typing import Any

from frostline.contract.certificate import entry_digest, result_digest
from frostline.contract.identity import Identity, parse_path, path_text
from frostline.contract.records import (
    CallRecord,
    CallStatus,
    SlotRecord,
)
from frostline.errors import (
    CallNotFound,
    CallNotPending,
    DefinitionError,
    NoPendingCall,
    SlotMismatch,
)
from frostline.store.jsontext import json_text as dumps
from frostline.store.sql_history import event_kind
from frostline.store.sqlbase import SqlBackend
from frostline.store.writes import BeginCall, CommitCall, FailCall, SqlForm

SLOT_COLUMNS = ("run_id, site, path, occurrence, capability, digest, result, usage, attempt, "
                "committed_at, result_digest, entry_digest")
# A verify's read: a result only where the store recorded no digests for it (slots committed
# before it recorded them), so nothing else is transferred or decoded.
_DIGEST_COLUMNS = ("run_id, site, path, occurrence, capability, digest, "
                   "CASE WHEN entry_digest IS NULL THEN result END, NULL, attempt, committed_at, "
                   "result_digest, entry_digest")
# A spend's read: every column but the result.
_USAGE_COLUMNS = ("run_id, site, path, occurrence, capability, digest, NULL, usage, attempt, "
                  "committed_at, result_digest, entry_digest")
_CALL_COLS = ("call_id, run_id, site, path, occurrence, capability, digest, attempt, status, "
              "idempotency_key, error, created_at, updated_at")


class CallQueries(SqlBackend):
    """The slot and call-record methods of the Store interface."""

    # slots --------------------------------------------------------------------------------------
    def list_slots(self, run_id: str) -> list[SlotRecord]:
        return self._slots("list_slots", SLOT_COLUMNS, run_id)

    def list_slot_digests(self, run_id: str) -> list[SlotRecord]:
        return self._slots("list_slot_digests", _DIGEST_COLUMNS, run_id)

    def list_slot_usages(self, run_id: str) -> list[SlotRecord]:
        return self._slots("list_slot_usages", _USAGE_COLUMNS, run_id)

    def slots_mentioning(self, run_id: str, text: str) -> list[Identity]:
        column = "result::text" if self.dialect == "postgres" else "result"
        pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._read("slots_mentioning", lambda c: self._x(
            c, f"SELECT site, path, occurrence FROM slots WHERE run_id = ? AND {column} "
            "LIKE ? ESCAPE '\\'", (run_id, pattern)).fetchall())
        found = [Identity(r[0], parse_path(r[1]), int(r[2])) for r in rows]
        return sorted(found, key=lambda i: (i.site, i.path, i.occurrence))

    def _slots(self, operation: str, columns: str, run_id: str) -> list[SlotRecord]:
        rows = self._read(operation, lambda c: self._x(
            c, f"SELECT {columns} FROM slots WHERE run_id = ?", (run_id,)).fetchall())
        # Replay reads whole prefixes: decode the JSON columns in bulk (a column a read left
        # out is NULL: None), and parse each distinct path once (a prefix repeats few).
        results = self._json_values_or_none([r[6] for r in rows])
        usages = self._json_values_or_none([r[7] for r in rows])
        paths: dict[str, tuple[int, ...]] = {}
        slots = []
        for r, result, usage in zip(rows, results, usages, strict=True):
            path = paths.get(r[2])
            if path is None:
                path = paths[r[2]] = parse_path(r[2])
            slots.append(SlotRecord(r[0], r[1], path, int(r[3]), r[4], r[5], result,
                                    usage if usage is not None else {}, int(r[8]), float(r[9]),
                                    r[10], r[11]))
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
                          attempt=int(r[8]), committed_at=float(r[9]), result_digest=r[10],
                          entry_digest=r[11])

    # call attempts ------------------------------------------------------------------------------
    def begin_call(self, run_id: str, attempt: int, identity: Identity, capability: str,
                   digest: str, idempotency_key: str | None = None) -> int:
        return self._write("begin_call", self.begin_call_sql(BeginCall(
            run_id, attempt, identity, capability, digest, idempotency_key), False).run)

    def begin_call_sql(self, write: BeginCall, piped: bool) -> SqlForm[int]:
        now = self._clock()
        identity = write.identity
        params = (write.run_id, identity.site, path_text(identity.path), identity.occurrence,
                  write.capability, write.digest, write.attempt, write.idempotency_key, now, now)

        def op(conn: Any) -> int:
            rows = self._insert_for_run(
                conn, write.run_id,
                "INSERT INTO calls (run_id, site, path, occurrence, capability, digest, attempt, "
                "status, idempotency_key, error, created_at, updated_at) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, 'pending', ?, NULL, ?, ?) RETURNING call_id", params)
            return int(rows[0][0])

        return SqlForm(op, self._piped_begin_call(params) if piped else None)

    def commit_call(self, call_id: int, slot: SlotRecord, *,
                    event: tuple[str, dict[str, Any]] | None = None,
                    resolve_pending: bool = False) -> SlotRecord:
        return self._write("commit_call", self.commit_call_sql(CommitCall(
            call_id, slot, event=event, resolve_pending=resolve_pending), False).run)

    def commit_call_sql(self, write: CommitCall, piped: bool) -> SqlForm[SlotRecord]:
        """A commit's parameters are encoded once for its general and its pipelined form:
        the result's JSON and (result, link) digests, the usage's JSON, the audit event, the
        time."""
        call_id, slot, resolve_pending = write.call_id, write.slot, write.resolve_pending
        result, digests = self._result_param(slot, slot.result)
        usage = self._j(slot.usage, "usage")
        event = write.event
        audit = None if event is None else (event_kind(event[0]), self._j(event[1], "event"))
        now = self._clock()

        def op(conn: Any) -> SlotRecord:
            fast = self._commit_in_one(conn, call_id, slot, result, usage, audit, now, digests)
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
                    raise CallNotPending(f"call {call_id} is recorded as failed; a failed call "
                                         "cannot commit. Begin a new call", call_id=call_id,
                                         status=call.status.value)
                run_id, identity = call.run_id, call.identity
                capability, call_digest = call.capability, call.digest
            if (slot.run_id, slot.identity, slot.capability, slot.digest) != (
                    run_id, identity, capability, call_digest):
                raise SlotMismatch(
                    f"commit_call({call_id}): the slot ({slot.run_id} {slot.identity} "
                    f"{slot.capability} {slot.digest[:12]}) is not the call's "
                    f"({run_id} {identity} {capability} {call_digest[:12]})", call_id=call_id)
            inserted = self._insert_slot(conn, slot, result, usage, call_id, now, digests)
            if audit is not None:
                # In the commit's transaction: the audit row exists iff the commit does.
                self._insert_event(conn, run_id, audit[0], audit[1], now)
            if resolve_pending:
                self._resolve_retried(conn, run_id, identity, call_id, capability,
                                      call_digest, now)
            # Read back what the database holds, so a first run and a replay see one value.
            return self._slot(inserted[0] if inserted else
                              self._get_slot(conn, run_id, identity)[0])

        # A commit that resolves a retried crash is rare: it takes the general path.
        pipe = None if not piped or resolve_pending else self._piped_commit_call(
            call_id, slot, (result, digests, usage, audit, now))
        return SqlForm(op, pipe)

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
                     call_id: int | None, now: float, digests: tuple[str, str]) -> list[Any]:
        """Insert if absent (an identity keeps its first record forever); [] if it existed."""
        return self._insert_for_run(  # type: ignore[no-any-return]
            conn, slot.run_id,
            f"INSERT INTO slots ({SLOT_COLUMNS}, call_id) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            f"ON CONFLICT DO NOTHING RETURNING {SLOT_COLUMNS}",
            (slot.run_id, slot.site, path_text(slot.path), slot.occurrence, slot.capability,
             slot.digest, result, usage, slot.attempt, now, *digests, call_id))

    def _result_param(self, slot: SlotRecord, value: Any) -> tuple[Any, tuple[str, str]]:
        """The JSON parameter of a slot's result, and the (result digest, link digest) the
        store records with it."""
        param, rdigest = self._result_text(value)
        return param, _digests(slot, rdigest)

    def _result_text(self, value: Any) -> tuple[Any, str]:
        """The JSON parameter of a result and its digest, computed from the JSON text as
        stored and read back: the digest of exactly what a later read returns."""
        text = dumps(value, "result")
        return self._json_param(text), result_digest(self._json_value(text))

    def fail_call(self, call_id: int, error: dict[str, Any]) -> None:
        self._write("fail_call", self.fail_call_sql(FailCall(call_id, error), False).run)

    def fail_call_sql(self, write: FailCall, piped: bool) -> SqlForm[None]:
        call_id, err, now = write.call_id, self._j(write.error, "error"), self._clock()

        def op(conn: Any) -> None:
            cur = self._x(conn, "UPDATE calls SET status = 'failed', error = ?, updated_at = ? "
                          "WHERE call_id = ? AND status IN ('pending', 'abandoned')",
                          (err, now, call_id))
            if cur.rowcount == 0:
                call = self._call_row(conn, call_id)
                raise CallNotPending(f"call {call_id} is {call.status.value}, not pending; "
                                     "only a pending call can fail", call_id=call_id,
                                     status=call.status.value)

        return SqlForm(op)

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
            raise CallNotFound(f"no call {call_id} in this store; begin_call returns the id",
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
        use = self._j(usage or {}, "usage")
        res, rdigest = self._result_text(result)
        now = self._clock()

        def op(conn: Any) -> CallRecord:
            rows = self._x(conn, f"SELECT {_CALL_COLS} FROM calls WHERE run_id = ? AND site = ? "
                           "AND path = ? AND occurrence = ? AND status = 'pending' "
                           "ORDER BY call_id", (run_id, identity.site, path_text(identity.path),
                                                identity.occurrence)).fetchall()
            if not rows:
                raise NoPendingCall(
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
                self._insert_slot(conn, slot, res, use, last.call_id, now,
                                  _digests(slot, rdigest))
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


def _digests(slot: SlotRecord, rdigest: str) -> tuple[str, str]:
    """(result digest, link digest) of `slot` whose result has digest `rdigest`."""
    return rdigest, entry_digest(slot.site, slot.path, slot.occurrence, slot.capability,
                                 slot.digest, rdigest, slot.attempt)
