"""`frostline check` through click's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from frostline.cli.check import check

VALID = ('async def orchestrate(ctx, args):\n'
         '    for i in range(3):\n'
         '        await ctx.run("image.generate", {"prompt": "p", "size": "512x512"})\n')
INVALID = ('async def orchestrate(ctx, args):\n'
           '    for s in args["shots"]:\n'
           '        await ctx.call("image.generate", {})\n')


def _write(tmp_path: Path, name: str, text: str | bytes) -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


def test_valid_script_exits_zero_with_facts(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [_write(tmp_path, "ok.py", VALID)])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output
    assert "image.generate" in result.output
    assert "orchestrate/for#0.body/#0" in result.output


def test_invalid_script_shows_source_line_and_caret(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [_write(tmp_path, "bad.py", INVALID)])
    assert result.exit_code == 6  # rejected by the checker
    out = result.output
    assert "R03" in out and "R02" in out
    lines = out.splitlines()
    index = next(i for i, line in enumerate(lines) if 'await ctx.call("image.generate", {})' in line)
    caret = lines[index + 1]
    assert caret.strip() == "^"
    assert caret.index("^") == lines[index].index("ctx.call")
    assert "hint:" in out and "await ctx.run" in out


def test_json_output_is_one_object(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [_write(tmp_path, "ok.py", VALID), "--json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["valid"] is True and data["violations"] == []
    facts = data["facts"]
    assert facts["capabilities"] == {"image.generate": 1}
    assert facts["call_expressions"] == 1
    assert facts["sites"][0]["site"] == "orchestrate/for#0.body/#0"
    assert set(facts["sites"][0]) >= {"site", "capability", "fingerprint"}
    assert facts["spend_bound"]["calls"] == {"image.generate": 3}
    assert abs(facts["spend_bound"]["usd"] - 0.06) < 1e-9


def test_json_for_an_invalid_script(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [_write(tmp_path, "bad.py", INVALID), "--json"])
    assert result.exit_code == 6  # rejected by the checker
    data = json.loads(result.output)
    assert data["valid"] is False
    v = data["violations"][0]
    assert set(v) == {"rule", "severity", "line", "col", "message", "hint"}


def test_envelope_option(tmp_path: Path) -> None:
    env = _write(tmp_path, "env.json", json.dumps({"budget": {"usd": 0.05}}))
    result = CliRunner().invoke(check, [_write(tmp_path, "ok.py", VALID), "--envelope", env, "--json"])
    assert result.exit_code == 6  # rejected by the checker
    assert any(v["rule"] == "R11" for v in json.loads(result.output)["violations"])


def test_missing_script_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [str(tmp_path / "nope.py")])
    assert result.exit_code == 2
    assert "does not exist" in result.output
    result = CliRunner().invoke(check, [str(tmp_path / "nope.py"), "--json"])
    assert result.exit_code == 2
    error = json.loads(result.output)["error"]
    assert error["code"] == "usage" and "does not exist" in error["message"]


def test_unreadable_script_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [str(tmp_path)])  # a directory
    assert result.exit_code == 2


def test_malformed_envelope_is_a_usage_error(tmp_path: Path) -> None:
    script = _write(tmp_path, "ok.py", VALID)
    for text in ["{not json", json.dumps({"budgett": 1}), json.dumps({"max_fanout": 0})]:
        env = _write(tmp_path, "env.json", text)
        result = CliRunner().invoke(check, [script, "--envelope", env])
        assert result.exit_code == 2, result.output
        assert "envelope" in result.output
    result = CliRunner().invoke(check, [script, "--envelope", str(tmp_path / "missing.json")])
    assert result.exit_code == 2


def test_non_utf8_script_is_an_r00_violation(tmp_path: Path) -> None:
    result = CliRunner().invoke(check, [_write(tmp_path, "bin.py", b"\xff\xfe\x00"), "--json"])
    assert result.exit_code == 6  # rejected by the checker
    assert json.loads(result.output)["violations"][0]["rule"] == "R00"


def test_rich_markup_in_source_is_escaped(tmp_path: Path) -> None:
    src = 'async def orchestrate(ctx, args):\n    return eval("[bold]x[/bold]")\n'
    result = CliRunner().invoke(check, [_write(tmp_path, "m.py", src)])
    assert result.exit_code == 6  # rejected by the checker
    assert 'eval("[bold]x[/bold]")' in result.output
