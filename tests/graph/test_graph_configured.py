"""Configured capabilities answer the graph tools a bodies module leaves out, both through the
broker (durable runs) and in memory."""

from __future__ import annotations

import asyncio

from frostline.capabilities import capability
from frostline.capabilities.provider import CallContext
from frostline.config import parse_config
from frostline.graph.configured import configured_tools
from frostline.graph.durable import GraphTool, ToolProvider
from frostline.providers.registry import open_registry

CALLS: list[dict[str, object]] = []


@capability("test.run", effect="read_only")
def run_tests(target: str) -> dict[str, object]:
    """Pretend to run a test suite."""
    CALLS.append({"target": target})
    return {"failed": 0, "target": target}


class Sink:
    def put(self, data: bytes, mime: str) -> str:
        return "sha256:" + "0" * 64

    def get(self, ref: str) -> tuple[bytes, str] | None:
        return None


def test_configured_capabilities_fill_the_tools_the_bodies_leave_out():
    config = parse_config({"providers": {"py": {"kind": "python", "module": __name__}}})
    CALLS.clear()
    with open_registry(config) as registry:
        own = {"patch.apply": lambda payload: {"applied": True}}
        durable = configured_tools(registry, ["test.run", "patch.apply", "nothing.here"], own,
                                   durable=True)
        assert set(durable) == {"test.run"}  # the bodies' own tool wins; unknown names stay out
        tool = durable["test.run"]
        assert isinstance(tool, GraphTool) and tool.side_effecting is False
        assert tool.input_schema["required"] == ["target"]
        produced = asyncio.run(ToolProvider(durable).invoke(
            "test.run", {"target": "calc"}, CallContext("g", "TEST@1#0", None, Sink())))
        assert produced.result == {"failed": 0, "target": "calc"}
        local = configured_tools(registry, ["test.run"], {}, durable=False)["test.run"]
        assert local({"target": "calc2"}) == {"failed": 0, "target": "calc2"}
    assert CALLS == [{"target": "calc"}, {"target": "calc2"}]
