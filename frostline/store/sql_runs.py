"""Runs and their attempts, as SQL (part of `SqlStore`)."""

from __future__ import annotations

import hashlib
from typing import Any

from frostline.contract.records import (
    LOCAL_PRINCIPAL,
    AttemptRecord,
    RunRecord,
    check_run_name,
    run_key,
)
from frostline.contract.status import RunStatus
from frostline.errors import DefinitionError, RunExists, RunNotFound
from frostline.store.base import AttemptHead
from frostline.store.principals import check_principal_name
from frostline.store.sqlbase import SqlBackend, no_run
from frostline.store.writes import FinishAttempt, SetRunStatus, SqlForm

_RUN_COLS = "run_id, envelope, status, owner, kind, created_at, name"
_ATTEMPT_COLS = ("run_id, number, source, source_digest, annotated, report, status, gate, "
                 "invoked, orphans, result, error, stats, started_at, finished_at, args, "
                 "catalog_digest")
RUN_KINDS = ("script", "graph", "ab")
AUTHORING = RunStatus.AUTHORING.value
# Every table whose rows belong to a run: a run being authored that holds one is kept.
_RUN_TABLES = ("attempts", "slots", "calls", "certificates", "decisions", "waits",
               "wait_answers", "signals", "rebindings")  # ab: a report of `frostline ab --store`


