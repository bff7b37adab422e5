"""Issue 27 §2, the newcomer's path on the command line: each journey a new user takes in a
fresh clone, run as that user runs it (a real `frostline` child process in a scratch folder)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

TOML = """
[providers.mine]
kind = "python"
module = "mytools"
"""
TOOLS = '''
from frostline.capabilities import capability

@capability("mine.slugify", effect="read_only")
def slugify(text: str) -> dict:
    """Lowercase words joined by dashes."""
    return {"slug": "-".join(text.lower().split())}
'''
SLUG = """
async def orchestrate(ctx, args):
    return await ctx.run("mine.slugify", {"text": "Hello Frost Line"})
"""


def frostline(*args: str, cwd: Path, env: dict[str, str] | None = None,
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    base = {"PATH": os.environ["PATH"], "PYTHONPATH": f"{ROOT}{os.pathsep}{cwd}",
            "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", "frostline", *args], cwd=cwd,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder holding a configuration that adds `mine.slugify`, and a script calling it."""
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "mine.toml").write_text(TOML)
    (tmp_path / "mytools.py").write_text(TOOLS)
    (tmp_path / "slug.py").write_text(SLUG)
    (tmp_path / "empty.toml").write_text("builtin = true\n")
    return tmp_path


def _r11(done: subprocess.CompletedProcess[str]) -> list[str]:
    report = json.loads(done.stdout)
    return [v["message"] for v in report["violations"] if v["rule"] == "R11"]


def test_issue27_check_reads_the_configuration_with_the_precedence_of_run(project):
    # No configuration anywhere: the built-in catalog has no mine.slugify.
    bare = frostline("check", "slug.py", "--json", cwd=project)
    assert bare.returncode == 6 and "not in the catalog" in _r11(bare)[0]
    # --config FILE
    flag = frostline("check", "slug.py", "--config", "conf/mine.toml", "--json", cwd=project)
    assert flag.returncode == 0 and _r11(flag) == [], flag.stdout + flag.stderr
    # $FROSTLINE_CONFIG
    env = frostline("check", "slug.py", "--json", cwd=project,
                    env={"FROSTLINE_CONFIG": "conf/mine.toml"})
    assert env.returncode == 0, env.stdout + env.stderr
    # the flag wins over the variable
    both = frostline("check", "slug.py", "--config", "empty.toml", "--json", cwd=project,
                     env={"FROSTLINE_CONFIG": "conf/mine.toml"})
    assert both.returncode == 6 and _r11(both)
    # ./frostline.toml, and the variable wins over it
    (project / "frostline.toml").write_text(TOML)
    local = frostline("check", "slug.py", "--json", cwd=project)
    assert local.returncode == 0, local.stdout + local.stderr
    over = frostline("check", "slug.py", "--json", cwd=project,
                     env={"FROSTLINE_CONFIG": "empty.toml"})
    assert over.returncode == 6 and _r11(over)
    # and `run` agrees with `check` under the same file
    ran = frostline("run", "slug.py", "--run", "r1", "--runner", "process", "--json",
                    cwd=project)
    assert ran.returncode == 0 and json.loads(ran.stdout)["result"] == {
        "slug": "hello-frost-line"}, ran.stdout + ran.stderr


def test_issue27_check_names_a_missing_configuration_file(project):
    done = frostline("check", "slug.py", "--config", "nope.toml", cwd=project)
    assert done.returncode == 2 and "nope.toml" in done.stderr


def test_issue27_a_store_in_a_folder_that_does_not_exist_is_refused(project):
    done = frostline("run", "slug.py", "--run", "r1", "--runner", "process", "--config",
                     "conf/mine.toml", "--store", str(project / "typo" / "dir" / "x.db"),
                     cwd=project)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "does not exist" in done.stderr and "mkdir -p" in done.stderr
    assert not (project / "typo").exists()
    via_env = frostline("run", "slug.py", "--run", "r1", "--runner", "process", "--json",
                        "--config", "conf/mine.toml", cwd=project,
                        env={"FROSTLINE_STORE": "sqlite:///typo/x.db"})
    assert via_env.returncode == 2
    assert json.loads(via_env.stdout)["error"]["code"] == "store_not_found"
    assert not (project / "typo").exists()
    # the default store's folder (./.frostline/) is still made on first use
    first = frostline("run", "slug.py", "--run", "r1", "--runner", "process", "--config",
                      "conf/mine.toml", cwd=project)
    assert first.returncode == 0, first.stdout + first.stderr
    assert (project / ".frostline" / "frostline.db").is_file()


def test_issue27_show_lists_identities_in_program_order_as_run_does(tmp_path):
    brand = str(ROOT / "examples" / "tour" / "brand.py")
    ran = frostline("run", brand, "--run", "r1", "--runner", "process", "--args",
                    '{"brief": "a trail shoe"}', "--json", cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    program = ["orchestrate/#0@:0", *(f"orchestrate.render/#0@{i}:0" for i in range(4))]
    assert sorted(c["identity"] for c in json.loads(ran.stdout)["calls"]) == sorted(program)
    assert json.loads(ran.stdout)["calls"][0]["identity"] == program[0]
    shown = frostline("show", "r1", "--json", cwd=tmp_path)
    assert list(json.loads(shown.stdout)["identities"]) == program
    human = frostline("show", "r1", cwd=tmp_path).stdout
    at = [human.index(ident) for ident in program]
    assert at == sorted(at)


@pytest.mark.parametrize("bad", ["a:b/c", "x" * 150, "-lead", "has space"])
def test_issue27_the_cli_refuses_the_run_ids_the_api_refuses(tmp_path, bad):
    from pydantic import TypeAdapter, ValidationError

    from frostline.service.schemas import CreateRun

    with pytest.raises(ValidationError):
        TypeAdapter(CreateRun).validate_python({"script": SLUG, "run_id": bad})
    (tmp_path / "s.py").write_text(
        'async def orchestrate(ctx, args):\n    return await ctx.run("echo", {"x": 1})\n')
    done = frostline("run", "s.py", "--run", bad, "--runner", "process", "--json", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    err = json.loads(done.stdout)["error"]
    assert "is not valid: use 1-128 letters, digits" in err["message"]


def test_issue27_one_run_id_rule_everywhere():
    from frostline.contract.records import RUN_NAME_PATTERN, check_run_name
    from frostline.mcp.server import _RUN_ID
    from frostline.service.schemas import RUN_ID_PATTERN

    assert RUN_ID_PATTERN == RUN_NAME_PATTERN == _RUN_ID["pattern"]
    assert check_run_name("x" * 128) and check_run_name("brand-2024.01_a")


def test_issue27_repair_with_an_openai_model_and_no_key_names_what_to_set(tmp_path):
    brand = str(ROOT / "examples" / "tour" / "brand.py")
    ran = frostline("run", brand, "--run", "r2", "--runner", "process", "--args",
                    '{"brief": "a trail shoe"}', cwd=tmp_path)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    done = frostline("repair", "r2", "--model", "openai:gpt-4o-mini", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    message = " ".join(done.stderr.split())
    assert "pass api_key" not in message
    for named in ("$FROSTLINE_MODEL_API_KEY", "$OPENAI_API_KEY", "[models.NAME]", "api_key_env"):
        assert named in message, message
