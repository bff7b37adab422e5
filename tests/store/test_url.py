"""Store URLs: the accepted forms, precedence (argument > env > default), clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from frostline.errors import DefinitionError
from frostline.store import open_store
from frostline.store.sqlite import SQLiteStore
from frostline.store.url import DEFAULT_URL, ENV_VAR, parse, redact, resolve


def test_sqlite_forms() -> None:
    assert parse("sqlite:///rel/x.db").target == "rel/x.db"
    assert parse("sqlite:////abs/x.db").target == "/abs/x.db"
    assert parse("sqlite:///./.frostline/frostline.db").target == "./.frostline/frostline.db"
    loc = parse("some/file.db")
    assert (loc.backend, loc.target) == ("sqlite", "some/file.db")
    assert parse("/abs/file.db").target == "/abs/file.db"


def test_postgres_forms() -> None:
    for url in ("postgresql://postgres@127.0.0.1:5432/test", "postgres://u:pw@h/db",
                "postgresql://u@h/db?options=-csearch_path%3Dx"):
        loc = parse(url)
        assert (loc.backend, loc.target) == ("postgres", url)


@pytest.mark.parametrize("bad", [
    "", "  ", "sqlite://", "sqlite:///", "sqlite://host/x.db", "sqlite:///:memory:",
    "sqlite:///dir/", "sqlite:///x.db?mode=ro", "mysql://u@h/db", "sqlite:x.db",
    "postgresql://u@h/db?notanoption=1",
])
def test_malformed_urls_are_definition_errors(bad: str) -> None:
    with pytest.raises(DefinitionError) as info:
        parse(bad)
    assert "sqlite" in info.value.message or "PostgreSQL" in info.value.message


def test_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert resolve(None) == DEFAULT_URL == "sqlite:///./.frostline/frostline.db"
    monkeypatch.setenv(ENV_VAR, "sqlite:///from-env.db")
    assert resolve(None) == "sqlite:///from-env.db"
    assert resolve("sqlite:///arg.db") == "sqlite:///arg.db"
    monkeypatch.setenv(ENV_VAR, "  ")
    assert resolve(None) == DEFAULT_URL


def test_default_store_creates_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENV_VAR, raising=False)
    with open_store() as store:
        assert isinstance(store, SQLiteStore)
        store.create_run("r1", {})
    assert (tmp_path / ".frostline" / "frostline.db").is_file()


def test_env_and_bare_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, f"sqlite:///{tmp_path}/env/s.db")
    (tmp_path / "env").mkdir()  # issue 27: only the default store's folder is made for it
    with open_store() as store:
        store.create_run("r1", {})
    assert (tmp_path / "env" / "s.db").is_file()
    with open_store(str(tmp_path / "env" / "s.db")) as store:
        assert store.get_run("r1") is not None


def test_redact_hides_passwords() -> None:
    assert redact("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"
    assert redact("postgresql://u@h/db") == "postgresql://u@h/db"
    with pytest.raises(DefinitionError) as info:
        parse("mysql://u:secret@h/db")
    assert "secret" not in info.value.message
