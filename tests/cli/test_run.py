"""`frostline run`, `show` and `reconcile` through click's CliRunner."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from frostline.cli.run import reconcile_command, run_command, show_command
from frostline.contract.identity import Identity, digest
from frostline.script import annotate, check
from frostline.store import open_store
from tests.runtime.helpers import echo_ns


@click.group()
def cli() -> None:
    """Stand-in for the `frostline` group."""


for _cmd in (run_command, show_command, reconcile_command):
    cli.add_command(_cmd)

V1 = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": args["n"]})
    return a["n"]
"""
V2 = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": args["n"]})
    b = await ctx.run("echo", {"n": 2})
    return [a["n"], b["n"]]
"""


@pytest.fixture
def env(tmp_path, monkeypatch, sqlite_url):
    monkeypatch.setenv("FROSTLINE_PROVIDER_LOG", str(tmp_path / "provider.jsonl"))
    monkeypatch.setenv("FROSTLINE_RUNNER", "process")
    return {"dir": tmp_path, "url": sqlite_url}


def script(env, text: str, name: str = "s.py") -> str:
    path = env["dir"] / name
    path.write_text(text)
    return str(path)


def invoke(env, *args: str):
    return CliRunner().invoke(cli, [*args, "--store", env["url"]])


def test_run_prints_identities_and_totals_and_replays_on_the_same_run_id(env):
    first = invoke(env, "run", script(env, V1), "--run", "r1", "--args", '{"n": 1}')
    assert first.exit_code == 0, first.output
    assert "orchestrate/#0@:0" in first.output and "executed" in first.output
    assert "status succeeded" in first.output
    second = invoke(env, "run", script(env, V2), "--run", "r1", "--args", '{"n": 1}', "--json")
    assert second.exit_code == 0
    data = json.loads(second.output)
    assert (data["status"], data["replayed"], data["executed"], data["result"]) == (
        "succeeded", 1, 1, [1, 2])
    assert echo_ns(env["dir"] / "provider.jsonl") == [1, 2]


def test_args_from_a_file(env):
    (env["dir"] / "args.json").write_text('{"n": 5}')
    out = invoke(env, "run", script(env, V1), "--run", "r", "--args",
                 f"@{env['dir'] / 'args.json'}", "--json")
    assert out.exit_code == 0 and json.loads(out.output)["result"] == 5


@pytest.mark.parametrize(("second", "args", "code", "status"), [
    (V1, '{"n": 9}', 4, "diverged"),
    (V1.replace('args["n"]', "7"), '{"n": 1}', 3, "gate_stopped"),
    (V1.replace("return", "raise ValueError('no')\n    return"), '{"n": 1}', 1, "failed"),
    ("import os\n" + V1, '{"n": 1}', 6, "rejected"),
])
def test_exit_codes_follow_the_status(env, second, args, code, status):
    assert invoke(env, "run", script(env, V1), "--run", "r", "--args", '{"n": 1}').exit_code == 0
    out = invoke(env, "run", script(env, second, "t.py"), "--run", "r", "--args", args, "--json")
    assert out.exit_code == code, out.output
    assert json.loads(out.output)["status"] == status


def test_usage_errors_exit_2_and_say_what_is_wrong(env):
    bad_env = env["dir"] / "env.json"
    bad_env.write_text('{"budget": {"usd": -1}}')
    out = invoke(env, "run", script(env, V1), "--run", "r", "--envelope", str(bad_env))
    assert out.exit_code == 2 and "usd" in out.output
    bad_env.write_text('{"grantz": []}')
    out = invoke(env, "run", script(env, V1), "--run", "r", "--envelope", str(bad_env))
    assert out.exit_code == 2 and "grantz" in out.output
    out = invoke(env, "run", script(env, V1), "--run", "r", "--args", "{nope")
    assert out.exit_code == 2 and "--args is not valid JSON" in out.output
    out = invoke(env, "run", str(env["dir"] / "missing.py"), "--run", "r")
    assert out.exit_code == 2
    out = invoke(env, "reconcile", "r", "not-an-identity", "--abandon")
    assert out.exit_code == 2 and "malformed identity" in out.output
    out = invoke(env, "reconcile", "r", "orchestrate/#0@:0")
    assert out.exit_code == 2 and "exactly one" in out.output


def _crash_leftover(url: str, run_id: str) -> Identity:
    """What a host killed after the attempt write leaves: a pending call, no slot."""
    ident = Identity("orchestrate/#1", (), 0)
    with open_store(url) as store:
        attempt = store.start_attempt(run_id, source=V2, annotated=annotate(V2),
                                      report=check(V2).to_dict())
        store.begin_call(run_id, attempt.number, ident, "echo", digest({"n": 2}))
        store.finish_attempt(run_id, attempt.number, status="failed")
    return ident


def test_unresolved_then_reconcile_with_a_result_replays_it(env):
    assert invoke(env, "run", script(env, V1), "--run", "r", "--args", '{"n": 1}').exit_code == 0
    ident = _crash_leftover(env["url"], "r")
    blocked = invoke(env, "run", script(env, V2), "--run", "r", "--args", '{"n": 1}')
    assert blocked.exit_code == 5 and "reconcile" in blocked.output
    shown = json.loads(invoke(env, "show", "r", "--json").output)
    assert shown["unresolved"] == [{"identity": str(ident), "capability": "echo", "attempt": 2,
                                    "call_id": shown["unresolved"][0]["call_id"]}]
    (env["dir"] / "result.json").write_text('{"n": 2}')
    rec = invoke(env, "reconcile", "r", str(ident), "--result", f"@{env['dir'] / 'result.json'}")
    assert rec.exit_code == 0 and "reconciled" in rec.output
    out = invoke(env, "run", script(env, V2), "--run", "r", "--args", '{"n": 1}', "--json")
    data = json.loads(out.output)
    assert (out.exit_code, data["replayed"], data["executed"]) == (0, 2, 0)
    assert echo_ns(env["dir"] / "provider.jsonl") == [1]


def test_abandon_allows_exactly_one_execution(env):
    assert invoke(env, "run", script(env, V1), "--run", "r", "--args", '{"n": 1}').exit_code == 0
    ident = _crash_leftover(env["url"], "r")
    assert invoke(env, "reconcile", "r", str(ident), "--abandon").exit_code == 0
    out = invoke(env, "run", script(env, V2), "--run", "r", "--args", '{"n": 1}', "--json")
    assert (out.exit_code, json.loads(out.output)["executed"]) == (0, 1)
    # nothing is pending any more
    again = invoke(env, "reconcile", "r", str(ident), "--abandon")
    assert again.exit_code == 1 and "no pending call" in again.output


def test_show_lists_attempts_and_what_each_identity_did(env):
    invoke(env, "run", script(env, V1), "--run", "r", "--args", '{"n": 1}')
    invoke(env, "run", script(env, V2), "--run", "r", "--args", '{"n": 1}')
    data = json.loads(invoke(env, "show", "r", "--json").output)
    assert [a["status"] for a in data["attempts"]] == ["succeeded", "succeeded"]
    assert data["identities"] == {"orchestrate/#0@:0": {"1": "executed", "2": "replayed"},
                                  "orchestrate/#1@:0": {"2": "executed"}}
    human = invoke(env, "show", "r")
    assert human.exit_code == 0 and "identities" in human.output and "replayed" in human.output
    missing = invoke(env, "show", "nope")
    assert missing.exit_code == 2 and "no run 'nope'" in missing.output


ESCAPE = """
async def orchestrate(ctx, args):
    a = await ctx.run("echo", {"n": 1})
    import os
    return os.listdir("/")
