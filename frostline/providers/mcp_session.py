"""One long-lived MCP client session to one configured server, over stdio or streamable HTTP.

The session is opened once (at the start of a run, of `serve` or of `frostline mcp`) on the
providers' background loop and closed at the end; every call in between reuses it. A server
that is missing, exits during start, or is unreachable raises ProviderUnavailable naming the
server, its command or URL, and what went wrong (with the tail of its stderr). A server that
dies in the middle of a call makes that call's outcome unknown; the next call starts it again.

Secrets: a stdio server gets the SDK's minimal environment (HOME, PATH, USER, ...) plus the
`env` values and `pass_env` variables its configuration names, nothing else of the host's. An
HTTP server's bearer token is read from the variable `bearer_token_env` names, at start.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import AsyncIterator
from typing import Any, TextIO

from frostline.config import MCPProvider
from frostline.errors import ProviderUnavailable

START_TIMEOUT_S = 60.0
_STDERR_TAIL = 2000


class MCPSession:
    """The session to the server `config` describes; use from the background loop only."""

    def __init__(self, config: MCPProvider) -> None:
        self.config = config
        self.session: Any = None  # mcp.ClientSession while open
        self._closing: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None
        self._lock: asyncio.Lock | None = None
        self._stderr: TextIO | None = None
        self.starts = 0
        # tool -> the outputSchema the live session listed: the SDK checks every structured
        # result of such a tool against it, inside call_tool
        self.listed_output_schemas: dict[str, Any] = {}

    @property
    def where(self) -> str:
        c = self.config
        return c.url if c.url is not None else " ".join(c.command or ())

    @property
    def alive(self) -> bool:
        return self.session is not None

    async def open(self) -> list[Any]:
        """Start the server and the session; returns every tool the server lists."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            return await self._open()

    async def ensure(self) -> Any:
        """The live session, restarting the server first when it died since the last call."""
        if self.session is None:
            await self.open()
        return self.session

    async def _open(self) -> list[Any]:
        await self._shutdown()
        self.starts += 1
        self._closing = asyncio.Event()
        ready: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        self._holder = asyncio.create_task(self._hold(ready, self._closing))
        try:
            return await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT_S)
        except TimeoutError:
            await self._shutdown()
            raise self._unavailable(f"did not answer initialize and tools/list within "
                                    f"{START_TIMEOUT_S:.0f}s") from None

    async def _hold(self, ready: asyncio.Future[list[Any]], closing: asyncio.Event) -> None:
        """Hold the transport and session open in one task (anyio's scopes require it)."""
        from mcp import ClientSession

        try:
            async with self._transport() as streams, ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                tools = await _list_tools(s)
                self.listed_output_schemas = {t.name: t.output_schema for t in tools
                                              if t.output_schema is not None}
                self.session = s
                ready.set_result(tools)
                await closing.wait()
        except BaseException as exc:  # the task's end is the session's end
            if not ready.done():
                ready.set_exception(self._start_failure(exc))
            if isinstance(exc, asyncio.CancelledError):
                raise
        finally:
            self.session = None
            self.listed_output_schemas = {}

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        c = self.config
        if c.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {}
            if c.bearer_token_env is not None:
                token = os.environ.get(c.bearer_token_env)
                if not token:
                    raise self._unavailable(f"${c.bearer_token_env} (bearer_token_env) is not "
                                            "set")
                headers["Authorization"] = f"Bearer {token}"
            timeout = httpx2.Timeout(30.0, read=c.timeout_s)
            async with httpx2.AsyncClient(headers=headers, timeout=timeout) as client, \
                    streamable_http_client(c.url, http_client=client) as streams:
                yield streams[0], streams[1]
            return
        from mcp import StdioServerParameters, stdio_client

        assert c.command is not None
        env = dict(c.env)
        env.update({k: os.environ[k] for k in c.pass_env if k in os.environ})
        params = StdioServerParameters(command=c.command[0], args=list(c.command[1:]), env=env,
                                       cwd=c.cwd)
        if self._stderr is None:
            # Kept open for the session's life (the server writes to it); closed in close().
            self._stderr = tempfile.TemporaryFile(  # noqa: SIM115
                "w+", encoding="utf-8", errors="replace")
        async with stdio_client(params, errlog=self._stderr) as streams:
            yield streams[0], streams[1]

    async def close(self) -> None:
        await self._shutdown()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    async def _shutdown(self) -> None:
        holder, self._holder = self._holder, None
        if self._closing is not None:
            self._closing.set()
        if holder is not None:
            # The stdio transport closes stdin, waits, then terminates the process tree.
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(holder, 15)
        self.session = None

    def mark_dead(self) -> None:
        """The connection was lost: the next call starts the server again."""
        self.session = None

    # errors ---------------------------------------------------------------------------------
    def stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.flush()
            self._stderr.seek(0)
            text = self._stderr.read()
            self._stderr.seek(0, os.SEEK_END)
        except (OSError, ValueError):
            return ""
        return text[-_STDERR_TAIL:].strip()

    def _unavailable(self, reason: str) -> ProviderUnavailable:
        tail = self.stderr_tail()
        return ProviderUnavailable(
            f"MCP server {self.config.name!r} ({self.where}) {reason}"
            + (f"; its stderr ends with: {tail}" if tail else ""),
            provider=self.config.name, where=self.where, reason=reason)

    def _start_failure(self, exc: BaseException) -> BaseException:
        root = _root_cause(exc)
        if isinstance(root, ProviderUnavailable):
            return root
        if isinstance(root, FileNotFoundError):
            return self._unavailable(f"cannot be started: {root.strerror}: "
                                     f"{root.filename or self.where}")
        if isinstance(root, PermissionError):
            return self._unavailable(f"cannot be started: {root.strerror}")
        if isinstance(root, asyncio.CancelledError):
            return self._unavailable("was stopped before it finished starting")
        return self._unavailable(f"failed during start: {type(root).__name__}: {root}")


async def _list_tools(session: Any) -> list[Any]:
    """Every tool, following tools/list pagination."""
    from mcp.types import PaginatedRequestParams

    tools: list[Any] = []
    cursor = None
    while True:
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools


def _root_cause(exc: BaseException) -> BaseException:
    """The first leaf of an exception group (anyio wraps a failed start in one)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
