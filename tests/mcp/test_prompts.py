"""The MCP `write_script` prompt (issue 29): `prompts/list` and `prompts/get` over stdio with
the official client, rendering the skill document and this configuration's catalog."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from frostline.repair.prompt import authoring_skill
from tests.mcp.test_server import _streams, env, run_session

TOOLS = '''
from frostline.capabilities import capability

@capability("mine.slugify", price_usd=0.003, effect="read_only")
def slugify(text: str) -> dict:
    """Lowercase words joined by dashes."""
    return {"slug": "-".join(text.lower().split())}
'''


def test_issue29_write_script_prompt_renders_skill_and_configured_catalog(tmp_path: Path) -> None:
    (tmp_path / "mcptools.py").write_text(TOOLS)
    (tmp_path / "frostline.toml").write_text(
        '[providers.mine]\nkind = "python"\nmodule = "mcptools"\n')
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "frostline", "mcp", "--store",
                                      f"sqlite:///{tmp_path}/runs.db", "--config",
                                      str(tmp_path / "frostline.toml")],
        env=env(), cwd=str(tmp_path))
    seen: dict[str, Any] = {}

    async def body(session: ClientSession) -> None:
        await session.initialize()
        listed = await session.list_prompts()
        seen["names"] = [p.name for p in listed.prompts]
        got = await session.get_prompt("write_script", {"task": "slugify args.title"})
        seen["text"] = got.messages[0].content.text  # type: ignore[union-attr]
        bare = await session.get_prompt("write_script")
        seen["bare"] = bare.messages[0].content.text  # type: ignore[union-attr]
        with pytest.raises(MCPError, match="no prompt"):
            await session.get_prompt("nope")

    run_session(lambda: _streams(stdio_client(params)), body)
    assert seen["names"] == ["write_script"]
    text = seen["text"]
    assert authoring_skill() in text and "slugify args.title" in text
    assert "check_script" in text and "run_script" in text
    stubs = re.search(r"```python\n(\"\"\"frostline capabilities.*?)```", text, re.S)
    assert stubs is not None
    names = {n.name for n in ast.parse(stubs.group(1)).body
             if isinstance(n, ast.AsyncFunctionDef)}
    assert {"mine_slugify", "image_generate", "storyboard_plan"} <= names
    assert "ask for it" in seen["bare"]