"""


def test_unsafe_skip_checker_runs_unvetted_code_only_in_the_sandbox_and_says_so(env):
    path = script(env, ESCAPE)
    refused = invoke(env, "run", path, "--run", "u1", "--unsafe-skip-checker", "--runner", "process")
    assert refused.exit_code == 2 and "only runs inside the sandbox" in refused.output
    assert invoke(env, "run", path, "--run", "u0").exit_code == 6  # the checker rejects it (R06)
    res = invoke(env, "run", path, "--run", "u2", "--unsafe-skip-checker", "--runner", "sandbox",
                 "--json")
    assert "static checker (R00-R12) is SKIPPED" in res.stderr
    outcome = json.loads(res.stdout)
    # The committed call ran; the import then failed inside the sandbox's restricted child.
    assert outcome["executed"] == 1 and outcome["status"] == "failed", outcome
    assert "import" in json.dumps(outcome["error"]).lower()
    assert echo_ns(env["dir"] / "provider.jsonl") == [1]


def test_a_script_error_names_its_type_and_the_script_line(env):
    failing = 'async def orchestrate(ctx, args):\n    brief = args["brief"]\n    return brief\n'
    out = invoke(env, "run", script(env, failing), "--run", "r", "--args", '{"n": 1}')
    assert out.exit_code == 1
    assert "error: KeyError: 'brief'" in out.output
    assert 'script line 2, in orchestrate: brief = args["brief"]' in out.output
    data = json.loads(invoke(env, "run", script(env, failing), "--run", "r", "--json").output)
    assert data["error"]["type"] == "KeyError"
    assert data["error"]["script_frames"] == [{"line": 2, "function": "orchestrate"}]


def test_messages_keep_their_square_brackets(env):
    from frostline.cli.common import fail

    @click.command()
    def boom() -> None:
        fail("a postgresql:// store needs psycopg 3: pip install 'frostline[postgres]'", 2, False)

    out = CliRunner().invoke(boom, [])
    assert out.exit_code == 2 and "pip install 'frostline[postgres]'" in out.output
    indexed = ('async def orchestrate(ctx, args):\n    xs = [args["n"]]\n    i = 0\n'
               '    a = await ctx.run("echo", {"n": xs[i]})\n    return a["n"]\n')
    assert invoke(env, "run", script(env, indexed), "--run", "r", "--args", '{"n": 1}').exit_code == 0
    changed = indexed.replace('{"n": xs[i]}', '{"n": xs[i] + 1}')
    stopped = invoke(env, "run", script(env, changed, "t.py"), "--run", "r", "--args", '{"n": 1}')
    assert stopped.exit_code == 3 and '{"n": xs[i]})' in stopped.output
