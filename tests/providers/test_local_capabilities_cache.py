"""LocalProviders.capabilities() is asked twice per call: it is built once per catalog."""

from __future__ import annotations

from frostline.capabilities.catalog import DEFAULT_CATALOG, WAIT_CAPABILITIES, Catalog
from frostline.providers.local import LocalProviders


def test_capabilities_are_built_once_and_follow_a_replaced_catalog() -> None:
    p = LocalProviders()
    first = p.capabilities()
    assert first is p.capabilities()  # cached, not rebuilt
    # the waits are answered by the host, never by a provider
    assert first == frozenset(DEFAULT_CATALOG.names()) - WAIT_CAPABILITIES
    p.catalog = Catalog([c for c in DEFAULT_CATALOG if c.name == "echo"])
    assert p.capabilities() == frozenset({"echo"})
    assert p.honours_idempotency_keys("image.generate") is False
