"""Security headers on every response the service sends, the UI's and the API's.

The web UI keeps a bearer token in the page, so the page must never run a script it did not
ship, never be framed by another site, and never leak its URL: its Content-Security-Policy
allows only the UI's own files (and the `blob:` images it makes from downloaded artifacts).
API responses are data and are never meant to render, so their policy allows nothing at all.
The interactive API docs, when an operator turns them on, load Swagger UI and ReDoc from
their CDN with an inline bootstrap script; only those two pages get a policy that allows it.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_COMMON = "base-uri 'none'; frame-ancestors 'none'"
UI_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; "
             f"connect-src 'self'; form-action 'self'; {_COMMON}")
API_POLICY = f"default-src 'none'; form-action 'none'; {_COMMON}"
_CDN = "https://cdn.jsdelivr.net"
DOCS_POLICY = (f"default-src 'none'; script-src {_CDN} 'unsafe-inline'; "
               f"style-src {_CDN} https://fonts.googleapis.com 'unsafe-inline'; "
               "font-src https://fonts.gstatic.com; "
               "img-src 'self' data: https://fastapi.tiangolo.com https://cdn.redoc.ly; "
               f"worker-src blob:; connect-src 'self'; form-action 'none'; {_COMMON}")

FIXED = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",  # frame-ancestors for browsers that predate it
}


def is_ui_path(path: str) -> bool:
    return path == "/" or path.startswith("/ui/")


class SecurityHeaders:
    """Add the security headers to every HTTP response of `app`; `docs_paths` are the
    interactive docs pages, if any are served."""

    def __init__(self, app: ASGIApp, docs_paths: Iterable[str] = ()) -> None:
        self.app = app
        self.docs_paths = frozenset(docs_paths)

    def policy(self, path: str) -> str:
        if path in self.docs_paths:
            return DOCS_POLICY
        return UI_POLICY if is_ui_path(path) else API_POLICY

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = self.policy(scope["path"])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                headers = MutableHeaders(scope=message)
                headers["Content-Security-Policy"] = policy
                for name, value in FIXED.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
