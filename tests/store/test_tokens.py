"""Bearer tokens on both backends: prefixes, expiry, revocation, principal names, and tokens
created before prefixes existed."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest

from frostline.errors import DefinitionError
from frostline.store import Store, open_store, schema
from frostline.store.postgres import PostgresStore
from frostline.store.sqlite import SQLiteStore
from frostline.store.url import parse

from .helpers import Raw


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _open(url: str, clock: Clock | None = None, version: int = schema.LATEST) -> Store:
    loc = parse(url)
    kind = SQLiteStore if loc.backend == "sqlite" else PostgresStore
    return kind(loc.target, clock=clock or Clock(), _migrate_to=version)


@pytest.fixture
def clocked(store_url: str) -> Iterator[tuple[Store, Clock]]:
    clock = Clock()
    with _open(store_url, clock) as store:
        yield store, clock


def test_a_token_has_a_public_prefix_and_only_its_hash_is_stored(store_url: str) -> None:
    with open_store(store_url) as store:
        token = store.create_token("alice")
        [record] = store.list_tokens()
    assert record.principal == "alice" and record.prefix is not None
    assert token.startswith(record.prefix + "_") and len(token) - len(record.prefix) > 40
    raw = Raw(store_url)
    try:
        [row] = raw.execute("SELECT * FROM tokens")
    finally:
        raw.close()
    assert hashlib.sha256(token.encode()).hexdigest() in row
    assert not any(isinstance(v, str) and token in v for v in row)


def test_an_expired_token_is_refused(clocked: tuple[Store, Clock]) -> None:
    store, clock = clocked
    short = store.create_token("alice", expires_in_s=60)
    forever = store.create_token("alice")
    assert store.principal_for_token(short) == "alice"
    clock.now += 59.9
    assert store.principal_for_token(short) == "alice"
    clock.now += 0.1
    assert store.principal_for_token(short) is None
    assert store.principal_for_token(forever) == "alice"
    statuses = [(r.expires_at, r.status(clock.now)) for r in store.list_tokens()]
    assert statuses == [(1_000_060.0, "expired"), (None, "active")]
    for bad in (0, -5, float("nan"), float("inf")):
        with pytest.raises(DefinitionError, match="positive number of seconds"):
            store.create_token("alice", expires_in_s=bad)


def test_revoke_by_name_prefix_or_whole_token(clocked: tuple[Store, Clock]) -> None:
    store, clock = clocked
    a1, a2 = store.create_token("alice"), store.create_token("alice")
    b1, b2, b3 = (store.create_token("bob") for _ in range(3))
    prefix_of = {r.prefix: r for r in store.list_tokens()}
    clock.now += 10
    [revoked] = store.revoke_tokens(b1[:15])
    assert revoked.revoked_at == clock.now and revoked.prefix in prefix_of
    assert store.principal_for_token(b1) is None and store.principal_for_token(b2) == "bob"
    [revoked] = store.revoke_tokens(b2)  # the whole token
    assert revoked.principal == "bob" and store.principal_for_token(b2) is None
    assert store.principal_for_token(b3) == "bob"
    clock.now += 10
    revoked_alice = store.revoke_tokens("alice")
    assert [r.revoked_at for r in revoked_alice] == [clock.now, clock.now]
    assert store.principal_for_token(a1) is None and store.principal_for_token(a2) is None
    assert store.principal_for_token(b3) == "bob"
    clock.now += 10
    # revoking again changes nothing: the first revocation time stays
    assert [r.revoked_at for r in store.revoke_tokens("alice")] == [clock.now - 10] * 2
    assert store.revoke_tokens("nobody") == [] and store.revoke_tokens("fl_000000000000") == []
    with pytest.raises(DefinitionError):
        store.revoke_tokens("")


def test_a_target_naming_a_principal_and_another_token_is_refused(store: Store) -> None:
    token = store.create_token("bob")
    prefix = token[:15]
    store.create_token(prefix)  # a principal named like bob's token prefix
    with pytest.raises(DefinitionError, match="names a principal and another"):
        store.revoke_tokens(prefix)
    assert store.principal_for_token(token) == "bob"
    assert [r.status(0) for r in store.list_tokens()] == ["active", "active"]


@pytest.mark.parametrize("name", ["", "a/b", "/", "al ice", "alice\n", "\talice", "al\x00ice", "x" * 201,
                                  "bob\u2028", "a\u00a0b"])
def test_principal_names_without_slash_or_whitespace(store: Store, name: str) -> None:
    with pytest.raises(DefinitionError):
        store.create_token(name)
    assert store.list_tokens() == []


def test_principal_names_that_are_accepted(store: Store) -> None:
    for name in ("alice", "alice@example.com", "ci-bot.2", "Émile"):
        assert store.principal_for_token(store.create_token(name)) == name


def test_tokens_from_before_the_migration_still_work_and_can_be_revoked(store_url: str) -> None:
    token = "an-old-style-token-" + "x" * 30
    with _open(store_url, version=5):
        pass
    raw = Raw(store_url)
    try:
        raw.execute("INSERT INTO tokens (token_hash, principal, created_at) VALUES "
                    f"('{hashlib.sha256(token.encode()).hexdigest()}', 'carol', 5.0)")
    finally:
        raw.close()
    with open_store(store_url) as store:
        assert store.principal_for_token(token) == "carol"
        [record] = store.list_tokens()
        assert (record.prefix, record.expires_at, record.revoked_at) == (None, None, None)
        assert len(store.revoke_tokens(token)) == 1
        assert store.principal_for_token(token) is None
