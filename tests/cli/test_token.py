"""`frostline token create|list|revoke` against a real store."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from frostline.cli import main
from frostline.store import open_store


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'tokens.db'}"


def cli(*args: str):
    return CliRunner().invoke(main, list(args))


def create(url: str, name: str, *extra: str) -> str:
    res = cli("token", "create", name, "--store", url, *extra)
    assert res.exit_code == 0, res.output
    return res.output.strip().splitlines()[-1]


def listing(url: str) -> list[dict]:
    res = cli("token", "list", "--json", "--store", url)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)["tokens"]


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("12h", 43200),
                                                ("30d", 2592000)])
def test_create_with_an_expiry(url, text, seconds):
    before = time.time()
    value = create(url, "alice", "--expires", text)
    [row] = listing(url)
    assert row["principal"] == "alice" and row["status"] == "active"
    assert value.startswith(row["prefix"] + "_")
    assert before + seconds - 5 < row["expires_at"] < time.time() + seconds + 5


@pytest.mark.parametrize("text", ["30", "30x", "d", "-1d", "0d", "1.5h", "30 days", ""])
def test_a_bad_expiry_is_a_usage_error(url, text):
    res = cli("token", "create", "alice", "--store", url, "--expires", text)
    assert res.exit_code == 2
    assert "s, m, h or d" in res.output
    with open_store(url) as store:
        assert store.list_tokens() == []


def test_list_and_revoke_by_name_and_by_prefix(url):
    a1, a2, b = create(url, "alice"), create(url, "alice"), create(url, "bob")
    rows = listing(url)
    assert [r["principal"] for r in rows] == ["alice", "alice", "bob"]
    assert all(set(r) == {"principal", "prefix", "status", "created_at", "expires_at", "revoked_at",
                          "roles"}
               for r in rows)
    assert not any(v in json.dumps(rows) for v in (a1, a2, b))
    human = cli("token", "list", "--store", url)
    assert human.exit_code == 0 and rows[2]["prefix"] in human.output and "active" in human.output

    res = cli("token", "revoke", rows[2]["prefix"], "--store", url)
    assert res.exit_code == 0 and f"revoked {rows[2]['prefix']} of bob" in res.output
    res = cli("token", "revoke", "alice", "--json", "--store", url)
    assert res.exit_code == 0
    assert [r["status"] for r in json.loads(res.output)["revoked"]] == ["revoked", "revoked"]
    assert [r["status"] for r in listing(url)] == ["revoked"] * 3
    with open_store(url) as store:
        assert all(store.principal_for_token(v) is None for v in (a1, a2, b))


def test_revoking_what_does_not_exist_is_a_usage_error(url):
    create(url, "alice")
    res = cli("token", "revoke", "mallory", "--store", url)
    assert res.exit_code == 2 and "no principal and no token" in res.output
    res = cli("token", "revoke", "mallory", "--json", "--store", url)
    assert res.exit_code == 2 and "no principal" in json.loads(res.output)["error"]["message"]
    assert [r["status"] for r in listing(url)] == ["active"]


@pytest.mark.parametrize("name", ["a/b", "al ice", ""])
def test_principal_names_with_slash_or_space_are_refused(url, name):
    assert cli("token", "create", name, "--store", url).exit_code == 2


def test_issue26_create_with_roles_and_list_them(url):
    create(url, "alice")
    create(url, "carol", "--role", "approver")
    res = cli("token", "create", "ops", "--role", "approver,runner", "--role", "release",
              "--json", "--store", url)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["roles"] == ["approver", "release", "runner"]
    assert [r["roles"] for r in listing(url)] == [["runner"], ["approver"],
                                                  ["approver", "release", "runner"]]
    table = cli("token", "list", "--store", url)
    assert table.exit_code == 0 and "roles" in table.output and "approver" in table.output
    res = cli("token", "create", "dave", "--role", "Admin!", "--store", url)
    assert res.exit_code == 2 and "lowercase letters" in res.output
    assert len(listing(url)) == 3  # the refused token was not made
