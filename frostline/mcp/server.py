"""The MCP server: the nine tools, runs and artifacts as resources, and the two transports.

Built on the `mcp` SDK's low-level `Server`, so each tool's input schema and annotations are
written here as the contract they are:

    tool            readOnly  idempotent  what it does
    catalog         yes       yes         capabilities with schemas, prices, effects; the skill
    check_script    yes       yes         the checker's violations with fix hints
    run_script      no        no          one attempt (replays committed calls); `run --json`
    gate_script     yes       yes         frozen-site counterexamples, nothing spent
    show_run        yes       yes         `show --json`
    reconcile_call  no        no          write back or abandon an unresolved call
    approve         no        no          approve or reject what a waiting run asks, once
    signal          no        no          send an event to a run (kept until a wait takes it)
    cancel_run      no        yes         stop a run's attempt or job; it ends `cancelled`

`run_script` also declares whether it may be destructive or reach the open world: true when the
configured catalog has a side-effecting capability, or a provider outside this host.

Prompts: ``write_script`` (argument ``task``, optional) renders the skill document and this
configuration's catalog as typed Python stubs (frostline.repair.signatures), for a client agent
that writes scripts itself, then checks and runs them with the tools.

Resources: ``frostline://runs/{run_id}`` (JSON) and ``frostline://artifacts/{sha256}`` (the
bytes with their MIME type: an image is an image). A run's result that references images also
returns them as image content, so a client can show what the run made.

Over streamable HTTP every request carries a bearer token, and everything a request does is
done for the token's principal (`frostline.mcp.serve` authenticates it): its runs, its
artifacts, its names. Another principal's run is not found. On stdio the client is the local
principal.

Each principal is held to the HTTP API's limits (`frostline.embedded.limits`, from
``[service.limits]``): `executing_attempts` run_script calls at once (a call beyond is refused
at once with `too_many_requests`, never queued), `runs_per_minute` new runs, and
`answers_per_minute` signals and approvals. Tools run on threads of the principal's own
(`executing_attempts` for run_script, `TOOL_THREADS` for the others, and as many again for
resources), never on a pool shared by all: one principal's flood of calls waits on its own threads while another's `catalog`
answers at once.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server

from frostline import __version__
from frostline.contract.records import LOCAL_PRINCIPAL, RUN_NAME_PATTERN, run_key
from frostline.embedded.bodies import Interrupts
from frostline.embedded.jobs import JobQueue
from frostline.embedded.limits import PrincipalLimits, ServiceLimits
from frostline.errors import FrostlineError
from frostline.mcp import operations as ops
from frostline.providers.registry import CapabilityRegistry
from frostline.runtime.runners import Runner
from frostline.store.base import Store

RUN_URI, ARTIFACT_URI = ops.RUN_URI, "frostline://artifacts/"
RESULT_URI = re.compile(r"(?P<run>[^/]+)/attempts/(?P<number>[0-9]{1,9})/result")
MAX_IMAGES = 4
TOOL_THREADS = 4  # per principal, for every tool but run_script
_RUN_ID = {"type": "string", "pattern": RUN_NAME_PATTERN,
           "description": "The run; reuse it to send a repair of a failed run."}
_SCRIPT = {"type": "string", "minLength": 1, "maxLength": 262144,
           "description": "The script: async def orchestrate(ctx, args): ..."}
_RELOCATION = {"type": "string", "enum": ["stop", "rebind"],
               "description": "What a gate stop caused only by moved committed calls becomes "
                              "(default: the run's envelope): 'rebind' lets a dry replay admit "
                              "a moved call whose request is unchanged"}
Handler = Callable[[dict[str, Any], str | None], Awaitable[Any]]  # (arguments, principal)

INSTRUCTIONS = (
    "frostline executes scripts that call paid capabilities under a revision contract. Read "
    "`catalog` first, write `async def orchestrate(ctx, args)`, `check_script` it, then "
    "`run_script` it under a run id. When a run fails, send a repaired script under the SAME "
    "run id: committed calls replay for free, and `gate_script` tells you beforehand whether "
    "the repair keeps every frozen call. Never change a committed call's payload.")


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str], *,
          read_only: bool, idempotent: bool, destructive: bool = False,
          open_world: bool = False) -> types.Tool:
    return types.Tool(
        name=name, description=description,
        input_schema={"type": "object", "properties": properties, "required": required,
                      "additionalProperties": False},
        annotations=types.ToolAnnotations(read_only_hint=read_only, idempotent_hint=idempotent,
                                          destructive_hint=destructive,
                                          open_world_hint=open_world))


def tools(registry: CapabilityRegistry) -> list[types.Tool]:
    """The tool list, with annotations that tell the truth about this configuration."""
    destructive = any(c.effect == "side_effecting" for c in registry.catalog)
    open_world = any(kind != "local" for kind in registry.kinds.values())
    return [
        _tool("catalog", "The capabilities a script may call (payload schemas, prices, effect "
              "classes) and how to write a script.", {}, [], read_only=True, idempotent=True),
        _tool("check_script", "Check a script statically; returns every violation with its "
              "rule, line and a fix hint. Runs nothing.", {"script": _SCRIPT}, ["script"],
              read_only=True, idempotent=True),
        _tool("run_script", "Run a script as the next attempt of run_id. Committed calls of "
              "earlier attempts replay without being paid again; the result is the same object "
              "as `frostline run --json` (status, executed and replayed counts, gate "
              "counterexamples, divergences, result).",
              {"run_id": _RUN_ID, "script": _SCRIPT,
               "args": {"description": "JSON passed as args (default: the run's last args)"},
               "envelope": {"type": "object", "description": "grants, budget, relocation "
                            "('stop' | 'rebind'), ... (only when the run is created)"},
               "relocation": _RELOCATION},
              ["run_id", "script"], read_only=False, idempotent=False,
              destructive=destructive, open_world=open_world),
        _tool("gate_script", "Whether a candidate script keeps every frozen call of run_id; "
              "counterexamples if not. Under relocation 'rebind', a candidate that only moves "
              "committed calls gets a dry replay (no provider reachable). Spends nothing.",
              {"run_id": _RUN_ID, "script": _SCRIPT, "relocation": _RELOCATION},
              ["run_id", "script"], read_only=True, idempotent=True),
        _tool("show_run", "A run's attempts, each identity's outcome per attempt, unresolved "
              "calls and catalog changes.", {"run_id": _RUN_ID}, ["run_id"], read_only=True,
              idempotent=True),
        _tool("reconcile_call", "Resolve an unresolved call of run_id: `result` writes back what "
              "the provider is known to have produced; `abandon` allows one re-execution.",
              {"run_id": _RUN_ID, "identity": {"type": "string", "description":
                                               "SITE@PATH:OCCURRENCE, as show_run lists it"},
               "result": {"description": "the known result (JSON)"},
               "abandon": {"type": "boolean"}}, ["run_id", "identity"], read_only=False,
              idempotent=False),
        _tool("approve", "Approve (or with approved=false reject) the approval a waiting run "
              "asks at `identity` (show_run lists its waits). One answer per wait: a second is "
              "refused. Then run_script with the run's script goes on from the wait. Who may "
              "answer is configured: by default a second party (a token with the approver "
              "role) answers, naming the run's `owner`, and a run's owner not its own.",
              {"run_id": _RUN_ID, "identity": {"type": "string", "description":
                                               "the wait's identity, as show_run lists it"},
               "owner": {"type": "string", "maxLength": 200,
                         "description": "the run's owner, when it is another principal's"},
               "approved": {"type": "boolean", "default": True},
               "reason": {"type": "string", "maxLength": 2000}},
              ["run_id", "identity"], read_only=False, idempotent=False),
        _tool("signal", "Send the event `name` with the JSON body `data` to a run: the "
              "earliest event.wait for that name receives it, or it is kept until one is "
              "reached.", {"run_id": _RUN_ID, "name": {"type": "string"},
                           "data": {"description": "the event's body (JSON)"}},
              ["run_id", "name", "data"], read_only=False, idempotent=False),
        _tool("cancel_run", "Cancel run_id: its running attempt is stopped (every call it "
              "already dispatched completes and commits first) and ends `cancelled`; a queued "
              "job never starts; a waiting run is cancelled. A finished run has nothing to "
              "cancel (error nothing_to_cancel).", {"run_id": _RUN_ID}, ["run_id"],
              read_only=False, idempotent=True),
    ]


def build_server(store: Store, registry: CapabilityRegistry, runner: Runner, *,
                 limits: ServiceLimits | None = None,
                 queue: JobQueue | None = None) -> Server[Any]:
    """The MCP server over `store`, the configured capabilities and `runner`, holding each
    principal to `limits` (default `ServiceLimits()`); `queue` is where cancel_run finds a
    run's job (Procrastinate's, on a PostgreSQL store with workers).

    Example::

        server = build_server(store, registry, SandboxRunner())
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    """
    listed = tools(registry)
    admit = _Admission(limits or ServiceLimits())
    handlers = _handlers(store, registry, runner, admit, queue)
    schemas = {t.name: t.input_schema for t in listed}

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        handler = handlers.get(params.name)
        if handler is None:
            return _error({"code": "unknown_tool", "message": f"no tool {params.name!r}"})
        who, arguments = principal_of(ctx), dict(params.arguments or {})
        if params.name == "approve":  # decided by the token's roles, never by an argument
            arguments["roles"] = roles_of(ctx)
        try:
            value = await handler(arguments, who)
        except FrostlineError as err:
            return _error(err.to_dict())
        content: list[Any] = [types.TextContent(type="text", text=json.dumps(value, default=str))]
        if params.name == "run_script":
            content.extend(await anyio.to_thread.run_sync(
                _images, store, value.get("result"), who,
                limiter=admit.threads(who or LOCAL_PRINCIPAL, "images")))
        return types.CallToolResult(content=content, structured_content=value)

    return Server(
        "frostline", version=__version__, instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get, on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_prompts=_list_prompts, on_get_prompt=_get_prompt(registry),
        on_list_resources=_list_resources(store, admit),
        on_list_resource_templates=_list_templates,
        on_read_resource=_read_resource(store, admit))


WRITE_SCRIPT = types.Prompt(
    name="write_script",
    description="Write a frostline script: the skill document (the language and rules "
                "R00-R12) and this server's capability catalog as typed Python stubs.",
    arguments=[types.PromptArgument(name="task", required=False,
                                    description="What the script should do.")])


async def _list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=[WRITE_SCRIPT])


def _get_prompt(registry: CapabilityRegistry
                ) -> Callable[[Any, types.GetPromptRequestParams], Awaitable[types.GetPromptResult]]:
    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        from mcp.shared.exceptions import MCPError

        if params.name != WRITE_SCRIPT.name:
            raise MCPError(code=types.INVALID_PARAMS,
                           message=f"no prompt {params.name!r}; prompts: {WRITE_SCRIPT.name}")
        task = (params.arguments or {}).get("task") or ""
        try:
            text = ops.write_script_prompt(registry.catalog, str(task))
        except FrostlineError as err:
            raise MCPError(code=types.INVALID_PARAMS, message=err.message) from err
        return types.GetPromptResult(description=WRITE_SCRIPT.description, messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))])
    return get_prompt


def principal_of(ctx: Any) -> str | None:
    """The principal a request acts for: the one its bearer token authenticated over HTTP
    (`frostline.mcp.serve` puts it on the request), None on stdio and without authentication
    (the local principal)."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    return user.access_token.client_id if isinstance(user, AuthenticatedUser) else None