class RunQueries(SqlBackend):
    """The run and attempt methods of the Store interface."""

    # runs ---------------------------------------------------------------------------------------
    def create_run(self, name: str, envelope: dict[str, Any], *, owner: str | None = None,
                   kind: str = "script", authoring: bool = False) -> RunRecord:
        owner = check_principal_name(LOCAL_PRINCIPAL if owner is None else owner)
        if isinstance(name, str) and name.startswith("@"):
            raise DefinitionError(f"run id {name!r} may not start with '@' (reserved for "
                                  "the keys of principals' runs)")
        check_run_id(name)
        run_id = run_key(owner, name)
        if kind not in RUN_KINDS:
            raise DefinitionError(f"run kind must be one of {', '.join(RUN_KINDS)}, not {kind!r}")
        if not isinstance(envelope, dict):
            raise DefinitionError("a run's envelope is a JSON object (a dict)")
        env = self._j(envelope, "envelope")
        now = self._clock()
        status = AUTHORING if authoring else "created"

        def op(conn: Any) -> RunRecord:
            rows = self._x(conn, "INSERT INTO runs (run_id, envelope, status, owner, kind, "
                           "created_at, updated_at, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                           f"ON CONFLICT DO NOTHING RETURNING {_RUN_COLS}",
                           (run_id, env, status, owner, kind, now, now, name)).fetchall()
            if not rows:
                raise RunExists(f"run {name!r} already exists; choose another run id",
                                run_id=name)
            return self._run(rows[0])

        return self._write("create_run", op)

    def get_run(self, run_id: str) -> RunRecord | None:
        rows = self._read("get_run", lambda c: self._x(
            c, f"SELECT {_RUN_COLS} FROM runs WHERE run_id = ?", (run_id,)).fetchall())
        return self._run(rows[0]) if rows else None

    def find_run(self, owner: str, name: str) -> RunRecord | None:
        rows = self._read("find_run", lambda c: self._x(
            c, f"SELECT {_RUN_COLS} FROM runs WHERE owner = ? AND name = ?",
            (owner, name)).fetchall())
        return self._run(rows[0]) if rows else None

    def list_runs(self, *, owner: str | None = None, limit: int = 100) -> list[RunRecord]:
        where, params = ("AND owner = ? ", (owner,)) if owner is not None else ("", ())
        rows = self._read("list_runs", lambda c: self._x(
            c, f"SELECT {_RUN_COLS} FROM runs WHERE status <> ? {where}"
               "ORDER BY created_at DESC, run_id LIMIT ?",
            (AUTHORING, *params, int(limit))).fetchall())
        return [self._run(r) for r in rows]

    def list_authoring(self, *, limit: int = 1000) -> list[RunRecord]:
        rows = self._read("list_authoring", lambda c: self._x(
            c, f"SELECT {_RUN_COLS} FROM runs WHERE status = ? ORDER BY created_at, run_id "
               "LIMIT ?", (AUTHORING, int(limit))).fetchall())
        return [self._run(r) for r in rows]

    def promote_authoring(self, run_id: str) -> RunRecord:
        now = self._clock()

        def op(conn: Any) -> RunRecord:
            rows = self._x(conn, "UPDATE runs SET status = 'created', updated_at = ? WHERE "
                           f"run_id = ? AND status = ? RETURNING {_RUN_COLS}",
                           (now, run_id, AUTHORING)).fetchall()
            if not rows:
                raise RunNotFound(f"run {run_id!r} is not being authored (it was removed, or "
                                  "is a run already)", run_id=run_id)
            return self._run(rows[0])

        return self._write("promote_authoring", op)

    def discard_authoring(self, run_id: str) -> bool:
        # One transaction: the row goes only while it is still being authored and nothing was
        # recorded under it; a record under it means someone addressed it, and then the row
        # stays, as a failed run its owner sees (fail closed).
        held = " AND ".join(f"NOT EXISTS (SELECT 1 FROM {table} WHERE run_id = ?)"
                            for table in _RUN_TABLES)

        def op(conn: Any) -> bool:
            cur = self._x(conn, f"DELETE FROM runs WHERE run_id = ? AND status = ? AND {held}",
                          (run_id, AUTHORING, *([run_id] * len(_RUN_TABLES))))
            if cur.rowcount == 1:
                return True
            self._x(conn, "UPDATE runs SET status = 'failed', updated_at = ? WHERE run_id = ? "
                    "AND status = ?", (self._clock(), run_id, AUTHORING))
            return False

        return self._write("discard_authoring", op)

    def set_run_status(self, run_id: str, status: str) -> None:
        self._write("set_run_status", self.set_run_status_sql(
            SetRunStatus(run_id, status), False).run)

    def set_run_status_sql(self, write: SetRunStatus, piped: bool) -> SqlForm[None]:
        run_id, status, now = write.run_id, write.status, self._clock()

        def op(conn: Any) -> None:
            cur = self._x(conn, "UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?",
                          (status, now, run_id))
            if cur.rowcount == 0:
                raise no_run(run_id)

        return SqlForm(op)

    def _run(self, r: Any) -> RunRecord:
        return RunRecord(run_id=r[0], envelope=self._load(r[1]), status=r[2], owner=r[3],
                         kind=r[4], created_at=float(r[5]), name=r[6] or r[0])

    # attempts -----------------------------------------------------------------------------------
    def start_attempt(self, run_id: str, *, source: str, annotated: str,
                      report: dict[str, Any], args: Any = None,
                      catalog_digest: str | None = None) -> AttemptRecord:
        rep = self._j(report, "report")
        args_param = self._jn(args, "args")
        self._check_text(source, annotated)  # before it is digested
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
                f"NULL, ?, ?, ?, NULL, ?, ?, NULL, ?, ?) RETURNING {_ATTEMPT_COLS}",
                (run_id, number, source, src_digest, annotated, rep, empty, empty, null, stats,
                 now, args_param, catalog_digest))
            return self._attempt(rows[0])

        return self._write("start_attempt", op)

    def finish_attempt(self, run_id: str, number: int, *, status: str,
                       gate: dict[str, Any] | None = None, invoked: list[str] | None = None,
                       orphans: list[str] | None = None, result: Any = None,
                       error: dict[str, Any] | None = None,
                       stats: dict[str, Any] | None = None) -> AttemptRecord:
        return self._write("finish_attempt", self.finish_attempt_sql(FinishAttempt(
            run_id, number, status=status, gate=gate, invoked=invoked, orphans=orphans,
            result=result, error=error, stats=stats), False).run)

    def finish_attempt_sql(self, write: FinishAttempt, piped: bool) -> SqlForm[AttemptRecord]:
        run_id, number = write.run_id, write.number
        params = (write.status, self._jn(write.gate, "gate"),
                  self._j(list(write.invoked or ()), "invoked"),
                  self._j(list(write.orphans or ()), "orphans"),
                  self._j(write.result, "result"), self._jn(write.error, "error"),
                  self._j(write.stats or {}, "stats"), self._clock(), run_id, number)

        def op(conn: Any) -> AttemptRecord:
            rows = self._x(conn, "UPDATE attempts SET status = ?, gate = ?, invoked = ?, "
                           "orphans = ?, result = ?, error = ?, stats = ?, finished_at = ? "
                           f"WHERE run_id = ? AND number = ? RETURNING {_ATTEMPT_COLS}",
                           params).fetchall()
            if not rows:
                raise RunNotFound(f"run {run_id!r} has no attempt {number}; start_attempt "
                                  "opens one", run_id=run_id, attempt=number)
            return self._attempt(rows[0])

        return SqlForm(op)

    def list_attempts(self, run_id: str) -> list[AttemptRecord]:
        rows = self._read("list_attempts", lambda c: self._x(
            c, f"SELECT {_ATTEMPT_COLS} FROM attempts WHERE run_id = ? ORDER BY number",
            (run_id,)).fetchall())
        return [self._attempt(r) for r in rows]

    def list_attempt_heads(self, run_id: str, inline_bytes: int) -> list[AttemptHead]:
        size = ("OCTET_LENGTH(result::text)" if self.dialect == "postgres"
                else "LENGTH(CAST(result AS BLOB))")
        cols = _ATTEMPT_COLS.replace(
            "result,", f"CASE WHEN {size} <= {int(inline_bytes)} THEN result END,")
        rows = self._read("list_attempt_heads", lambda c: self._x(
            c, f"SELECT {cols}, {size} FROM attempts WHERE run_id = ? ORDER BY number",
            (run_id,)).fetchall())
        return [AttemptHead(self._attempt(r), None if r[10] is not None else int(r[-1]))
                for r in rows]

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
            args=self._load(r[15]), catalog_digest=r[16],
        )


def check_run_id(run_id: str) -> None:
    """The one rule for run names (`check_run_name`), held by the store too."""
    check_run_name(run_id)
