"""The script process: ``python -m frostline.runtime.child READ_FD WRITE_FD``.

It reads one `job` frame (annotated source, args, nonce, limits) from READ_FD, executes the
source in a namespace whose builtins are only the allowlisted ones (defence in depth: the
checker already rejected everything else, and the sandbox removes what the checker might
miss), runs ``orchestrate(ctx, args)`` under asyncio with a ctx whose transport speaks the
framed RPC of frostline.runtime.rpc, and reports a `done` frame. It holds no credential, no
store and no provider: every effect is a request to the host.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import sys
import threading
import traceback
from collections.abc import Callable, Coroutine
from typing import Any

from frostline.contract.jsonshape import storable_refusal
from frostline.errors import (
    FrostlineError,
    ResultTooDeep,
    RunStopped,
)
from frostline.errors import (
    ResultTooLarge as ResultTooLarge,
)
from frostline.errors import (
    ScriptLoadError as ScriptLoadError,
)
from frostline.runtime.ctx import Ctx, Reply
from frostline.runtime.rpc import MAX_RESULT, Channel, ProtocolError, json_size

# R08's allowlist, plus the exception classes a script may name in `except` clauses. Spelled
# out rather than imported from frostline.script, which would load the whole checker into
# every script process; tests/runtime/test_child_builtins.py keeps the two lists equal.
SAFE_BUILTIN_NAMES = (
    "len", "range", "enumerate", "zip", "min", "max", "sum", "sorted", "reversed", "abs",
    "round", "int", "float", "str", "bool", "list", "dict", "tuple", "any", "all",
    "isinstance", "map", "filter", "set", "frozenset",
    "Exception", "ValueError", "KeyError", "IndexError", "TypeError", "RuntimeError",
    "LookupError", "ArithmeticError", "ZeroDivisionError", "AssertionError",
)

Entry = Callable[[Ctx, Any], Coroutine[Any, Any, Any]]


def safe_builtins() -> dict[str, Any]:
    return {name: getattr(builtins, name) for name in SAFE_BUILTIN_NAMES}


def load_entry(source: str) -> Entry:
    """Execute the module body of `source` with the restricted builtins; return orchestrate."""
    namespace: dict[str, Any] = {"__builtins__": safe_builtins(), "__name__": "frostline_script"}
    try:
        code = compile(source, "<script>", "exec")
        exec(code, namespace)
    except Exception as exc:
        raise ScriptLoadError(f"the script could not be loaded: {type(exc).__name__}: {exc}") from exc
    entry = namespace.get("orchestrate")
    if not callable(entry) or not asyncio.iscoroutinefunction(entry):
        raise ScriptLoadError("the script must define `async def orchestrate(ctx, args)`")
    return entry  # type: ignore[no-any-return]


def error_dict(exc: BaseException) -> dict[str, Any]:
    """The JSON shape of a script failure, with the script's own frames (line, function)."""
    if isinstance(exc, RunStopped):
        out: dict[str, Any] = {"type": "RunStopped", "message": str(exc), "stop": exc.error}
    elif isinstance(exc, FrostlineError):
        out = exc.to_dict()
    else:
        out = {"type": type(exc).__name__, "message": str(exc)}
    frames = [{"line": f.lineno, "function": f.name}
              for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<script>"]
    if frames:
        out["script_frames"] = frames
    return out


async def run_entry(entry: Entry, ctx: Ctx, args: Any) -> Any:
    """Run orchestrate; check the result can cross the boundary."""
    result = await entry(ctx, args)
    refused = storable_refusal(result, "the script's result", too_deep=ResultTooDeep)
    if refused is not None and refused.reason != "not_json":
        raise refused  # no store holds it (the host checks again: this side is untrusted)
    try:
        size = json_size(result)
    except (TypeError, ValueError) as exc:
        raise ScriptLoadError(f"orchestrate returned a value that is not JSON data: {exc}") from None
    if size > MAX_RESULT:
        raise ResultTooLarge(
            f"orchestrate returned {size} bytes of JSON, over the {MAX_RESULT}-byte (4 MiB) cap "
            "on a script's result; return artifact refs or a summary instead of the data",
            size=size, cap=MAX_RESULT)
    return result


class RpcTransport:
    """The child's side of the RPC: one future per outstanding request, filled by a reader
    thread."""

    def __init__(self, channel: Channel, nonce: str, loop: asyncio.AbstractEventLoop) -> None:
        self._channel = channel
        self._nonce = nonce
        self._loop = loop
        self._pending: dict[int, asyncio.Future[Reply]] = {}
        self._next = 0
        self._closed: str | None = None

    async def call(self, site: str, path: list[int], capability: str,
                   payload: dict[str, Any]) -> Reply:
        return await self._request({"type": "call", "site": site, "path": path,
                                    "capability": capability, "payload": payload})

    async def decide(self, path: list[int], value: int) -> Reply:
        return await self._request({"type": "decide", "path": path, "value": value})

    async def _request(self, frame: dict[str, Any]) -> Reply:
        if self._closed is not None:
            raise RunStopped({"kind": "stop", "type": "ProtocolError", "message": self._closed})
        self._next += 1
        rid = self._next
        fut: asyncio.Future[Reply] = self._loop.create_future()
        self._pending[rid] = fut
        try:
            self._channel.send({**frame, "id": rid, "nonce": self._nonce})
        except (OSError, ProtocolError) as exc:
            self._pending.pop(rid, None)
            raise RunStopped({"kind": "stop", "type": "ProtocolError",
                              "message": f"could not reach the host: {exc}"}) from None
        try:
            return await fut
        finally:
            self._pending.pop(rid, None)

    def deliver(self, frame: dict[str, Any]) -> None:
        """Called on the loop thread with a `reply` frame."""
        fut = self._pending.get(frame.get("id", -1))
        if fut is not None and not fut.done():
            fut.set_result(frame)

    def close(self, reason: str) -> None:
        """The host went away: every waiting call stops."""
        self._closed = reason
        for fut in list(self._pending.values()):
            if not fut.done():
                fut.set_result({"ok": False, "error": {"kind": "stop", "type": "ProtocolError",
                                                       "message": reason}})


def _reader(channel: Channel, nonce: str, transport: RpcTransport,
            loop: asyncio.AbstractEventLoop) -> None:
    reason = "the host closed the channel"
    try:
        while True:
            frame = channel.receive()
            if frame is None:
                break
            if frame.get("type") == "reply" and frame.get("nonce") == nonce:
                loop.call_soon_threadsafe(transport.deliver, frame)
    except RuntimeError:  # the loop finished while a late reply arrived
        return
    except (OSError, ProtocolError) as exc:
        reason = f"channel error: {exc}"
    with contextlib.suppress(RuntimeError):  # the loop may already have finished
        loop.call_soon_threadsafe(transport.close, reason)


async def _serve(channel: Channel, job: dict[str, Any]) -> dict[str, Any]:
    nonce = str(job["nonce"])
    loop = asyncio.get_running_loop()
    transport = RpcTransport(channel, nonce, loop)
    threading.Thread(target=_reader, args=(channel, nonce, transport, loop), daemon=True,
                     name="frostline-rpc-reader").start()
    limits = job.get("limits") or {}
    ctx = Ctx(transport, concurrency=int(limits.get("concurrency", 8)),
              max_fanout=int(limits.get("max_fanout", 64)))
    try:
        entry = load_entry(str(job["source"]))
        result = await run_entry(entry, ctx, job.get("args"))
    except BaseException as exc:  # report everything, including RunStopped
        return {"type": "done", "nonce": nonce, "ok": False, "error": error_dict(exc)}
    return {"type": "done", "nonce": nonce, "ok": True, "result": result}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m frostline.runtime.child READ_FD WRITE_FD", file=sys.stderr)
        return 2
    channel = Channel(int(args[0]), int(args[1]))
    job = channel.receive()
    if job is None or job.get("type") != "job" or not isinstance(job.get("nonce"), str):
        print("frostline child: no job frame received", file=sys.stderr)
        return 2
    done = asyncio.run(_serve(channel, job))
    try:
        channel.send(done)
    except ProtocolError as exc:  # e.g. an oversized error message: report something small
        channel.send({"type": "done", "nonce": job["nonce"], "ok": False,
                      "error": {"type": "ProtocolError", "message": str(exc)[:2000]}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
