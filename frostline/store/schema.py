"""The store's schema: one definition for both backends, and the ordered list of migrations.

Tables are written once with type markers (``{json}``, ``{blob}``, ``{real}``, ``{bigint}``,
``{serial}``) that each dialect expands; only what genuinely differs (immutability triggers) is
written per dialect. The same idea as keeping one schema module behind two system databases:
a column added here reaches SQLite and PostgreSQL at once.

A store records every applied migration in ``schema_version``; opening an older store applies
the missing migrations in order, and opening a store written by a newer frostline is refused.

Immutability triggers (named alike on both backends, so an audit or tamper test can address
them): ``slots_immutable_update``, ``slots_immutable_delete``, ``events_immutable_update``,
``events_immutable_delete``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

Dialect = Literal["sqlite", "postgres"]

TYPES: dict[Dialect, dict[str, str]] = {
    "sqlite": {
        "json": "TEXT",
        "blob": "BLOB",
        "real": "REAL",
        "bigint": "INTEGER",
        # AUTOINCREMENT: ids are never reused, so event seq only ever grows, even after a
        # (forbidden, trigger-blocked) delete of the newest row.
        "serial": "INTEGER PRIMARY KEY AUTOINCREMENT",
    },
    "postgres": {
        "json": "JSONB",
        "blob": "BYTEA",
        "real": "DOUBLE PRECISION",
        "bigint": "BIGINT",
        "serial": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    },
}

CALL_STATUSES = ("pending", "failed", "committed", "abandoned", "reconciled")

IMMUTABLE_TRIGGERS = (
    "slots_immutable_update",
    "slots_immutable_delete",
    "events_immutable_update",
    "events_immutable_delete",
)


@dataclass(frozen=True)
class Migration:
    """One schema step. `common` runs on both dialects; the per-dialect lists run after it."""

    version: int
    description: str
    common: tuple[str, ...] = ()
    sqlite: tuple[str, ...] = ()
    postgres: tuple[str, ...] = ()

    def statements(self, dialect: Dialect) -> list[str]:
        own = self.sqlite if dialect == "sqlite" else self.postgres
        return [render(s, dialect) for s in (*self.common, *own)]


def render(sql: str, dialect: Dialect) -> str:
    """Expand the type markers of `sql` for `dialect`."""
    return sql.format(**TYPES[dialect])


SCHEMA_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at {real} NOT NULL
)"""

_STATUS_CHECK = ", ".join(f"'{s}'" for s in CALL_STATUSES)

_TABLES = (
    """CREATE TABLE runs (
        run_id TEXT PRIMARY KEY,
        envelope {json} NOT NULL,
        status TEXT NOT NULL,
        owner TEXT,
        kind TEXT NOT NULL,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL
    )""",
    """CREATE TABLE attempts (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        number INTEGER NOT NULL,
        source TEXT NOT NULL,
        source_digest TEXT NOT NULL,
        annotated TEXT NOT NULL,
        report {json} NOT NULL,
        status TEXT NOT NULL,
        gate {json},
        invoked {json} NOT NULL,
        orphans {json} NOT NULL,
        result {json} NOT NULL,
        error {json},
        stats {json} NOT NULL,
        started_at {real} NOT NULL,
        finished_at {real},
        PRIMARY KEY (run_id, number)
    )""",
    # The prefix. The primary key is the identity; rows are inserted if absent and never
    # changed (migration 2 adds triggers that make the database itself refuse).
    """CREATE TABLE slots (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        site TEXT NOT NULL,
        path TEXT NOT NULL,
        occurrence INTEGER NOT NULL,
        capability TEXT NOT NULL,
        digest TEXT NOT NULL,
        result {json} NOT NULL,
        usage {json} NOT NULL,
        attempt INTEGER NOT NULL,
        call_id {bigint},
        committed_at {real} NOT NULL,
        PRIMARY KEY (run_id, site, path, occurrence)
    )""",
    f"""CREATE TABLE calls (
        call_id {{serial}},
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        site TEXT NOT NULL,
        path TEXT NOT NULL,
        occurrence INTEGER NOT NULL,
        capability TEXT NOT NULL,
        digest TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ({_STATUS_CHECK})),
        idempotency_key TEXT,
        error {{json}},
        created_at {{real}} NOT NULL,
        updated_at {{real}} NOT NULL
    )""",
    """CREATE TABLE artifacts (
        ref TEXT PRIMARY KEY,
        mime TEXT NOT NULL,
        size {bigint} NOT NULL,
        data {blob} NOT NULL,
        created_at {real} NOT NULL
    )""",
    """CREATE TABLE certificates (
        id {serial},
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        attempt INTEGER NOT NULL,
        body {json} NOT NULL,
        created_at {real} NOT NULL
    )""",
    """CREATE TABLE decisions (
        run_id TEXT NOT NULL REFERENCES runs (run_id),
        key TEXT NOT NULL,
        value {json} NOT NULL,
        decided_at {real} NOT NULL,
        PRIMARY KEY (run_id, key)
    )""",
    # Events carry no foreign key: the audit log may name a run that failed to be created.
    """CREATE TABLE events (
        seq {serial},
        run_id TEXT NOT NULL,
        ts {real} NOT NULL,
        kind TEXT NOT NULL,
        data {json} NOT NULL
    )""",
    # Only the SHA-256 of a bearer token is kept; a leaked database leaks no usable token.
    """CREATE TABLE tokens (
        token_hash TEXT PRIMARY KEY,
        principal TEXT NOT NULL,
        created_at {real} NOT NULL
    )""",
)

