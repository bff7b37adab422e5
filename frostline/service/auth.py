"""Bearer-token authentication. Tokens are created with `frostline token create NAME` and stored
hashed; the API only ever compares hashes (through the store)."""

from __future__ import annotations

from fastapi import HTTPException, Request


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def unauthorized(message: str) -> HTTPException:
    return HTTPException(
        status_code=401,
        detail={"code": "unauthorized", "message": message},
        headers={"WWW-Authenticate": "Bearer"},
    )
