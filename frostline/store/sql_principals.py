"""Bearer tokens of the HTTP API's principals, as SQL (part of `SqlStore`). Only a token's
SHA-256 and its public prefix are stored (see `frostline.store.principals`)."""

from __future__ import annotations

import hmac
import math
from collections.abc import Iterable
from typing import Any

from frostline.capabilities.approvals import normalize_roles
from frostline.errors import DefinitionError
from frostline.store.principals import TokenRecord, check_principal_name, new_token, token_hash
from frostline.store.sqlbase import SqlBackend

_TOKEN_COLS = "principal, prefix, created_at, expires_at, revoked_at, roles"


class PrincipalQueries(SqlBackend):
    """The token methods of the Store interface."""

    # principals ---------------------------------------------------------------------------------
    def create_token(self, principal: str, *, expires_in_s: float | None = None,
                     roles: Iterable[str] | None = None) -> str:
        check_principal_name(principal)
        try:
            held = ",".join(normalize_roles(roles))
        except ValueError as exc:
            raise DefinitionError(str(exc)) from None
        if expires_in_s is not None and not (math.isfinite(expires_in_s) and expires_in_s > 0):
            raise DefinitionError(f"a token's lifetime is a positive number of seconds, not "
                                  f"{expires_in_s!r}")
        token, prefix = new_token()
        hashed, now = token_hash(token), self._clock()
        expires = None if expires_in_s is None else now + expires_in_s
        self._write("create_token", lambda c: self._x(
            c, "INSERT INTO tokens (token_hash, principal, created_at, prefix, expires_at, "
               "roles) VALUES (?, ?, ?, ?, ?, ?)", (hashed, principal, now, prefix, expires,
                                                    held)))
        return token

    def authenticate(self, token: str) -> TokenRecord | None:
        if not isinstance(token, str) or not token:
            return None
        hashed = token_hash(token)
        rows = self._read("principal_for_token", lambda c: self._x(
            c, f"SELECT token_hash, {_TOKEN_COLS} FROM tokens WHERE token_hash = ?",
            (hashed,)).fetchall())
        if not rows or not hmac.compare_digest(rows[0][0], hashed):
            return None
        record = _record(rows[0][1:])
        # Checked on every request: a revoked or expired token is refused from the next one on.
        return record if record.status(self._clock()) == "active" else None

    def list_tokens(self) -> list[TokenRecord]:
        rows = self._read("list_tokens", lambda c: self._x(
            c, f"SELECT {_TOKEN_COLS} FROM tokens ORDER BY created_at, principal").fetchall())
        return [_record(r) for r in rows]

    def revoke_tokens(self, target: str) -> list[TokenRecord]:
        if not isinstance(target, str) or not target:
            raise DefinitionError("name a principal, a token prefix or a token to revoke")
        hashed, now = token_hash(target), self._clock()

        def op(conn: Any) -> list[TokenRecord]:
            rows = self._x(conn, "SELECT token_hash, principal FROM tokens "
                           "WHERE principal = ? OR prefix = ? OR token_hash = ?",
                           (target, target, hashed)).fetchall()
            column, value = _revoked_by(target, hashed, [(h, who) for h, who in rows])
            if column is None:
                return []
            self._x(conn, f"UPDATE tokens SET revoked_at = ? WHERE {column} = ? "
                    "AND revoked_at IS NULL", (now, value))
            return [_record(r) for r in self._x(
                conn, f"SELECT {_TOKEN_COLS} FROM tokens WHERE {column} = ? ORDER BY created_at",
                (value,)).fetchall()]

        return self._write("revoke_tokens", op)


def _revoked_by(target: str, hashed: str,
                rows: list[tuple[str, str]]) -> tuple[str | None, str]:
    """Which column `target` names tokens by, given the tokens it matches as (hash, principal):
    a principal's name, a whole token, or a prefix; refused when that is ambiguous."""
    by_name = [h for h, who in rows if who == target]
    if by_name and len(by_name) < len(rows):
        raise DefinitionError(f"{target!r} names a principal and another principal's token; "
                              "revoke that token by its whole value", target=target)
    if by_name:
        return "principal", target
    if any(h == hashed for h, _ in rows):
        return "token_hash", hashed
    if len(rows) > 1:
        raise DefinitionError(f"{len(rows)} tokens share the prefix {target!r}; revoke by the "
                              "whole token or by the principal's name", target=target)
    return ("prefix", target) if rows else (None, target)


def _record(row: Any) -> TokenRecord:
    principal, prefix, created, expires, revoked, roles = row
    return TokenRecord(str(principal), prefix, float(created),
                       None if expires is None else float(expires),
                       None if revoked is None else float(revoked),
                       tuple(r for r in str(roles or "").split(",") if r) or normalize_roles(None))
