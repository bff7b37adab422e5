"""Where the store lives: parse a store URL, with the precedence argument > env > default.

Accepted forms::

    sqlite:///relative/path.db     (three slashes: relative to the working directory)
    sqlite:////absolute/path.db    (four slashes: absolute)
    path/to/file.db                (a bare filesystem path: SQLite)
    postgresql://user@host:5432/db (or postgres://…; libpq query parameters allowed)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from frostline.errors import DefinitionError

ENV_VAR = "FROSTLINE_STORE"
DEFAULT_URL = "sqlite:///./.frostline/frostline.db"

_FORMS = ("sqlite:///path/to.db, a bare file path, or "
          "postgresql://user@host:5432/dbname")


@dataclass(frozen=True)
class StoreLocation:
    """A parsed store URL: the backend and what it connects to (file path or libpq URL)."""

    backend: Literal["sqlite", "postgres"]
    target: str
    url: str


def resolve(url: str | None = None) -> str:
    """The URL in force: the argument, else $FROSTLINE_STORE, else the default file."""
    if url is not None:
        return url
    env = os.environ.get(ENV_VAR, "").strip()
    return env or DEFAULT_URL


def parse(url: str) -> StoreLocation:
    """Parse a store URL; a malformed one raises DefinitionError saying which forms work."""
    if not isinstance(url, str) or not url.strip():
        raise DefinitionError(f"empty store URL; use {_FORMS}", url=url)
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    if not sep:
        if url.startswith(("sqlite:", "postgres:", "postgresql:")):
            raise DefinitionError(f"malformed store URL {url!r}; use {_FORMS}", url=url)
        return StoreLocation("sqlite", url, f"sqlite:///{url}")
    scheme = scheme.lower()
    if scheme == "sqlite":
        if not rest.startswith("/"):
            raise DefinitionError(
                f"malformed sqlite URL {url!r}: write sqlite:///relative.db or "
                "sqlite:////absolute/path.db (no host part)", url=url)
        path = rest[1:]
        if not path or path.endswith("/") or "?" in path or path == ":memory:":
            raise DefinitionError(
                f"sqlite URL {url!r} does not name a database file; write e.g. "
                "sqlite:///./.frostline/frostline.db (in-memory stores are not durable and "
                "are not supported)", url=url)
        return StoreLocation("sqlite", path, url)
    if scheme in ("postgresql", "postgres"):
        try:
            from psycopg.conninfo import conninfo_to_dict
        except ImportError as exc:
            raise DefinitionError(
                "a postgresql:// store needs psycopg 3: pip install 'frostline[postgres]'",
                url=_redact(url)) from exc
        try:
            conninfo_to_dict(url)
        except Exception as exc:  # psycopg raises ProgrammingError for unparsable conninfo
            raise DefinitionError(f"malformed PostgreSQL URL {_redact(url)!r}: {exc}",
                                  url=_redact(url)) from exc
        return StoreLocation("postgres", url, url)
    raise DefinitionError(f"unsupported store URL scheme {scheme!r}; use {_FORMS}",
                          url=_redact(url))


def _redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    scheme, sep, rest = url.partition("://")
    userinfo, at, hostpart = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{hostpart}"


redact = _redact
