"""Waits, their answers and the events sent to runs, as SQL (part of `SqlStore`).

Every decision about a wait is one write transaction, so two writers never both answer it:
the answer's primary key (run, identity) refuses a second answer, and an event is bound to at
most one wait (its `identity` column is set once, in the transaction that writes the answer).
A run that has succeeded takes no answer and no event: nothing of it waits any more.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from frostline.contract.waits import (
    MAX_SIGNAL_BYTES_PER_RUN,
    MAX_SIGNALS_PER_RUN,
    AnswerRecord,
    WaitRecord,
    due_at,
    timeout_value,
    timer_value,
)
from frostline.errors import AlreadyAnswered, RunFinished, SignalLimit, UnknownWait
from frostline.store.jsontext import json_text
from frostline.store.sqlbase import SqlBackend, no_run

_WAIT_COLS = ("run_id, identity, kind, capability, name, payload, digest, reached_at, due_at, "
              "attempt")
_ANSWER_COLS = "run_id, identity, value, digest, answered_by, at"
FINISHED_STATUSES = ("succeeded",)


class WaitQueries(SqlBackend):
    """The waits, answers and signals methods of the Store interface."""

    def settle_wait(self, wait: WaitRecord, now: float) -> tuple[WaitRecord, AnswerRecord | None]:
        """Record `wait` if it was never reached (else keep its first reach), and return it
        with its answer: one already given, an event kept for it, or the clock's (a timer
        that is due, an event whose timeout passed); None while it still waits.

        A wait reached again with another payload, before any answer, asks the new payload
        (nobody was asked the old one yet: an answer binds the digest it answered)."""
        payload = self._j(wait.payload, "wait payload")

        def op(conn: Any) -> tuple[WaitRecord, AnswerRecord | None]:
            stored = self._wait_row(conn, wait.run_id, wait.identity)
            answer = self._answer_row(conn, wait.run_id, wait.identity)
            if stored is None:
                self._insert_for_run(conn, wait.run_id, (
                    f"INSERT INTO waits ({_WAIT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "RETURNING run_id"), (wait.run_id, wait.identity, wait.kind,
                                          wait.capability, wait.name, payload, wait.digest,
                                          wait.reached_at, wait.due_at, wait.attempt))
                stored = wait
            elif answer is None and stored.digest != wait.digest:
                due = due_at(wait.kind, wait.payload, stored.reached_at)
                self._x(conn, "UPDATE waits SET payload = ?, digest = ?, capability = ?, "
                        "name = ?, due_at = ?, attempt = ? WHERE run_id = ? AND identity = ?",
                        (payload, wait.digest, wait.capability, wait.name, due, wait.attempt,
                         wait.run_id, wait.identity))
                stored = WaitRecord(wait.run_id, wait.identity, wait.kind, wait.capability,
                                    wait.name, wait.payload, wait.digest, stored.reached_at,
                                    due, wait.attempt)
            if answer is not None:
                return stored, answer
            return stored, self._self_answer(conn, stored, now)

        return self._write("settle_wait", op)

    def _self_answer(self, conn: Any, wait: WaitRecord, now: float) -> AnswerRecord | None:
        """An event kept for the wait, or the clock's answer; written as its answer."""
        if wait.kind == "event" and wait.name is not None:
            rows = self._x(conn, "SELECT seq, body, sent_by FROM signals WHERE run_id = ? AND "
                           "name = ? "
                           "AND identity IS NULL ORDER BY seq LIMIT 1",
                           (wait.run_id, wait.name)).fetchall()
            if rows:
                self._x(conn, "UPDATE signals SET identity = ? WHERE seq = ?",
                        (wait.identity, rows[0][0]))
                return self._put_answer(conn, wait, self._load(rows[0][1]),
                                        rows[0][2] or "signal", now)
        if wait.due_at is not None and now >= wait.due_at:
            value = (timer_value(now, wait.due_at) if wait.kind == "timer"
                     else timeout_value(wait.name or "", now))
            return self._put_answer(conn, wait, value, "clock", now)
        return None

    def _put_answer(self, conn: Any, wait: WaitRecord, value: Any, by: str,
                    now: float) -> AnswerRecord:
        rows = self._x(conn, f"INSERT INTO wait_answers ({_ANSWER_COLS}) VALUES "
                       "(?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING run_id",
                       (wait.run_id, wait.identity, self._j(value, "answer"), wait.digest, by,
                        now)).fetchall()
        if not rows:
            first = self._answer_row(conn, wait.run_id, wait.identity)
            raise AlreadyAnswered(
                f"{wait.identity} of run {wait.run_id!r} was already answered by "
                f"{first.by if first else '?'}; the first answer stands",
                run_id=wait.run_id, identity=wait.identity,
                answer=None if first is None else first.to_dict())
        return AnswerRecord(wait.run_id, wait.identity, value, wait.digest, by, now)

    def answer_wait(self, run_id: str, identity: str, value: Any, *, by: str,
                    kind: str = "approval",
                    authorize: Callable[[WaitRecord], None] | None = None) -> AnswerRecord:
        """Answer the reached wait `identity` of `kind` with `value`, once: UnknownWait when
        no such wait was reached, AlreadyAnswered when it has an answer, RunFinished when the
        run has succeeded. Nothing is changed when it refuses."""
        now = self._clock()
        self._j(value, "answer")  # a value that is not JSON fails here, before the queue

        def op(conn: Any) -> AnswerRecord:
            self._open_run(conn, run_id)
            wait = self._wait_row(conn, run_id, identity)
            if wait is None or wait.kind != kind:
                known = [r[0] for r in self._x(
                    conn, "SELECT identity FROM waits WHERE run_id = ? AND kind = ? "
                    "ORDER BY reached_at, identity", (run_id, kind)).fetchall()]
                raise UnknownWait(
                    f"run {run_id!r} has no {kind} wait {identity!r}"
                    + (f"; its {kind} waits: {', '.join(known)}" if known else
                       f"; it has reached no {kind} wait"), run_id=run_id, identity=identity)
            if authorize is not None:  # in the transaction: on the wait this answer binds
                authorize(wait)
            return self._put_answer(conn, wait, value, by, now)

        return self._write("answer_wait", op)

    def send_signal(self, run_id: str, name: str, body: Any, *,
                    by: str = "signal") -> dict[str, Any]:
        """Keep the event `name` for the run, sent by `by`; it goes to the earliest reached
        wait for that name that has no answer, or is kept until one is reached. Returns
        ``{"seq", "delivered_to"}`` (the wait's identity, or None while it is kept)."""
        now = self._clock()
        text = self._j(body, "event body")
        size = len(json_text(body, "event body").encode())

        def op(conn: Any) -> dict[str, Any]:
            self._open_run(conn, run_id)
            self._signal_room(conn, run_id, size)
            rows = self._x(conn, "INSERT INTO signals (run_id, name, body, identity, at, "
                           "sent_by) VALUES (?, ?, ?, NULL, ?, ?) RETURNING seq",
                           (run_id, name, text, now, by)).fetchall()
            seq = int(rows[0][0])
            waiting = self._x(conn, f"SELECT {_WAIT_COLS} FROM waits w WHERE run_id = ? AND "
                              "kind = 'event' AND name = ? AND NOT EXISTS (SELECT 1 FROM "
                              "wait_answers a WHERE a.run_id = w.run_id AND "
                              "a.identity = w.identity) ORDER BY reached_at, identity LIMIT 1",
                              (run_id, name)).fetchall()
            if not waiting:
                return {"seq": seq, "delivered_to": None}
            wait = self._wait(waiting[0])
            self._x(conn, "UPDATE signals SET identity = ? WHERE seq = ?", (wait.identity, seq))
            self._put_answer(conn, wait, body, by, now)
            return {"seq": seq, "delivered_to": wait.identity}

        return self._write("send_signal", op)

    def list_waits(self, run_id: str) -> list[tuple[WaitRecord, AnswerRecord | None]]:
        """Every wait the run reached, in reach order, each with its answer (or None)."""
        def read(conn: Any) -> list[tuple[WaitRecord, AnswerRecord | None]]:
            waits = [self._wait(r) for r in self._x(
                conn, f"SELECT {_WAIT_COLS} FROM waits WHERE run_id = ? "
                "ORDER BY reached_at, identity", (run_id,)).fetchall()]
            answers = {r[1]: self._answer(r) for r in self._x(
                conn, f"SELECT {_ANSWER_COLS} FROM wait_answers WHERE run_id = ?",
                (run_id,)).fetchall()}
            return [(w, answers.get(w.identity)) for w in waits]

        return self._read("list_waits", read)

    def open_approvals(self, limit: int = 1000) -> list[tuple[str, str, WaitRecord]]:
        """The approvals no one has answered yet in runs that wait, oldest first, each as
        (the run's owner, the run's name, the wait)."""
        cols = ", ".join("w." + c.strip() for c in _WAIT_COLS.split(","))
        rows = self._read("open_approvals", lambda c: self._x(
            c, f"SELECT r.owner, r.name, {cols} FROM waits w JOIN runs r ON "
            "r.run_id = w.run_id WHERE w.kind = 'approval' AND r.status = 'waiting' AND NOT "
            "EXISTS (SELECT 1 FROM wait_answers a WHERE a.run_id = w.run_id AND a.identity = "
            "w.identity) ORDER BY w.reached_at, w.run_id, w.identity LIMIT ?",
            (int(limit),)).fetchall())
        return [(str(r[0]), str(r[1]), self._wait(r[2:])) for r in rows]

    def waiting_runs(self, limit: int = 1000) -> list[str]:
        """The run keys whose latest attempt ended waiting, oldest change first."""
        rows = self._read("waiting_runs", lambda c: self._x(
            c, "SELECT run_id FROM runs WHERE status = 'waiting' ORDER BY updated_at, run_id "
            "LIMIT ?", (int(limit),)).fetchall())
        return [str(r[0]) for r in rows]

    # rows ---------------------------------------------------------------------------------
    def _signal_room(self, conn: Any, run_id: str, size: int) -> None:
        """Refuse an event the run has no room left for (in the writer's transaction, so two
        senders cannot both take the last place)."""
        length = ("OCTET_LENGTH(body::text)" if self.dialect == "postgres"
                  else "LENGTH(CAST(body AS BLOB))")
        count, total = self._x(conn, f"SELECT COUNT(*), COALESCE(SUM({length}), 0) FROM signals "
                               "WHERE run_id = ?", (run_id,)).fetchall()[0]
        if int(count) >= MAX_SIGNALS_PER_RUN:
            raise SignalLimit(
                f"run {run_id!r} already keeps {MAX_SIGNALS_PER_RUN} events, the most one run "
                "may; nothing was recorded. Start a new run to send more", run_id=run_id,
                limit="count", max=MAX_SIGNALS_PER_RUN)
        if int(total) + size > MAX_SIGNAL_BYTES_PER_RUN:
            raise SignalLimit(
                f"run {run_id!r} keeps {int(total)} bytes of events; this one ({size} bytes) "
                f"would pass the {MAX_SIGNAL_BYTES_PER_RUN} bytes one run may keep; nothing "
                "was recorded", run_id=run_id, limit="bytes", max=MAX_SIGNAL_BYTES_PER_RUN)

    def _open_run(self, conn: Any, run_id: str) -> None:
        rows = self._x(conn, "SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchall()
        if not rows:
            raise no_run(run_id)
        if rows[0][0] in FINISHED_STATUSES:
            raise RunFinished(f"run {run_id!r} has {rows[0][0]}; it waits for nothing, and "
                              "nothing was recorded", run_id=run_id, status=rows[0][0])

    def _wait_row(self, conn: Any, run_id: str, identity: str) -> WaitRecord | None:
        rows = self._x(conn, f"SELECT {_WAIT_COLS} FROM waits WHERE run_id = ? AND "
                       "identity = ?", (run_id, identity)).fetchall()
        return self._wait(rows[0]) if rows else None

    def _answer_row(self, conn: Any, run_id: str, identity: str) -> AnswerRecord | None:
        rows = self._x(conn, f"SELECT {_ANSWER_COLS} FROM wait_answers WHERE run_id = ? AND "
                       "identity = ?", (run_id, identity)).fetchall()
        return self._answer(rows[0]) if rows else None

    def _wait(self, r: Any) -> WaitRecord:
        return WaitRecord(r[0], r[1], r[2], r[3], r[4], self._load(r[5]), r[6], float(r[7]),
                          None if r[8] is None else float(r[8]), int(r[9]))

    def _answer(self, r: Any) -> AnswerRecord:
        return AnswerRecord(r[0], r[1], self._load(r[2]), r[3], r[4], float(r[5]))
