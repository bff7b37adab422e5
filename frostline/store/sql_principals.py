"""Bearer tokens of the HTTP API's principals, as SQL (part of `SqlStore`). Only a token's
SHA-256 is stored."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from frostline.errors import DefinitionError
from frostline.store.sqlbase import SqlBackend


class PrincipalQueries(SqlBackend):
    """The token methods of the Store interface."""

    # principals ---------------------------------------------------------------------------------
    def create_token(self, principal: str) -> str:
        if not isinstance(principal, str) or not principal.strip():
            raise DefinitionError("a token needs a principal name, e.g. create_token('alice')")
        token = secrets.token_urlsafe(32)
        hashed, now = _token_hash(token), self._clock()
        self._write("create_token", lambda c: self._x(
            c, "INSERT INTO tokens (token_hash, principal, created_at) VALUES (?, ?, ?)",
            (hashed, principal, now)))
        return token

    def principal_for_token(self, token: str) -> str | None:
        if not isinstance(token, str) or not token:
            return None
        hashed = _token_hash(token)
        rows = self._read("principal_for_token", lambda c: self._x(
            c, "SELECT token_hash, principal FROM tokens WHERE token_hash = ?",
            (hashed,)).fetchall())
        if rows and hmac.compare_digest(rows[0][0], hashed):
            return str(rows[0][1])
        return None


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
