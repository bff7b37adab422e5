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


def test_every_backend_implements_the_whole_interface() -> None:
    abstract = set(Store.__abstractmethods__)
    assert abstract  # the interface is abstract
    for cls in (SQLiteStore, PostgresStore, FaultyStore):
        assert not inspect.isabstract(cls), cls
        # FaultyStore must override every method, even the ones with a default body.
        public = {n for n, v in vars(Store).items() if callable(v) and not n.startswith("_")}
        missing = {n for n in public if getattr(cls, n) is getattr(Store, n)}
        assert not missing, (cls.__name__, missing)
