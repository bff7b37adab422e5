"""A small MCP server written for the tests: `python fake.py LOG`.

Tools: `slow_write` (unannotated, so side-effecting: records the call in LOG, then sleeps),
`bad_shape` (declares an outputSchema and breaks it), `picture` (an image and a caption),
`fail` (a tool error), `environ` (the server's own environment), `tick` (idempotent), `shifty`
(read-only; answers ``{"n": "seven"}`` and declares ``n`` an integer on the server's first
start, a string on every later one), `exit` (read-only; the server exits in the middle of it).
Every executed call appends one line to LOG and the server's pid is written to LOG + ".pid" when
`slow_write` starts sleeping; each start appends a line to LOG + ".starts".
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import sys

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

LOG = sys.argv[1]
OBJ = {"type": "object"}


def record(line: str) -> None:
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(line + "\n")


def png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, "PNG")
    return buf.getvalue()


TOOLS = [
    types.Tool(name="slow_write", input_schema={
        "type": "object", "required": ["text"],
        "properties": {"text": {"type": "string"}, "seconds": {"type": "number"}}}),
    types.Tool(name="bad_shape", input_schema=OBJ, output_schema={
        "type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
        annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="picture", input_schema=OBJ,
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="fail", input_schema=OBJ),
    types.Tool(name="environ", input_schema=OBJ,
               annotations=types.ToolAnnotations(read_only_hint=True)),
    types.Tool(name="tick", input_schema=OBJ, annotations=types.ToolAnnotations(
        read_only_hint=False, idempotent_hint=True, destructive_hint=False,
        open_world_hint=False)),
]


def started_before() -> bool:
    with open(LOG + ".starts", "a+", encoding="utf-8") as f:
        f.seek(0)
        return bool(f.read())


FIRST_START = not started_before()
with open(LOG + ".starts", "a", encoding="utf-8") as starts:
    starts.write(f"{os.getpid()}\n")
SHIFTY = types.Tool(name="shifty", input_schema=OBJ, output_schema={
    "type": "object", "required": ["n"],
    "properties": {"n": {"type": "integer" if FIRST_START else "string"}}},
    annotations=types.ToolAnnotations(read_only_hint=True))
EXIT = types.Tool(name="exit", input_schema=OBJ,
                  annotations=types.ToolAnnotations(read_only_hint=True))


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[*TOOLS, SHIFTY, EXIT])


async def call_tool(ctx, params):
    name, args = params.name, params.arguments or {}
    record(f"{name} {args.get('text', '')}".strip())
    if name == "slow_write":
        with open(LOG + ".pid", "w", encoding="utf-8") as f:
            f.write(str(os.getpid()))
        await asyncio.sleep(float(args.get("seconds", 0)))
        return types.CallToolResult(content=[types.TextContent(type="text", text="wrote " + args["text"])])
    if name == "bad_shape":
        return types.CallToolResult(content=[types.TextContent(type="text", text="{}")],
                                    structured_content={"n": "not a number"})
    if name == "shifty":
        return types.CallToolResult(content=[types.TextContent(type="text", text="seven")],
                                    structured_content={"n": "seven"})
    if name == "exit":
        os._exit(0)
    if name == "picture":
        data = base64.b64encode(png()).decode()
        return types.CallToolResult(content=[
            types.TextContent(type="text", text="a red square"),
            types.ImageContent(type="image", data=data, mime_type="image/png")])
    if name == "environ":
        text = "\n".join(f"{k}={v}" for k, v in sorted(os.environ.items()))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
    if name == "fail":
        return types.CallToolResult(content=[types.TextContent(type="text", text="nope")],
                                    is_error=True)
    return types.CallToolResult(content=[types.TextContent(type="text", text="tick")])


async def main() -> None:
    server = Server("fake", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    asyncio.run(main())
