"""An MCP server as a provider: each tool it lists becomes the capability `<provider>.<tool>`.

`tools/list` gives each tool's payload schema (`inputSchema`), result schema (`outputSchema`,
when given) and annotations, which set the effect class crash handling distinguishes:

    readOnlyHint                                   → read_only (re-executed after a crash)
    idempotentHint, not destructiveHint/openWorld  → idempotent (retried automatically)
    anything else                                  → side_effecting (fail closed until reconciled)

An explicit ``destructiveHint: true`` or ``openWorldHint: true`` outranks ``idempotentHint``:
the server's own words say a repeat may do more. Unannotated tools are side-effecting.

Calls run on the host, in the session opened at start. A tool with an `outputSchema` answers
with its structured content (checked against the schema); any other tool answers
``{"text", "artifacts", "content"}``: the text blocks joined, the references of its images,
audio and binary resources (stored content-addressed), and every block as JSON. Each result is
checked once: the SDK's `call_tool` already validates structured content against the schema
the live session listed, so that check stands for ours while that schema is the catalog's
(after a restart that listed another one, ours runs again); a content result is built here in
the shape its schema describes, so only its JSON form is checked. A tool error
(`isError`) or a protocol error is a ProviderError (nothing committed); a connection lost or a
timeout in the middle of a call is a ProviderError with ``outcome_unknown=True``, which the
broker turns into an unresolved call unless the capability may be repeated.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Mapping
from typing import Any

from frostline.capabilities.catalog import Capability
from frostline.capabilities.costs import reported_cost
from frostline.capabilities.provider import ArtifactSink, CallContext, ProviderResult
from frostline.config import MCPProvider
from frostline.errors import CatalogError, ConfigError, DefinitionError, ProviderError
from frostline.providers.background import BackgroundLoop
from frostline.providers.mcp_session import START_TIMEOUT_S, MCPSession
from frostline.providers.output import check_output
from frostline.providers.provider_log import ProviderLog, log_call

CONNECTION_CLOSED, REQUEST_TIMEOUT = -32000, -32001
CONTENT_RESULT_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["text", "artifacts", "content"],
    "properties": {"text": {"type": "string"},
                   "artifacts": {"type": "array", "items": {"type": "string"}},
                   "content": {"type": "array", "items": {"type": "object"}}}}


def effect_of(annotations: Any) -> str:
    """The effect class of a tool from its MCP annotations (see the module docstring)."""
    if annotations is None:
        return "side_effecting"
    if getattr(annotations, "read_only_hint", None) is True:
        return "read_only"
    if getattr(annotations, "idempotent_hint", None) is True and \
            getattr(annotations, "destructive_hint", None) is not True and \
            getattr(annotations, "open_world_hint", None) is not True:
        return "idempotent"
    return "side_effecting"


def capability_name(provider: str, tool: str) -> str:
    """`<provider>.<tool>`, the tool name lowercased with other characters spelled `_`."""
    spelled = re.sub(r"[^a-z0-9_]", "_", tool.lower()) or "tool"
    return f"{provider}.{spelled if spelled[0].isalpha() else 't_' + spelled}"


class MCPProviders:
    """The tools of one MCP server, served through one long-lived session.

    Example::

        git = MCPProviders(MCPProvider("git", command=("python", "-m", "mcp_server_git")))
        entries = git.start()       # the capabilities git.git_status, git.git_commit, ...
        ...
        git.close()
    """

    def __init__(self, config: MCPProvider, *, renames: Mapping[str, str] | None = None,
                 loop: BackgroundLoop | None = None, config_file: str = "",
                 log_path: str | os.PathLike[str] | None = None) -> None:
        try:
            import mcp  # noqa: F401  (an optional dependency: say so before anything starts)
        except ImportError as exc:
            raise DefinitionError(f"provider {config.name!r} is an MCP server, which needs the "
                                  "'mcp' package: pip install 'frostline[mcp]'") from exc
        self.config = config
        self.name = config.name
        self._renames = dict(renames or {})  # tool name -> capability name
        self._loop = loop or BackgroundLoop(f"frostline-mcp-{config.name}")
        self._own_loop = loop is None
        self._session = MCPSession(config)
        self._file = config_file
        self._tools: dict[str, str] = {}  # capability -> tool
        self._entries: dict[str, Capability] = {}
        self._structured: set[str] = set()  # tools that declare an outputSchema
        self.log = ProviderLog.from_env(log_path)

    @property
    def session(self) -> MCPSession:
        return self._session

    def start(self) -> list[Capability]:
        """Start the server, list its tools and return their catalog entries."""
        tools = self._loop.run_sync(self._session.open(), timeout=START_TIMEOUT_S + 30)
        self._entries, self._tools = self._catalog(tools)
        return list(self._entries.values())

    async def start_async(self) -> list[Capability]:
        """`start` from an event loop: the session opens on this provider's loop (the caller's
        own, for a hosted loop)."""
        tools = await self._loop.run(self._session.open())
        self._entries, self._tools = self._catalog(tools)
        return list(self._entries.values())

    def close(self) -> None:
        try:
            self._loop.run_sync(self._session.close(), timeout=60)
        finally:
            if self._own_loop:
                self._loop.stop()

    async def aclose(self) -> None:
        """`close` from an event loop (the only way to close a session on a hosted loop from
        that loop's own thread)."""
        try:
            await self._loop.run(self._session.close())
        finally:
            if self._own_loop:
                self._loop.stop()

    def entries(self) -> list[Capability]:
        return list(self._entries.values())

    def _catalog(self, tools: list[Any]) -> tuple[dict[str, Capability], dict[str, str]]:
        listed = {t.name: t for t in tools}
        chosen = self.config.tools if self.config.tools is not None else tuple(listed)
        unknown = [t for t in chosen if t not in listed] + \
                  [t for t in self._renames if t not in listed]
        if unknown:
            key = f"providers.{self.name}.tools" if unknown[0] in chosen else "capabilities"
            raise ConfigError(
                f"{self._file}: MCP server {self.name!r} has no tool {unknown[0]!r}; it lists "
                f"{', '.join(sorted(listed)) or 'no tools'}", file=self._file, key=key,
                expected=f"one of {', '.join(sorted(listed))}")
        entries: dict[str, Capability] = {}
        routes: dict[str, str] = {}
        for tool_name in chosen:
            tool = listed[tool_name]
            name = self._renames.get(tool_name) or capability_name(self.name, tool_name)
            if name in entries:
                raise CatalogError(f"MCP server {self.name!r}: tools {routes[name]!r} and "
                                   f"{tool_name!r} both become capability {name}; rename one "
                                   f"with [capabilities.\"NEW.NAME\"] tool = \"{tool_name}\"",
                                   capability=name)
            schema = dict(tool.input_schema or {})
            schema.setdefault("type", "object")
            entries[name] = Capability(
                name, True, schema, 0.0,
                description=(tool.description or tool.title or "").strip()[:2000],
                output_schema=dict(tool.output_schema) if tool.output_schema else
                CONTENT_RESULT_SCHEMA).with_effect(effect_of(tool.annotations))
            routes[name] = tool_name
            if tool.output_schema:
                self._structured.add(name)
        return entries, routes

    # Provider protocol ---------------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        return frozenset(self._tools)

    def honours_idempotency_keys(self, capability: str) -> bool:
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        tool = self._tools.get(capability)
        if tool is None:
            raise ProviderError(f"{capability}: not a tool of MCP server {self.name!r}",
                                status=404, error_code="UnknownCapability",
                                capability=capability)
        try:
            raw, checked = await self._loop.run(self._call(capability, tool, dict(payload)))
            result = self._result(capability, raw, checked, ctx.artifacts)
        except ProviderError as exc:
            await log_call(self.log, capability, payload, ctx, ok=False,
                           error_code=exc.fields.get("error_code"),
                           status=exc.fields.get("status"), cost_usd=reported_cost(exc.fields))
            raise
        usage = {"cost_usd": self._entries[capability].price_usd, "tokens": 0}
        await log_call(self.log, capability, payload, ctx, ok=True, cost_usd=usage["cost_usd"])
        return ProviderResult(result, usage)

    async def _call(self, capability: str, tool: str,
                    arguments: dict[str, Any]) -> tuple[Any, Any]:
        """The tool's raw result, and the outputSchema the SDK checked it against (None: it
        checked none), as listed by the session that ran the call."""
        from mcp.shared.exceptions import MCPError

        session = await self._session.ensure()
        checked = self._session.listed_output_schemas.get(tool)
        where = f"MCP server {self.name!r} ({self._session.where})"
        try:
            return await session.call_tool(tool, arguments,
                                           read_timeout_seconds=self.config.timeout_s), checked
        except MCPError as exc:
            code = exc.error.code
            if code == CONNECTION_CLOSED:
                self._session.mark_dead()
                raise ProviderError(
                    f"{capability}: {where} closed the connection during {tool}; it may have "
                    "run the call", error_code="ServerDied", capability=capability,
                    provider=self.name, outcome_unknown=True) from exc
            if code == REQUEST_TIMEOUT:
                raise ProviderError(
                    f"{capability}: {where} did not answer {tool} within "
                    f"{self.config.timeout_s:.0f}s; it may still run it", error_code="Timeout",
                    capability=capability, provider=self.name, outcome_unknown=True) from exc
            raise ProviderError(f"{capability}: {where} refused {tool}: {exc.error.message}",
                                status=400, error_code=f"MCP{code}", capability=capability,
                                provider=self.name) from exc
        except RuntimeError as exc:  # the SDK's own output-schema check, among others
            schema = "schema" in str(exc) or "structured content" in str(exc)
            raise ProviderError(f"{capability}: {where}: {str(exc).splitlines()[0]}; nothing was "
                                "committed",
                                status=502, capability=capability, provider=self.name,
                                error_code="OutputSchemaViolation" if schema else
                                "MalformedResponse") from exc

    def _result(self, capability: str, raw: Any, checked: Any, sink: ArtifactSink) -> Any:
        content = [_block(b, sink) for b in raw.content or []]
        text = "\n".join(b["text"] for b in content if b.get("type") == "text")
        if raw.is_error:
            raise ProviderError(f"{capability}: the tool reported an error: "
                                f"{text[:2000] or '(no message)'}", status=422,
                                error_code="ToolError", capability=capability,
                                provider=self.name)
        entry = self._entries[capability]
        if capability in self._structured:
            value = raw.structured_content
            # The SDK checked it against `checked`; ours stands in only if that was another.
            schema = None if checked == entry.output_schema else entry.output_schema
        else:
            value = {"text": text, "content": content,
                     "artifacts": [b["artifact"] for b in content if "artifact" in b]}
            schema = None if entry.output_schema is CONTENT_RESULT_SCHEMA else \
                entry.output_schema
        check_output(capability, schema, value)  # JSON data always; the schema if unchecked
        return value

    def with_entries(self, entries: Mapping[str, Capability]) -> None:
        """Adopt the final catalog entries (prices, effects, schemas after overrides)."""
        self._entries = {n: entries.get(n, e) for n, e in self._entries.items()}


def _block(block: Any, sink: ArtifactSink) -> dict[str, Any]:
    """One content block as JSON; binary data stored as an artifact and referenced."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return {"type": "text", "text": block.text}
    if kind in ("image", "audio"):
        return {"type": kind, "mime": block.mime_type,
                "artifact": sink.put(_b64(block.data), block.mime_type)}
    if kind == "resource":
        res = block.resource
        mime = res.mime_type or "application/octet-stream"
        if hasattr(res, "blob"):
            return {"type": "resource", "uri": str(res.uri), "mime": mime,
                    "artifact": sink.put(_b64(res.blob), mime)}
        return {"type": "resource", "uri": str(res.uri), "mime": mime, "text": res.text}
    if kind == "resource_link":
        return {"type": "resource_link", "uri": str(block.uri), "name": block.name,
                "mime": block.mime_type}
    dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    return dumped


def _b64(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ProviderError(f"an MCP content block carries data that is not base64: {exc}",
                            status=502, error_code="MalformedResponse") from exc
