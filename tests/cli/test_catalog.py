"""`frostline catalog`, `catalog check`, and `--config` on run and repair, through CliRunner."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from frostline.cli import main
from frostline.store import open_store
from tests.cli.test_repair import FAILING, FIXED, RELOCATED
from tests.fakes.openai_server import FakeOpenAIServer, chat
from tests.providers.test_mcp import SERVERS

TIME = f"""
[providers.time]
kind = "mcp"
command = ["{sys.executable}", "-m", "mcp_server_time", "--local-timezone", "UTC"]

[capabilities."time.convert_time"]
price_usd = 0.001
"""


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)
    return result.exit_code, result.output


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "frostline.toml"
    path.write_text(text)
    return str(path)


def test_catalog_lists_what_a_config_yields(tmp_path):
    code, out = invoke("catalog", "--json", "--config", config(tmp_path, TIME))
    assert code == 0, out
    data = json.loads(out)
    rows = {r["name"]: r for r in data["capabilities"]}
    assert rows["time.get_current_time"]["provider"] == "time"
    assert rows["time.get_current_time"]["effect"] == "read_only"
    assert rows["time.convert_time"]["price_usd"] == 0.001
    assert rows["time.get_current_time"]["input_schema"]["required"] == ["timezone"]
    assert rows["echo"]["provider"] == "local" and data["config"].endswith("frostline.toml")
    code, out = invoke("catalog", "--config", config(tmp_path, TIME))
    assert code == 0 and "time.get_current_time" in out and "read_only" in out


def test_without_a_file_the_catalog_is_the_built_in_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FROSTLINE_CONFIG", raising=False)
    code, out = invoke("catalog", "--json")
    data = json.loads(out)
    assert code == 0 and data["config"] is None and len(data["capabilities"]) == 12  # nine and the three waits


def test_catalog_check_starts_each_server_and_reports_errors(tmp_path):
    code, out = invoke("catalog", "check", "--json", "--config", config(tmp_path, TIME))
    assert code == 0, out
    data = json.loads(out)
    assert data["ok"] and {"name": "time", "kind": "mcp", "capabilities": [
        "time.convert_time", "time.get_current_time"]} in data["providers"]
    bad = config(tmp_path, "[providers.x]\nkind = 'mcp'\n")
    code, out = invoke("catalog", "check", "--json", "--config", bad)
    err = json.loads(out)["error"]
    assert code == 2 and err["code"] == "config" and err["key"] == "providers.x.command"
    assert err["file"] == bad
    ghost = config(tmp_path, "[providers.ghost]\nkind = 'mcp'\ncommand = ['/no/such/bin']\n")
    code, out = invoke("catalog", "check", "--config", ghost)
    assert code == 1 and "ghost" in out


def test_run_uses_the_configured_providers(tmp_path, sqlite_url):
    log = tmp_path / "fake.log"
    cfg = config(tmp_path, f"""
[providers.fake]
kind = "mcp"
command = ["{sys.executable}", "{SERVERS / 'fake.py'}", "{log}"]
""")
    script = tmp_path / "s.py"
    script.write_text('async def orchestrate(ctx, args):\n'
                      '    return (await ctx.run("fake.picture", {}))["text"]\n')
    code, out = invoke("run", str(script), "--run", "r1", "--runner", "process", "--store",
                       sqlite_url, "--config", cfg, "--json")
    assert code == 0, out
    assert json.loads(out)["result"] == "a red square"
    code, out = invoke("run", str(script), "--run", "r2", "--runner", "process", "--store",
                       sqlite_url, "--json", env={"FROSTLINE_CONFIG": str(tmp_path / "none")})
    assert code == 2 and json.loads(out)["error"]["key"] == "$FROSTLINE_CONFIG"


def test_repair_uses_a_configured_model_endpoint(tmp_path, sqlite_url):
    from frostline.providers.local import LocalProviders
    from frostline.runtime.execute import execute
    from frostline.testing import InProcessRunner

    with open_store(sqlite_url) as store:
        assert execute(store, "e5", FAILING, args={"brief": "fox"}, providers=LocalProviders(),
                       runner=InProcessRunner()).status == "failed"
    with FakeOpenAIServer(api_key="sk-configured") as server:
        server.script(chat(RELOCATED), chat(FIXED))
        cfg = config(tmp_path, f"""
[models.fast]
base_url = "{server.url}"
api_key_env = "FAST_KEY"
model = "fast-model"
""")
        code, out = invoke("repair", "e5", "--model", "fast", "--store", sqlite_url, "--config",
                           cfg, "--json", "--relocation", "stop", env={"FAST_KEY": "sk-configured"})
        requests = list(server.requests)
    assert code == 0, out
    assert json.loads(out)["accepted"] is not None
    assert [r.body["model"] for r in requests] == ["fast-model", "fast-model"]
    assert requests[0].headers["authorization"] == "Bearer sk-configured"
    code, out = invoke("repair", "e5", "--model", "model:slow", "--store", sqlite_url,
                       "--config", cfg, "--json")
    assert code == 2 and "not configured" in json.loads(out)["error"]["message"]


TOOLS = '''
from frostline.capabilities import capability

@capability("mine.slugify", price_usd=0.003, effect="read_only")
def slugify(text: str, sep: str = "-") -> dict:
    """Lowercase words joined by a separator."""
    return {"slug": sep.join(text.lower().split())}
'''


def test_issue29_catalog_python_renders_the_configured_catalog(tmp_path, monkeypatch):
    import ast

    name = f"tools_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(TOOLS)
    monkeypatch.syspath_prepend(str(tmp_path))
    path = config(tmp_path, f'[providers.mine]\nkind = "python"\nmodule = "{name}"\n\n'
                            '[capabilities."mine.slugify"]\napproval = "required"\n')
    try:
        code, out = invoke("catalog", "--python", "--config", path)
    finally:
        sys.modules.pop(name, None)
    assert code == 0, out
    tree = ast.parse(out)  # valid Python
    names = {n.name for n in tree.body if isinstance(n, ast.AsyncFunctionDef)}
    assert "mine_slugify" in names and "image_generate" in names and "echo" in names
    assert len(names) == 13  # the built-in twelve and the configured one
    assert 'await ctx.run("mine.slugify", {"text": ...})' in out
    assert "Price: $0.003 per call." in out and "Approval: a person approves each call" in out
    assert "async def mine_slugify(*, text: str, sep: str = ...)" in out
    code, out = invoke("catalog", "--python", "--json", "--config", path)
    assert code == 2 and "pick one" in out
