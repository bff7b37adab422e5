"""The catalog rendered as typed Python signatures (issue 29): valid Python, every capability
named with its price, effect and approval, hostile descriptions kept inside their docstrings."""

from __future__ import annotations

import ast

from frostline.capabilities.catalog import DEFAULT_CATALOG, Capability, Catalog
from frostline.repair.signatures import annotation, render_signatures, stub_name


def stubs(source: str) -> dict[str, ast.AsyncFunctionDef]:
    return {n.name: n for n in ast.parse(source).body if isinstance(n, ast.AsyncFunctionDef)}


def test_issue29_default_catalog_renders_as_valid_python_naming_every_capability() -> None:
    source = render_signatures(DEFAULT_CATALOG)
    found = stubs(source)
    assert set(found) == {stub_name(n) for n in DEFAULT_CATALOG.names()}
    for cap in DEFAULT_CATALOG:
        doc = ast.get_docstring(found[stub_name(cap.name)]) or ""
        assert f'await ctx.run("{cap.name}"' in doc
        assert f"${cap.price_usd:g} per call" in doc and f"Effect: {cap.effect}" in doc
    plan = found["storyboard_plan"]
    assert [a.arg for a in plan.args.kwonlyargs] == ["brief", "shots", "style"]
    assert ast.unparse(plan.args.kwonlyargs[1].annotation) == "int"
    assert "shots: 1..64" in (ast.get_docstring(plan) or "")


def test_issue29_grants_limit_the_rendering() -> None:
    source = render_signatures(DEFAULT_CATALOG, grants={"echo"})
    assert set(stubs(source)) == {"echo"}
    assert "no capability is granted" in render_signatures(DEFAULT_CATALOG, grants=set())


def test_issue29_types_approval_and_hostile_text() -> None:
    cap = Capability(
        "ship.order", side_effecting=True, price_usd=1.5, approval_required=True,
        description='ends with a quote" and """ triple quotes \\ and a\nnewline',
        input_schema={"type": "object", "required": ["sku"], "properties": {
            "sku": {"type": "string"}, "mode": {"enum": ["fast", "slow"]},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}]},
        }})
    odd = Capability("odd.fields", side_effecting=False, price_usd=0,
                     input_schema={"type": "object", "properties": {"from": {"type": "string"},
                                                                    "dry-run": {"type": "boolean"}}})
    source = render_signatures(Catalog([cap, odd]))
    found = stubs(source)  # parses: the description stayed inside its docstring
    order = found["ship_order"]
    doc = ast.get_docstring(order) or ""
    assert "Approval: a person approves each call" in doc and 'triple quotes' in doc
    assert {a.arg: ast.unparse(a.annotation) for a in order.args.kwonlyargs if a.annotation} == {
        "sku": "str", "mode": "Literal['fast', 'slow']", "tags": "list[str] | None"}
    assert [a.arg for a in found["odd_fields"].args.args] == ["payload"]
    assert "from (optional): str" in (ast.get_docstring(found["odd_fields"]) or "")
    assert annotation({"type": ["integer", "null"]}) == "int | None"