_SQLITE_TRIGGERS = tuple(
    f"""CREATE TRIGGER {table}_immutable_{op.lower()} BEFORE {op} ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} are append-only: {op} refused'); END"""
    for table in ("slots", "events")
    for op in ("UPDATE", "DELETE")
)

_PG_TRIGGERS = (
    """CREATE FUNCTION frostline_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '% are append-only: % refused', TG_TABLE_NAME, TG_OP
            USING ERRCODE = 'restrict_violation';
    END $$""",
    *(
        f"""CREATE TRIGGER {table}_immutable_{op.lower()} BEFORE {op} ON {table}
            FOR EACH ROW EXECUTE FUNCTION frostline_append_only()"""
        for table in ("slots", "events")
        for op in ("UPDATE", "DELETE")
    ),
    """CREATE TRIGGER slots_immutable_truncate BEFORE TRUNCATE ON slots
        FOR EACH STATEMENT EXECUTE FUNCTION frostline_append_only()""",
    """CREATE TRIGGER events_immutable_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION frostline_append_only()""",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "tables", common=_TABLES),
    Migration(2, "append-only triggers on slots and events",
              sqlite=_SQLITE_TRIGGERS, postgres=_PG_TRIGGERS),
    Migration(3, "lookup indexes", common=(
        "CREATE INDEX calls_identity ON calls (run_id, site, path, occurrence)",
        "CREATE INDEX calls_status ON calls (run_id, status)",
        "CREATE INDEX events_run ON events (run_id, seq)",
        "CREATE INDEX certificates_run ON certificates (run_id, id)",
        "CREATE INDEX runs_owner ON runs (owner, created_at)",
    )),
    # The args an attempt ran with, so a later attempt (a repair, an API call without args)
    # can run with the same inputs. NULL for attempts recorded before this migration.
    Migration(4, "attempt args", common=("ALTER TABLE attempts ADD COLUMN args {json}",)),
    # A committed result is kept as the exact JSON text it was committed with, as SQLite keeps
    # it: jsonb reorders object keys and respells numbers (1e100 becomes an integer), so a
    # replay would hand a script another value than the one its first run received.
    Migration(5, "slot results as exact JSON text", postgres=(
        "ALTER TABLE slots ALTER COLUMN result TYPE JSON USING result::json, "
        "ALTER COLUMN usage TYPE JSON USING usage::json",
    )),
    # Run names are unique per principal (a namespace): bob's r1 is not alice's r1. The key
    # stays run_id; runs created before keep their id as name, and runs without an owner
    # belong to the local principal (the command line's).
    Migration(6, "run names per principal", common=(
        "ALTER TABLE runs ADD COLUMN name TEXT",
        "UPDATE runs SET name = run_id",
        "UPDATE runs SET owner = 'local' WHERE owner IS NULL",
        "CREATE UNIQUE INDEX runs_owner_name ON runs (owner, name)",
    )),
    # Artifacts belong to the principals whose runs produced them. Existing artifacts go to
    # the owners of the runs whose committed results name them.
    Migration(7, "artifact owners", common=(
        """CREATE TABLE artifact_owners (
            ref TEXT NOT NULL REFERENCES artifacts (ref),
            owner TEXT NOT NULL,
            created_at {real} NOT NULL,
            PRIMARY KEY (ref, owner)
        )""",
    ), sqlite=(
        "INSERT INTO artifact_owners (ref, owner, created_at) SELECT DISTINCT a.ref, r.owner, "
        "a.created_at FROM artifacts a JOIN slots s ON instr(s.result, a.ref) > 0 "
        "JOIN runs r ON r.run_id = s.run_id",
    ), postgres=(
        "INSERT INTO artifact_owners (ref, owner, created_at) SELECT DISTINCT a.ref, r.owner, "
        "a.created_at FROM artifacts a JOIN slots s ON strpos(s.result::text, a.ref) > 0 "
        "JOIN runs r ON r.run_id = s.run_id",
    )),
    # Tokens that can be listed, revoked and expire. `prefix` is the token's public handle
    # (never secret); tokens created before this migration have none.
    Migration(8, "token prefix, expiry and revocation", common=(
        "ALTER TABLE tokens ADD COLUMN prefix TEXT",
        "ALTER TABLE tokens ADD COLUMN expires_at {real}",
        "ALTER TABLE tokens ADD COLUMN revoked_at {real}",
        "CREATE INDEX tokens_principal ON tokens (principal)",
        "CREATE INDEX tokens_prefix ON tokens (prefix)",
    )),
    # The catalog each attempt ran under (content-addressed: one row per distinct catalog), so
    # a change of a capability's schema or effect between attempts can be reported. NULL for
    # attempts recorded before this migration.
    Migration(9, "attempt catalogs", common=(
        """CREATE TABLE catalogs (
            digest TEXT PRIMARY KEY,
            entries {json} NOT NULL,
            created_at {real} NOT NULL
        )""",
        "ALTER TABLE attempts ADD COLUMN catalog_digest TEXT",
    )),
    # Runs that wait: each wait an attempt reached (kept from its first reach, so a timer's
    # due time survives restarts), the one answer each wait takes (its primary key refuses a
    # second), and the events sent to a run, kept until a wait of that name takes one.
    Migration(10, "waits, answers and signals", common=(
        """CREATE TABLE waits (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            identity TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('approval', 'event', 'timer')),
            capability TEXT NOT NULL,
            name TEXT,
            payload {json} NOT NULL,
            digest TEXT NOT NULL,
            reached_at {real} NOT NULL,
            due_at {real},
            attempt INTEGER NOT NULL,
            PRIMARY KEY (run_id, identity)
        )""",
        """CREATE TABLE wait_answers (
            run_id TEXT NOT NULL,
            identity TEXT NOT NULL,
            value {json} NOT NULL,
            digest TEXT NOT NULL,
            answered_by TEXT NOT NULL,
            at {real} NOT NULL,
            PRIMARY KEY (run_id, identity),
            FOREIGN KEY (run_id, identity) REFERENCES waits (run_id, identity)
        )""",
        """CREATE TABLE signals (
            seq {serial},
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            name TEXT NOT NULL,
            body {json} NOT NULL,
            identity TEXT,
            at {real} NOT NULL
        )""",
        "CREATE INDEX signals_open ON signals (run_id, name, seq)",
        "CREATE INDEX waits_due ON waits (due_at)",
    )),
    # What a slot's certificate entry hashes, recorded when the slot is committed: the digest
    # of its result and its link digest (frostline.contract.certificate), so a verify can
    # check the chain without reading or hashing a result. NULL for slots committed before
    # this migration (a verify computes theirs). An index finds a run's latest certificate.
    Migration(11, "slot digests recorded at commit; latest certificate lookup", common=(
        "ALTER TABLE slots ADD COLUMN result_digest TEXT",
        "ALTER TABLE slots ADD COLUMN entry_digest TEXT",
        "CREATE INDEX certificates_latest ON certificates (run_id, attempt, id)",
    )),
    # A lighter commit: what every call's writes maintained and no query needs (the data is
    # unchanged). `calls_status`: every query that filters calls by status also names the run
    # (and mostly the identity), which `calls_identity` finds; with the index gone, marking a
    # call committed touches no indexed column, so PostgreSQL updates it in place (HOT: no
    # index entry written) and SQLite writes one index page less per commit. The foreign key
    # of slots (PostgreSQL; SQLite cannot drop a constraint without rebuilding the table): a
    # slot is only ever written in the transaction that reads a call of the same run (the
    # commit's update, a reconcile's pending calls), that call's own foreign key found the
    # run, and runs are never deleted; the check locked the run's row on every commit.
    Migration(12, "drop the calls status index and the slots foreign key", common=(
        "DROP INDEX calls_status",
    ), postgres=(
        "ALTER TABLE slots DROP CONSTRAINT slots_run_id_fkey",
    )),
    # Who answers approvals (issue 26): each token's roles, comma-separated (tokens made
    # before carry the default role, runner), and the principal who sent each event, so the
    # answer an event becomes records its sender even when it was kept for a later wait
    # (NULL for events sent before: their answers say "signal", as they did).
    Migration(13, "token roles; the sender of each event", common=(
        "ALTER TABLE tokens ADD COLUMN roles TEXT NOT NULL DEFAULT 'runner'",
        "ALTER TABLE signals ADD COLUMN sent_by TEXT",
    )),
    # Refactor-safe repairs (issue 30): the rebinding an attempt admitted by the trace check
    # replays, new identity → committed identity, written before the attempt's first call and
    # never changed (its primary key refuses a second binding of one new identity).
    Migration(14, "rebindings of moved committed calls", common=(
        """CREATE TABLE rebindings (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            attempt INTEGER NOT NULL,
            identity TEXT NOT NULL,
            bound_to TEXT NOT NULL,
            created_at {real} NOT NULL,
            PRIMARY KEY (run_id, attempt, identity)
        )""",
    )),
)

LATEST = MIGRATIONS[-1].version


def pending(current: int | Collection[int], target: int = LATEST) -> list[Migration]:
    """The migrations that bring a store to `target`, in order: those above `current`, or,
    given the versions a store has applied, every one it has not (migration numbers are
    handed out ahead of time, so a store may have applied a later one before an earlier one
    existed; migrations with neighbouring numbers touch different tables and columns)."""
    if isinstance(current, int):
        return [m for m in MIGRATIONS if current < m.version <= target]
    applied = set(current)
    return [m for m in MIGRATIONS if m.version not in applied and m.version <= target]
