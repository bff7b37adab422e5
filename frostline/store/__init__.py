"""The run store: the durable record of runs, attempts, the frozen prefix and the audit log.

`open_store` picks the backend from a URL (argument > $FROSTLINE_STORE > the default SQLite
file under ./.frostline/). Only the default's folder is made when missing: a store named
anywhere else must go into a folder that exists, so a typo in --store never starts an empty
store somewhere unexpected::

    from frostline.store import open_store
    with open_store("sqlite:///./runs.db") as store:
        store.create_run("r1", {})
"""

from __future__ import annotations

from pathlib import Path

from frostline.contract.records import (
    AttemptRecord,
    CallRecord,
    CallStatus,
    Event,
    RunRecord,
    SlotRecord,
)
from frostline.errors import StoreNotFound
from frostline.store.base import Store
from frostline.store.url import DEFAULT_URL, ENV_VAR, parse, resolve

__all__ = [
    "DEFAULT_URL",
    "ENV_VAR",
    "AttemptRecord",
    "CallRecord",
    "CallStatus",
    "Event",
    "RunRecord",
    "SlotRecord",
    "Store",
    "open_store",
]


def open_store(url: str | None = None, *, create: bool = True) -> Store:
    """Open (creating and migrating as needed) the store at `url`.

    Args:
        url: ``sqlite:///path.db``, a bare file path, or ``postgresql://…``; None reads
            $FROSTLINE_STORE and falls back to ``sqlite:///./.frostline/frostline.db``.
        create: False for a reader: a store that does not exist yet is an error, and
            nothing (no file, folder or table) is created to find that out.

    Raises:
        DefinitionError: the URL is malformed.
        StoreNotFound: `create` is False and no frostline store exists at `url`; or a
            SQLite file other than the default would be created in a folder that does not
            exist.
        StoreUnavailable: the database cannot be reached, created or migrated.
    """
    resolved = resolve(url)
    location = parse(resolved)
    if location.backend == "sqlite":
        from frostline.store.sqlite import SQLiteStore

        folder = Path(location.target).parent
        if create and resolved != DEFAULT_URL and not folder.is_dir():
            raise StoreNotFound(
                f"the folder {str(folder)!r} of the store {location.url} "
                + ("is not a folder" if folder.exists() else "does not exist") + "; "
                f"create it first (mkdir -p {str(folder)!r}) or fix --store / "
                f"${ENV_VAR}", backend="sqlite", path=location.target)

        return SQLiteStore(location.target, url=location.url, create=create)
    from frostline.store.postgres import PostgresStore

    return PostgresStore(location.target, create=create)
