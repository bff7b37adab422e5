"""Where the store lives: parse a store URL, with the precedence argument > env > default.

Accepted forms::

    sqlite:///relative/path.db     (three slashes: relative to the working directory)
    sqlite:////absolute/path.db    (four slashes: absolute)
    path/to/file.db                (a bare filesystem path: SQLite)
    postgresql://user@host:5432/db (or postgres://…; libpq query parameters allowed)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

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


# A connection option whose name says it carries a secret (password, sslpassword, sslkey,
# passfile, a token, an auth or credential file): its value never reaches a message. Matched
# on any part of the name, so options this list never heard of are masked too.
_SECRET_NAME = re.compile(r"pass|secret|token|key|auth|cred", re.IGNORECASE)
_MASK = "***"
# A URL inside arbitrary text (a driver's message, a log line) and a libpq key=value option.
_URL_IN_TEXT = re.compile(r"\b(?:postgres(?:ql)?|sqlite)://[^\s'\"<>]*", re.IGNORECASE)
_OPTION_IN_TEXT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s&'\"]+)")


def _redact(url: str) -> str:
    """The URL with every secret-bearing part masked, for messages and logs: the password of
    its userinfo and the value of every query option whose name says it holds a secret
    (``password``, ``sslpassword``, ``sslkey``, ``passfile``…). A libpq key=value string is
    masked the same way."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _redact_options(url)
    rest, hash_sep, _ = rest.partition("#")
    rest, q_sep, query = rest.partition("?")
    userinfo, at, hostpart = rest.rpartition("@")
    if at and ":" in userinfo:
        rest = f"{userinfo.split(':', 1)[0]}:{_MASK}@{hostpart}"
    if q_sep:
        rest += "?" + "&".join(_redact_pair(pair) for pair in query.split("&"))
    if hash_sep:
        rest += "#" + _MASK
    return f"{scheme}://{rest}"


def _redact_pair(pair: str) -> str:
    name, eq, _ = pair.partition("=")
    return f"{name}={_MASK}" if eq and _SECRET_NAME.search(unquote(name)) else pair


def _redact_options(text: str) -> str:
    """`text` with the value of every key=value option named like a secret masked."""
    return _OPTION_IN_TEXT.sub(
        lambda m: f"{m.group(1)}={_MASK}" if _SECRET_NAME.search(m.group(1)) else m.group(0),
        text)


def redact_text(text: str) -> str:
    """`text` (a driver's error, a message about to be logged) with every store URL and every
    secret-named connection option in it masked as `redact` masks a URL."""
    return _redact_options(_URL_IN_TEXT.sub(lambda m: _redact(m.group(0)), text))


redact = _redact