def roles_of(ctx: Any) -> tuple[str, ...]:
    """The roles of the request's bearer token (its scopes, see `frostline.mcp.serve`); none
    on stdio."""
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

    scope = getattr(getattr(ctx, "request", None), "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    return tuple(user.access_token.scopes) if isinstance(user, AuthenticatedUser) else ()


class _Admission:
    """Each principal's limits and threads (see the module's note)."""

    def __init__(self, limits: ServiceLimits) -> None:
        self.limits = PrincipalLimits(limits)
        self.interrupts = Interrupts()  # the run_script calls running here, for cancel_run
        self._threads: dict[tuple[str, str], anyio.CapacityLimiter] = {}

    def threads(self, who: str, tool: str) -> anyio.CapacityLimiter:
        pool = {"run_script": "runs", "images": "reads", "resources": "reads"}.get(tool, "tools")
        found = self._threads.get((who, pool))
        if found is None:  # made on the event loop, whose thread alone touches this dict
            size = self.limits.limits.executing_attempts if pool == "runs" else TOOL_THREADS
            found = self._threads[(who, pool)] = anyio.CapacityLimiter(size)
        return found


def _handlers(store: Store, registry: CapabilityRegistry, runner: Runner, admit: _Admission,
              queue: JobQueue | None) -> dict[str, Handler]:
    def blocking(name: str, fn: Callable[..., Any], *, owned: bool = True) -> Handler:
        # A run blocks for its whole attempt (it has its own event loop); keep it off ours,
        # on the principal's own threads.
        async def call(args: dict[str, Any], who: str | None) -> Any:
            kwargs = {**args, "owner": who} if owned else args
            principal = who or LOCAL_PRINCIPAL
            work = functools.partial(anyio.to_thread.run_sync, functools.partial(fn, **kwargs),
                                     limiter=admit.threads(principal, name))
            if name != "run_script":
                return await work()
            # The slot is taken before a thread is: beyond the limit a call is refused at
            # once, never queued behind the principal's running scripts.
            with admit.limits.attempt_slot(principal):
                return await work()
        return call

    def run_script(**kwargs: Any) -> Any:
        run_id = kwargs.get("run_id")
        if isinstance(run_id, str) and store.get_run(run_key(kwargs.get("owner"),
                                                             run_id)) is None:
            admit.limits.admit_run(kwargs.get("owner") or LOCAL_PRINCIPAL)
        return ops.run_script(store, registry, runner, interrupts=admit.interrupts, **kwargs)

    def answered(fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(**kwargs: Any) -> Any:
            admit.limits.admit_answer(kwargs.get("owner") or LOCAL_PRINCIPAL)
            return fn(store, **kwargs)
        return call

    return {
        "catalog": blocking("catalog", lambda: ops.catalog_view(registry), owned=False),
        "check_script": blocking("check_script",
                                 lambda script: ops.check_script(registry, script),
                                 owned=False),
        "run_script": blocking("run_script", run_script),
        "gate_script": blocking("gate_script", functools.partial(ops.gate_script, store,
                                                                  runner=runner)),
        "show_run": blocking("show_run", functools.partial(ops.show_run, store)),
        "reconcile_call": blocking("reconcile_call",
                                   functools.partial(ops.reconcile_call, store)),
        "approve": _renamed(blocking("approve", answered(functools.partial(
            ops.approve, policy=registry.config.approvals))), owner="run_owner"),
        "signal": blocking("signal", answered(ops.signal)),
        "cancel_run": blocking("cancel_run", functools.partial(
            ops.cancel_run, store, local=admit.interrupts, queue=queue)),
    }


def _renamed(handler: Handler, **names: str) -> Handler:
    """`handler` with the tool's arguments renamed (`owner` is the caller's in every handler)."""
    async def call(args: dict[str, Any], who: str | None) -> Any:
        return await handler({names.get(k, k): v for k, v in args.items()}, who)
    return call


def _error(error: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps({"error": error}, default=str)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                is_error=True)


def _images(store: Store, value: Any, owner: str | None) -> list[types.ImageContent]:
    """Image content for the image artifacts a run's result references (the first few)."""
    refs: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            ref = v.get("artifact")
            if isinstance(ref, str) and str(v.get("mime", "image/")).startswith("image/"):
                refs.append(ref)
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(value)
    out: list[types.ImageContent] = []
    for ref in dict.fromkeys(refs):
        try:
            stored = ops.owned_artifact(store, ref, owner)
        except FrostlineError:  # not an artifact reference after all
            continue
        if stored is not None and stored[1].startswith("image/") and len(out) < MAX_IMAGES:
            out.append(types.ImageContent(type="image", mime_type=stored[1],
                                          data=base64.b64encode(stored[0]).decode()))
    return out


def _list_resources(store: Store, admit: _Admission
                    ) -> Callable[[Any, Any], Awaitable[types.ListResourcesResult]]:
    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        who = principal_of(ctx)
        runs = await anyio.to_thread.run_sync(ops.owned_runs, store, who, limiter=admit.threads(
            who or LOCAL_PRINCIPAL, "resources"))
        return types.ListResourcesResult(resources=[
            types.Resource(uri=f"{RUN_URI}{r.name}", name=f"run {r.name}",
                           description=f"{r.kind} run, {r.status}", mime_type="application/json")
            for r in runs])
    return list_resources


async def _list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=[
        types.ResourceTemplate(uri_template=RUN_URI + "{run_id}", name="run",
                               mime_type="application/json",
                               description="A run as show_run describes it."),
        types.ResourceTemplate(uri_template=RUN_URI + "{run_id}/attempts/{number}/result",
                               name="attempt result", mime_type="application/json",
                               description="One attempt's result, whole (show_run leaves out "
                                           "a result over 64 KiB and points here)."),
        types.ResourceTemplate(uri_template=ARTIFACT_URI + "{sha256}", name="artifact",
                               description="An artifact's bytes (an image is an image).")])


def _read_resource(store: Store, admit: _Admission
                   ) -> Callable[[Any, types.ReadResourceRequestParams],
                                 Awaitable[types.ReadResourceResult]]:
    async def read(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        from mcp.shared.exceptions import MCPError

        uri, who = str(params.uri), principal_of(ctx)
        threads = admit.threads(who or LOCAL_PRINCIPAL, "resources")
        try:
            result = RESULT_URI.fullmatch(uri[len(RUN_URI):]) if uri.startswith(RUN_URI) else None
            if result is not None:
                value = await anyio.to_thread.run_sync(functools.partial(
                    ops.attempt_result, store, result["run"], int(result["number"]), owner=who),
                    limiter=threads)
                return types.ReadResourceResult(contents=[types.TextResourceContents(
                    uri=uri, mime_type="application/json", text=json.dumps(value))])
            if uri.startswith(RUN_URI):
                run = await anyio.to_thread.run_sync(functools.partial(
                    ops.show_run, store, uri[len(RUN_URI):], owner=who), limiter=threads)
                return types.ReadResourceResult(contents=[types.TextResourceContents(
                    uri=uri, mime_type="application/json", text=json.dumps(run, default=str))])
            if uri.startswith(ARTIFACT_URI):
                stored = await anyio.to_thread.run_sync(
                    ops.owned_artifact, store, "sha256:" + uri[len(ARTIFACT_URI):], who,
                    limiter=threads)
                if stored is not None:
                    return types.ReadResourceResult(contents=[types.BlobResourceContents(
                        uri=uri, mime_type=stored[1], blob=base64.b64encode(stored[0]).decode())])
        except FrostlineError as err:
            raise MCPError(code=types.INVALID_PARAMS, message=err.message) from err
        raise MCPError(code=types.INVALID_PARAMS, message=f"no resource {uri}")
    return read
