"""The catalog an attempt ran under is recorded with it, and a change of schema or effect of a
capability with committed calls between attempts shows in the events and in `show`."""

from __future__ import annotations

from frostline.capabilities.catalog import DEFAULT_CATALOG, Capability
from frostline.capabilities.changes import catalog_changes
from frostline.providers.local import LocalProviders
from frostline.runtime.describe import describe_run
from tests.runtime.helpers import run

SCRIPT = """
async def orchestrate(ctx, args):
    await ctx.run("echo", {"n": 1})
    return await ctx.run("text.generate", {"prompt": "a kite"})
"""


def test_each_attempt_records_its_catalog_once(store):
    out = run(store, "r", SCRIPT, LocalProviders())
    assert out.status == "succeeded"
    run(store, "r", SCRIPT, LocalProviders())
    first, second = store.list_attempts("r")
    assert first.catalog_digest == second.catalog_digest == DEFAULT_CATALOG.digest()
    assert store.get_catalog(first.catalog_digest) == DEFAULT_CATALOG.entries_json()
    assert [e for e in store.list_events("r") if e.kind == "catalog_changed"] == []


def test_a_changed_effect_or_schema_of_a_committed_capability_is_reported(store):
    assert run(store, "r", SCRIPT, LocalProviders()).status == "succeeded"
    echo = DEFAULT_CATALOG["echo"]
    changed = DEFAULT_CATALOG.extended(
        Capability("echo", False, {"type": "object", "required": ["n"]}, 0.0),
        Capability("video.generate", True, {"type": "object"}, 9.0, production=False))
    providers = LocalProviders(catalog=changed)
    again = run(store, "r", SCRIPT, providers, catalog=changed)
    assert (again.status, again.replayed) == ("succeeded", 2)  # the prefix still replays
    (event,) = [e.data for e in store.list_events("r") if e.kind == "catalog_changed"]
    assert (event["attempt"], event["since_attempt"]) == (2, 1)
    # video.generate changed too, but has no committed call: not reported
    assert event["changes"] == [{
        "capability": "echo", "fields": ["input_schema", "effect"],
        "before": {"input_schema": dict(echo.input_schema), "effect": "side_effecting"},
        "after": {"input_schema": {"type": "object", "required": ["n"]},
                  "effect": "read_only"}}]
    shown = describe_run(store, "r")
    assert shown["catalog_changes"] == [event]
    assert [a["catalog"] for a in shown["attempts"]] == [DEFAULT_CATALOG.digest(),
                                                         changed.digest()]


def test_a_removed_capability_is_a_change():
    before = [{"name": "a", "input_schema": {}, "effect": "read_only"}]
    assert catalog_changes(before, [], {"a"}) == [{
        "capability": "a", "fields": ["removed"], "after": None,
        "before": {"input_schema": {}, "output_schema": None, "effect": "read_only"}}]
    assert catalog_changes([], before, {"a"}) == []
