"""What an attempt's record says about how it ended (issue 27): `stats.exit_code` is the
attempt's exit code, as `frostline run` exits with it, never 0 beside a failure; the script
process's own code is `stats.process_exit_code`."""

from __future__ import annotations

from pathlib import Path

from frostline.providers.local import LocalProviders
from frostline.runtime.runners import ChildProcessRunner
from tests.runtime.helpers import run

ROOT = Path(__file__).resolve().parents[2]
RAISES = """
async def orchestrate(ctx, args):
    await ctx.run("echo", {"n": 1})
    raise ValueError("no")
"""
WAITS = """
async def orchestrate(ctx, args):
    return await ctx.run("human.approve", {"ask": "go?"})
"""


def test_issue27_a_failed_attempt_reports_its_true_exit_code(store, tmp_path):
    providers = LocalProviders(log_path=str(tmp_path / "p.log"))
    brand = (ROOT / "examples" / "tour" / "brand.py").read_text()
    cases = {"provider": (brand, {"brief": "a shoe"}), "raises": (RAISES, None),
             "waits": (WAITS, None)}
    expected = {"provider": ("failed", 1), "raises": ("failed", 1), "waits": ("waiting", 10)}
    for name, (source, args) in cases.items():
        outcome = run(store, name, source, providers, runner=ChildProcessRunner(), args=args)
        record = store.list_attempts(name)[-1]
        assert (record.status, record.stats["exit_code"]) == expected[name]
        assert outcome.exit_code == record.stats["exit_code"]
        assert record.stats["process_exit_code"] == 0  # the child ended cleanly, reporting it
    ok = run(store, "ok", 'async def orchestrate(ctx, args):\n    return 1\n', providers,
             runner=ChildProcessRunner())
    assert ok.status == "succeeded" and store.list_attempts("ok")[-1].stats["exit_code"] == 0
