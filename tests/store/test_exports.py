"""The public surface of frostline.store is pinned."""

from __future__ import annotations

import inspect

import frostline.store as store_pkg
from frostline.store.base import Store
from frostline.store.postgres import PostgresStore
from frostline.store.sqlite import SQLiteStore
from frostline.testing import FaultyStore


def test_exported_members() -> None:
    assert sorted(store_pkg.__all__) == sorted([
        "DEFAULT_URL", "ENV_VAR", "AttemptRecord", "CallRecord", "CallStatus", "Event",
        "RunRecord", "SlotRecord", "Store", "open_store",
    ])
    for name in store_pkg.__all__:
        assert hasattr(store_pkg, name)


# Defaults the SQL stores keep: compositions of other methods that a query would not beat.
COMPOSITIONS = {"principal_for_token"}


def test_every_backend_implements_the_whole_interface() -> None:
    abstract = set(Store.__abstractmethods__)
    assert abstract  # the interface is abstract
    public = {n for n, v in vars(Store).items() if callable(v) and not n.startswith("_")}
    assert public > COMPOSITIONS
    for cls in (SQLiteStore, PostgresStore, FaultyStore):
        assert not inspect.isabstract(cls), cls
        # FaultyStore must override every method, even the ones with a default body; a SQL
        # store every one but the compositions (a default body would read more than it must).
        missing = {n for n in public if getattr(cls, n) is getattr(Store, n)}
        assert missing == (set() if cls is FaultyStore else COMPOSITIONS), (cls.__name__,
                                                                           missing)
