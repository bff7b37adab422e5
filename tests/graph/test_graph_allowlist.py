"""Phase 3: per-state tool allowlists; off-list calls are ILLEGAL_TOOL and never routed."""

from __future__ import annotations

import pytest
from graph_helpers import run_canonical

from frostline.graph.allowlist import LocalToolRouter, ToolBoundary, ToolCall
from frostline.graph.errors import IllegalTool
from frostline.graph.states import ALLOWLISTS, TOOLS


def test_execute_cannot_call_the_patch_generator(canonical):
    b = ToolBoundary(canonical)
    assert b.permitted("EXECUTE", "sandbox.execute")
    with pytest.raises(IllegalTool) as err:
        b.check("EXECUTE", "patch.generate")
    assert err.value.fields["owners"] == ["GENERATE", "REPAIR"]


def test_generate_cannot_call_the_test_runner(canonical):
    b = ToolBoundary(canonical)
    for tool in ("patch.generate", "code.graph", "repo.manifest"):
        assert b.permitted("GENERATE", tool)
    with pytest.raises(IllegalTool):
        b.check("GENERATE", "test.run")
    assert not b.permitted("TEST", "patch.generate")


@pytest.mark.parametrize("name", ["seed", "canonical"])
def test_every_allowlist_is_a_subset_of_the_vocabulary(name, request):
    g = request.getfixturevalue(name)
    assert set(g.tools) == set(TOOLS)
    for s in g.states:
        assert set(g.contracts[s].permitted_tools) <= set(g.tools)
        assert g.contracts[s].permitted_tools == ALLOWLISTS[s]
    assert ALLOWLISTS["INIT"] == ALLOWLISTS["TERMINAL_ACCEPT"] == ALLOWLISTS["TERMINAL_REJECT"] == ()


def test_off_list_call_is_recorded_and_never_routed(forbidden_model):
    router = LocalToolRouter({"sandbox.execute": lambda p: {"exit_code": 0},
                              "patch.generate": lambda p: pytest.fail("an off-list tool was routed")})
    seen: list[str] = []

    def execute(ctx):
        try:
            ctx.tool("patch.generate", {"file": "a.py"})
        except IllegalTool as exc:
            seen.append(exc.fields["tool"])
        r = ctx.tool("sandbox.execute", {"cmd": "python -c 1"})
        return {"exit_code": r["exit_code"], "stdout": "", "stderr": ""}

    result = run_canonical({"EXECUTE": [execute]}, router=router, model=forbidden_model)
    assert seen == ["patch.generate"]
    assert [c.tool for c in router.calls] == ["sandbox.execute"]
    assert router.calls[0].identity == "EXECUTE#0/0"
    [illegal] = result.ledger.of_kind("illegal_tool")
    assert illegal.data == {"state": "EXECUTE", "visit": 0, "tool": "patch.generate",
                            "owners": ["GENERATE", "REPAIR"], "routed": False}
    assert result.counters.illegal_tools == 1
    assert result.counters.model_calls == 0


def test_an_uncaught_illegal_tool_fails_the_visit_deterministically(forbidden_model):
    def generate(ctx):
        ctx.tool("test.run")
        return {"files": {}, "diff": "", "applied": 0}

    result = run_canonical({"GENERATE": [generate]}, router=LocalToolRouter({}), model=forbidden_model)
    assert result.terminal == "TERMINAL_REJECT"
    [failed] = result.ledger.of_kind("state_failed")
    assert failed.data["state"] == "GENERATE" and "off-list" in failed.data["reason"]


def test_tool_call_identity_is_structural(forbidden_model):
    router = LocalToolRouter({"test.run": lambda p: {"passed": 1, "failed": 0, "failures": []}})

    def test(ctx):
        ctx.tool("test.run", {"suite": "unit"})
        return ctx.tool("test.run", {"suite": "all"})

    # the first test run fails once, so TEST is visited twice
    fail_then_pass = [{"failed": 1}, test]
    result = run_canonical({"TEST": fail_then_pass, "REPAIR": [{}]}, router=router, model=forbidden_model)
    assert [c.identity for c in router.calls] == ["TEST#1/0", "TEST#1/1"]
    assert [e.data["identity"] for e in result.ledger.of_kind("tool_call")] == ["TEST#1/0", "TEST#1/1"]
    assert ToolCall("TEST", 1, 0, "test.run", {}).identity == "TEST#1/0"
