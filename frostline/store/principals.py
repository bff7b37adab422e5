"""Principals of the HTTP API and their bearer tokens: what a principal name may be, how a token
is made and named, and the record a token listing shows. The queries live in
`frostline.store.sql_principals`.

A token is ``fl_<12 hex>_<43 url-safe characters>``. The first part is its prefix: a public
handle that listings show and `frostline token revoke` accepts. Only the rest is secret (256
random bits), and only the SHA-256 of the whole token is stored, so the store can name a
token without being able to reproduce it.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from frostline.capabilities.approvals import DEFAULT_ROLE
from frostline.errors import DefinitionError

TOKEN_MARK = "fl_"
TOKEN_STATUSES = ("active", "expired", "revoked")
MAX_PRINCIPAL_CHARS = 200


def check_principal_name(name: object) -> str:
    """`name` if it can name a principal (what run keys and tokens carry); DefinitionError
    otherwise.

    A principal's run keys are ``@owner/name``, so a principal name holds no '/'; nor any
    whitespace or control character, which a listing or a log line could not show faithfully.
    """
    if not isinstance(name, str) or not name:
        raise DefinitionError("a principal needs a name, e.g. 'alice'")
    if (len(name) > MAX_PRINCIPAL_CHARS or "/" in name
            or any(ch.isspace() or not ch.isprintable() for ch in name)):
        raise DefinitionError(f"principal {name!r} must be 1-{MAX_PRINCIPAL_CHARS} printable "
                              "characters without whitespace or '/', e.g. 'alice'",
                              principal=name)
    return name


def new_token() -> tuple[str, str]:
    """A fresh bearer token and its public prefix."""
    prefix = TOKEN_MARK + secrets.token_hex(6)
    return f"{prefix}_{secrets.token_urlsafe(32)}", prefix


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TokenRecord:
    """What the store knows about one token: never the token itself.

    `prefix` is None for tokens created before prefixes were recorded; such a token is revoked
    by its principal's name or by its whole value. `roles` decide which approvals the token
    may answer (`frostline.capabilities.approvals`).
    """

    principal: str
    prefix: str | None
    created_at: float
    expires_at: float | None
    revoked_at: float | None
    roles: tuple[str, ...] = (DEFAULT_ROLE,)

    def status(self, now: float) -> str:
        """One of TOKEN_STATUSES at time `now`; only an active token authenticates."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at is not None and self.expires_at <= now:
            return "expired"
        return "active"

    def to_dict(self, now: float) -> dict[str, Any]:
        return {"principal": self.principal, "prefix": self.prefix, "status": self.status(now),
                "created_at": self.created_at, "expires_at": self.expires_at,
                "revoked_at": self.revoked_at, "roles": list(self.roles)}
