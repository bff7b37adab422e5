"""docs/configuration.md's "Your own capabilities" section (moved there from the README, issue
27) works as written: its frostline.toml and mytools.py, dropped into a git repository, give the
catalog it describes, and a run calls the MCP server and the Python function it declares; and
docs/mcp.md's client snippet starts `frostline mcp` with flags it accepts."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
async def orchestrate(ctx, args):
    status = await ctx.run("git.git_status", {"repo_path": "."})
    slug = await ctx.run("mine.slugify", {"text": "Hello Frost Line"})
    return [slug["slug"], "On branch" in status["text"]]
"""


def blocks(page: str, section: str | None = None) -> dict[str, str]:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    body = text if section is None else text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return {lang: code for lang, code in re.findall(r"```(\w*)\n(.*?)```", body, re.S)}


@pytest.mark.timeout(180)
def test_the_readme_configuration_works_as_written(tmp_path):
    pytest.importorskip("mcp_server_git")
    found = blocks("configuration.md", "Your own capabilities")
    (tmp_path / "frostline.toml").write_text(found["toml"])
    (tmp_path / "mytools.py").write_text(found["python"])
    (tmp_path / "status.py").write_text(SCRIPT)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), "HOME": str(tmp_path),
           "OPENAI_API_KEY": "sk-placeholder-never-sent"}
    frostline = [sys.executable, "-m", "frostline"]
    listed = subprocess.run([*frostline, "catalog", "--json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr + listed.stdout
    rows = {r["name"]: r for r in json.loads(listed.stdout)["capabilities"]}
    assert (rows["image.generate"]["provider"], rows["image.generate"]["price_usd"]) == (
        "openai", 0.04)
    assert (rows["git.git_status"]["provider"], rows["git.git_status"]["effect"]) == (
        "git", "read_only")
    assert rows["git.git_commit"]["effect"] == "side_effecting"
    assert (rows["mine.slugify"]["provider"], rows["mine.slugify"]["effect"]) == (
        "mine", "read_only")
    ran = subprocess.run([*frostline, "run", "status.py", "--run", "r1", "--runner", "process",
                          "--json"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    assert json.loads(ran.stdout)["result"] == ["hello-frost-line", True]


def test_the_readme_mcp_client_snippet_starts_frostline_mcp():
    snippet = json.loads(blocks("mcp.md")["json"])
    server = snippet["mcpServers"]["frostline"]
    assert server["command"] == "frostline" and server["args"][0] == "mcp"
    from frostline.cli.mcp import mcp

    accepted = {opt for p in mcp.params for opt in getattr(p, "opts", [])}
    assert {a for a in server["args"][1:] if a.startswith("--")} <= accepted
