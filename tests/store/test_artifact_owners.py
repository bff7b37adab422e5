"""Artifacts belong to the principals whose runs produced them, on both backends."""

from __future__ import annotations

import pytest

from frostline.store import open_store
from frostline.store.postgres import PostgresStore
from frostline.store.sqlite import SQLiteStore
from frostline.store.url import parse

from .helpers import Raw, commit_as_before_digests, ident

PNG = b"\x89PNG\r\n\x1a\nalice's picture"


def test_an_owner_reads_only_what_it_produced(store) -> None:
    ref = store.put_artifact(PNG, "image/png", owner="alice")
    assert store.get_artifact(ref, owner="alice") == (PNG, "image/png")
    assert store.get_artifact(ref, owner="bob") is None  # exactly like a missing ref
    assert store.get_artifact("sha256:" + "0" * 64, owner="bob") is None
    assert store.get_artifact(ref) == (PNG, "image/png")  # the operator reads everything


def test_producing_the_same_bytes_makes_a_second_owner(store) -> None:
    ref = store.put_artifact(PNG, "image/png", owner="alice")
    assert store.put_artifact(PNG, "image/png", owner="bob") == ref  # content-addressed
    assert store.get_artifact(ref, owner="bob") == (PNG, "image/png")
    assert store.get_artifact(ref, owner="carol") is None


def test_an_unowned_put_grants_nobody(store) -> None:
    ref = store.put_artifact(PNG, "image/png")
    assert store.get_artifact(ref, owner="alice") is None


def _open_at(url: str, version: int) -> SQLiteStore | PostgresStore:
    loc = parse(url)
    if loc.backend == "sqlite":
        return SQLiteStore(loc.target, _migrate_to=version)
    return PostgresStore(loc.target, _migrate_to=version)


def test_migration_gives_existing_artifacts_to_the_runs_that_name_them(store_url) -> None:
    with _open_at(store_url, 6) as old:
        alice = old.create_run("r1", {}, owner="alice")
        ref = old.put_artifact(PNG, "image/png")
        stray = old.put_artifact(b"nobody's", "text/plain")
    commit_as_before_digests(store_url, alice.run_id, ident(), {"p": 1}, {"artifact": ref})
    with open_store(store_url) as store:
        assert store.get_artifact(ref, owner="alice") == (PNG, "image/png")
        assert store.get_artifact(ref, owner="bob") is None
        assert store.get_artifact(stray, owner="alice") is None
    raw = Raw(store_url)
    try:
        rows = raw.execute("SELECT ref, owner FROM artifact_owners")
    finally:
        raw.close()
    assert [tuple(r) for r in rows] == [(ref, "alice")]


@pytest.mark.parametrize("ref", ["", "sha256:xyz", "../etc/passwd", "sha256:" + "A" * 64])
def test_malformed_refs_are_refused_for_owners_too(store, ref) -> None:
    from frostline.errors import DefinitionError

    with pytest.raises(DefinitionError):
        store.get_artifact(ref, owner="alice")
