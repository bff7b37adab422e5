"""Python functions as capabilities: the decorator's schemas, the provider, and a run through
the broker with a module named by a configuration file."""

from __future__ import annotations

import sys
import textwrap
from typing import Any, Literal

import pytest

from frostline.capabilities import capability
from frostline.capabilities.functions import collect, declared
from frostline.config import parse_config, read_config
from frostline.errors import CatalogError, ConfigError
from frostline.providers.registry import open_registry
from tests.runtime.helpers import run

MODULE = '''
from typing import Literal
from frostline.capabilities import Artifact, CallContext, ProviderError, capability

CALLS = []

@capability("weather.lookup", price_usd=0.001, effect="read_only")
def lookup(city: str, days: int = 1, units: Literal["metric", "imperial"] = "metric") -> dict:
    """Forecast for a city.

    More words that stay out of the catalog."""
    CALLS.append(city)
    if city == "Atlantis":
        raise ProviderError("no such city", status=404, error_code="UnknownCity")
    return {"city": city, "days": days, "units": units}

@capability("chart.draw", price_usd=0.01, output_schema={
    "type": "object", "required": ["image"], "properties": {"image": {"type": "object"}}})
async def draw(title: str, broken: bool = False, call: CallContext = None) -> dict:
    if broken:
        return {"picture": title}
    return {"image": Artifact(b"\\x89PNG fake " + title.encode(), "image/png"),
            "run": call.run_id}

def helper():
    return 1
'''


@pytest.fixture
def tools_module(tmp_path, monkeypatch):
    name = f"mytools_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_the_schema_comes_from_the_signature():
    @capability("a.b", price_usd=0.5, effect="idempotent")
    def fn(text: str, n: int = 3, tags: list[str] | None = None,
           mode: Literal["x", "y"] = "x", extra: dict[str, float] | None = None) -> Any:
        """Say it."""

    spec = declared(fn)
    assert spec is not None and collect([fn]) == [spec]
    entry = spec.entry
    assert (entry.name, entry.price_usd, entry.effect, entry.description) == (
        "a.b", 0.5, "idempotent", "Say it.")
    schema = entry.input_schema
    assert schema["required"] == ["text"] and schema["additionalProperties"] is False
    assert schema["properties"]["n"] == {"type": "integer"}
    assert schema["properties"]["tags"] == {"anyOf": [
        {"type": "array", "items": {"type": "string"}}, {"type": "null"}]}
    assert schema["properties"]["mode"] == {"enum": ["x", "y"]}
    assert fn("hi") is None  # the function is returned unchanged


def test_a_declaration_that_cannot_be_served_fails_at_import():
    with pytest.raises(CatalogError, match="parameter 'when'"):
        @capability("a.b")
        def fn(when: object) -> None: ...
    with pytest.raises(CatalogError, match="effect must be one of"):
        capability("a.b", effect="maybe")
    with pytest.raises(CatalogError, match="dotted lowercase"):
        @capability("Bad Name")
        def other() -> None: ...


def test_a_configured_module_serves_its_functions_through_the_broker(store, tools_module,
                                                                      tmp_path):
    config = parse_config({"providers": {"mine": {"kind": "python", "module": tools_module}},
                           "capabilities": {"weather.lookup": {"price_usd": 0.002}}})
    source = """
    async def orchestrate(ctx, args):
        w = await ctx.run("weather.lookup", {"city": "Oslo", "days": 2})
        c = await ctx.run("chart.draw", {"title": "rain"})
        return [w, c]
    """
    with open_registry(config, log_path=tmp_path / "calls.jsonl") as registry:
        lookup = registry.catalog["weather.lookup"]
        assert (lookup.effect, lookup.price_usd, lookup.description) == (
            "read_only", 0.002, "Forecast for a city.")
        assert registry.provider_of("weather.lookup") == "mine"
        assert registry.provider_of("echo") == "local"  # the built-ins stay
        out = run(store, "r", source, registry, catalog=registry.catalog)
        assert out.status == "succeeded", out.error
        weather, chart = out.result
        assert weather == {"city": "Oslo", "days": 2, "units": "metric"}
        data, mime = store.get_artifact(chart["image"]["artifact"])
        assert (data, mime) == (b"\x89PNG fake rain", "image/png")
        assert chart["run"] == "r"
        assert sys.modules[tools_module].CALLS == ["Oslo"]
        again = run(store, "r", source, registry, catalog=registry.catalog)
        assert (again.replayed, again.executed) == (2, 0)
        assert sys.modules[tools_module].CALLS == ["Oslo"]


def test_rejections_and_broken_results_are_failed_calls_never_committed(store, tools_module):
    config = parse_config({"providers": {"mine": {"kind": "python", "module": tools_module}}})
    with open_registry(config) as registry:
        out = run(store, "r", """
        async def orchestrate(ctx, args):
            return await ctx.run("weather.lookup", {"city": "Atlantis"})
        """, registry, catalog=registry.catalog)
        assert out.status == "failed" and out.calls[0]["error"]["error_code"] == "UnknownCity"
        out = run(store, "s", """
        async def orchestrate(ctx, args):
            return await ctx.run("chart.draw", {"title": "t", "broken": True})
        """, registry, catalog=registry.catalog)
        assert out.status == "failed"
        assert out.calls[0]["error"]["error_code"] == "OutputSchemaViolation"
        assert store.list_slots("r") == [] and store.list_slots("s") == []


def test_a_module_that_cannot_be_imported_is_a_config_error_naming_the_key(tmp_path):
    path = tmp_path / "frostline.toml"
    path.write_text(textwrap.dedent("""
        [providers.mine]
        kind = "python"
        module = "no_such_module_here"
    """))
    with pytest.raises(ConfigError) as info:
        open_registry(read_config(path))
    assert info.value.fields["key"] == "providers.mine.module"
    assert info.value.fields["file"] == str(path)
    assert "no_such_module_here" in info.value.message


def test_two_providers_declaring_one_name_need_a_choice(tools_module):
    both = {"providers": {"a": {"kind": "python", "module": tools_module},
                          "b": {"kind": "python", "module": tools_module}}}
    with pytest.raises(ConfigError, match="a choice"):
        open_registry(parse_config(both))
    chosen = dict(both, capabilities={"weather.lookup": {"provider": "b"},
                                      "chart.draw": {"provider": "a"}})
    with open_registry(parse_config(chosen)) as registry:
        assert registry.provider_of("weather.lookup") == "b"
        assert registry.provider_of("chart.draw") == "a"

