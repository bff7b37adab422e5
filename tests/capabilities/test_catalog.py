import json

import jsonschema
import pytest

from frostline.capabilities import DEFAULT_CATALOG, IMAGE_SIZES, Capability, Catalog
from frostline.errors import CatalogError

EXPECTED = {
    "storyboard.plan": (False, 0.002, True),
    "image.generate": (True, 0.02, True),
    "image.edit": (True, 0.02, True),
    "review.visual": (False, 0.001, True),
    "text.generate": (False, 0.001, True),
    "video.generate": (True, 0.50, False),
    "video.edit": (True, 0.60, False),
    "audio.generate": (True, 0.05, False),
    "echo": (True, 0.0, True),
    # the waits (issue 16): answered by the host, read-only, priced 0
    "human.approve": (False, 0.0, True),
    "event.wait": (False, 0.0, True),
    "timer.sleep": (False, 0.0, True),
}
REF = "sha256:" + "ab" * 32


def test_nine_entries_and_the_waits_with_flags_and_prices():
    assert set(DEFAULT_CATALOG.names()) == set(EXPECTED)
    for name, (side, price, prod) in EXPECTED.items():
        cap = DEFAULT_CATALOG[name]
        assert (cap.side_effecting, cap.price_usd, cap.production) == (side, price, prod)


@pytest.mark.parametrize(
    "name,good,bad",
    [
        ("storyboard.plan", {"brief": "a", "shots": 4}, {"brief": "a", "shots": 65}),
        ("image.generate", {"prompt": "p", "size": "1024x1024", "seed": 3}, {"prompt": "p"}),
        ("image.edit", {"image": REF, "prompt": "p"}, {"image": "not-a-ref", "prompt": "p"}),
        ("review.visual", {"image": REF, "criteria": "sharp"}, {"criteria": "x"}),
        ("text.generate", {"prompt": "p", "max_tokens": 10}, {"prompt": 3}),
        ("video.generate", {"prompt": "p", "duration_s": 60}, {"prompt": "p", "duration_s": 61}),
        ("video.edit", {"video": REF, "prompt": "p"}, {"prompt": "p"}),
        ("audio.generate", {"prompt": "p", "duration_s": 5}, {"prompt": "p"}),
        ("timer.sleep", {"seconds": 2}, {"seconds": 2, "until": "2030-01-01T00:00:00Z"}),
        ("timer.sleep", {"until": "2030-01-01T00:00:00Z"}, {"until": "tomorrow"}),
        ("event.wait", {"event": "paid", "timeout_s": 5}, {"event": "bad name"}),
        ("human.approve", {"ask": "ok?", "for": "ops", "data": [1]}, {"ask": ""}),
        ("echo", {"n": 1, "anything": [1, 2]}, None),
    ],
)
def test_input_schemas(name, good, bad):
    schema = DEFAULT_CATALOG[name].input_schema
    jsonschema.validate(good, schema)
    if bad is not None:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_image_sizes():
    assert IMAGE_SIZES == ("512x512", "1024x1024", "1024x1536", "1536x1024")


def test_catalog_is_extensible_data():
    extra = Capability("music.compose", True, {"type": "object"}, 0.1)
    cat = DEFAULT_CATALOG.extended(extra)
    assert "music.compose" in cat and "music.compose" not in DEFAULT_CATALOG
    again = Catalog.from_json(cat.to_json())
    assert again.names() == cat.names()
    assert again["music.compose"].price_usd == 0.1


@pytest.mark.parametrize(
    "bad",
    [
        "{}",
        "[1]",
        json.dumps([{"name": "Bad Name", "side_effecting": True, "input_schema": {"type": "object"}, "price_usd": 1}]),
        json.dumps([{"name": "x.y", "side_effecting": True, "input_schema": {"type": "object"}, "price_usd": -1}]),
        json.dumps([{"name": "x.y", "side_effecting": True, "input_schema": {"type": "object"}, "price_usd": 1, "zzz": 1}]),
        json.dumps([{"name": "x.y", "side_effecting": True, "price_usd": 1}]),
        "not json",
    ],
)
def test_malformed_catalogs_are_rejected(bad):
    with pytest.raises(CatalogError):
        Catalog.from_json(bad)


def test_duplicate_and_unknown():
    cap = DEFAULT_CATALOG["echo"]
    with pytest.raises(CatalogError, match="twice"):
        Catalog([cap, cap])
    with pytest.raises(CatalogError, match="unknown capability"):
        DEFAULT_CATALOG["nope.nope"]
