"""The catalogs attempts ran under, as SQL (part of `SqlStore`).

A catalog is stored once, content-addressed by its digest like an artifact: a run whose
attempts all ran under one configuration holds one row, however many attempts it has.
"""

from __future__ import annotations

from typing import Any

from frostline.capabilities.catalog import catalog_digest
from frostline.errors import DefinitionError
from frostline.store.sqlbase import SqlBackend


class CatalogQueries(SqlBackend):
    """`put_catalog` and `get_catalog` of the Store interface."""

    def put_catalog(self, entries: list[dict[str, Any]]) -> str:
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise DefinitionError("a catalog is recorded as a list of capability objects")
        digest = catalog_digest(entries)
        if self._read("put_catalog", lambda c: self._x(
                c, "SELECT 1 FROM catalogs WHERE digest = ?", (digest,)).fetchall()):
            return digest
        body, now = self._j(entries, "catalog"), self._clock()
        self._write("put_catalog", lambda c: self._x(
            c, "INSERT INTO catalogs (digest, entries, created_at) VALUES (?, ?, ?) "
            "ON CONFLICT DO NOTHING", (digest, body, now)))
        return digest

    def get_catalog(self, digest: str) -> list[dict[str, Any]] | None:
        rows = self._read("get_catalog", lambda c: self._x(
            c, "SELECT entries FROM catalogs WHERE digest = ?", (digest,)).fetchall())
        return None if not rows else list(self._load(rows[0][0]))
