"""The public API of frostline.script is pinned."""

import frostline.script as script


def test_exported_members() -> None:
    assert sorted(script.__all__) == sorted([
        "RULES", "Facts", "Prior", "Report", "SiteInfo", "SpendBound", "Violation", "annotate",
        "check", "check_bytes", "fingerprint", "sites"])
    for name in script.__all__:
        assert getattr(script, name) is not None


def test_thirteen_rules() -> None:
    assert sorted(script.RULES) == [f"R{i:02d}" for i in range(13)]
    assert [r for r, (kind, _) in script.RULES.items() if kind == "envelope"] == ["R11"]


def test_report_json_shape() -> None:
    report = script.check('async def orchestrate(ctx, args):\n    return await ctx.run("echo", {})\n')
    data = report.to_dict()
    assert set(data) == {"valid", "violations", "facts"}
    assert {"capabilities", "call_expressions", "sites", "spend_bound"} <= set(data["facts"])
    assert {"calls", "usd"} <= set(data["facts"]["spend_bound"])
    assert set(data["facts"]["sites"][0]) >= {"site", "capability", "fingerprint"}
