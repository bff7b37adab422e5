"""LocalProviders: real artifacts, API-shaped rejections, dry runs, usage and determinism."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from frostline.capabilities import DEFAULT_CATALOG, IMAGE_SIZES
from frostline.capabilities.catalog import WAIT_CAPABILITIES
from frostline.capabilities.provider import ProviderResult
from frostline.errors import DefinitionError, ProviderError
from frostline.providers.local import LocalProviders
from tests.fakes.artifacts import MemoryArtifacts, call_context


def invoke(p: LocalProviders, cap: str, payload: dict, artifacts: MemoryArtifacts | None = None,
           **kw) -> ProviderResult:
    return asyncio.run(p.invoke(cap, payload, call_context(artifacts, **kw)))


def png_of(artifacts: MemoryArtifacts, ref: str) -> bytes:
    stored = artifacts.get(ref)
    assert stored is not None
    assert stored[1] == "image/png"
    return stored[0]


@pytest.fixture(autouse=True)
def _no_env_log(monkeypatch):
    monkeypatch.delenv("FROSTLINE_PROVIDER_LOG", raising=False)


def test_capabilities_cover_the_default_catalog():
    p = LocalProviders()
    # the waits (human.approve, event.wait, timer.sleep) are answered by the host, not a provider
    assert p.capabilities() == frozenset(DEFAULT_CATALOG.names()) - WAIT_CAPABILITIES
    assert not any(p.honours_idempotency_keys(c) for c in DEFAULT_CATALOG.names())


@pytest.mark.parametrize("size", IMAGE_SIZES)
def test_image_generate_real_png_of_each_size(size):
    arts = MemoryArtifacts()
    res = invoke(LocalProviders(), "image.generate", {"prompt": "a lighthouse", "size": size,
                                                     "seed": 3}, arts)
    assert res.result["size"] == size and res.result["seed"] == 3
    assert res.result["mime"] == "image/png"
    assert res.result["artifact"].startswith("sha256:")
    data = png_of(arts, res.result["artifact"])
    assert res.result["artifact"] == "sha256:" + hashlib.sha256(data).hexdigest()
    image = Image.open(io.BytesIO(data))
    assert image.format == "PNG"
    assert f"{image.width}x{image.height}" == size
    assert res.usage == {"cost_usd": DEFAULT_CATALOG["image.generate"].price_usd, "tokens": 0}


def test_image_generate_is_byte_identical_and_seed_sensitive():
    p, arts = LocalProviders(), MemoryArtifacts()
    payload = {"prompt": "red fox in snow", "size": "512x512", "seed": 11}
    a = invoke(p, "image.generate", payload, arts).result["artifact"]
    b = invoke(p, "image.generate", dict(payload), arts).result["artifact"]
    c = invoke(p, "image.generate", {**payload, "seed": 12}, arts).result["artifact"]
    d = invoke(p, "image.generate", {**payload, "prompt": "blue fox"}, arts).result["artifact"]
    assert a == b
    assert len({a, c, d}) == 3


def test_image_generate_without_seed_reports_a_derived_seed():
    arts = MemoryArtifacts()
    r1 = invoke(LocalProviders(), "image.generate", {"prompt": "dune", "size": "512x512"}, arts)
    r2 = invoke(LocalProviders(), "image.generate", {"prompt": "dune", "size": "512x512"}, arts)
    assert r1.result == r2.result
    assert isinstance(r1.result["seed"], int)


def test_image_generate_byte_identical_across_processes():
    code = (
        "import asyncio, hashlib, sys\n"
        "from frostline.providers.local import LocalProviders\n"
        "from tests.fakes.artifacts import MemoryArtifacts, call_context\n"
        "a = MemoryArtifacts()\n"
        "r = asyncio.run(LocalProviders().invoke('image.generate', "
        "{'prompt': 'harbour at dawn', 'size': '1024x1536', 'seed': 5}, call_context(a)))\n"
        "print(r.result['artifact'], hashlib.sha256(a.get(r.result['artifact'])[0]).hexdigest())\n"
    )
    outs = set()
    for hashseed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env={"PYTHONHASHSEED": hashseed, "PATH": ""},
                              cwd=_root())
        outs.add(proc.stdout.strip())
    arts = MemoryArtifacts()
    mine = invoke(LocalProviders(), "image.generate",
                  {"prompt": "harbour at dawn", "size": "1024x1536", "seed": 5}, arts)
    assert outs == {f"{mine.result['artifact']} {mine.result['artifact'][7:]}"}


def _root() -> str:
    import pathlib

    return str(pathlib.Path(__file__).resolve().parents[2])


@pytest.mark.parametrize("size", ["1000x1000", "1024X1024", "", "auto", "256x256"])
def test_unsupported_size_is_rejected_like_an_api(size):
    arts = MemoryArtifacts()
    with pytest.raises(ProviderError) as info:
        invoke(LocalProviders(), "image.generate", {"prompt": "x", "size": size}, arts)
    err = info.value
    assert err.fields["status"] == 400
    assert err.fields["error_code"] == "InvalidParameter"
    assert err.fields["param"] == "size"
    assert err.fields["supported"] == list(IMAGE_SIZES)
    assert "'size'" in err.message and all(s in err.message for s in IMAGE_SIZES)
    assert err.to_dict()["code"] == "provider"
    assert len(arts) == 0  # nothing stored, nothing to pay for


def test_bad_parameters_are_rejected_with_the_parameter_named():
    with pytest.raises(ProviderError) as info:
        invoke(LocalProviders(), "image.generate", {"prompt": "x", "size": "512x512", "seed": -1})
    assert info.value.fields["param"] == "seed"
    with pytest.raises(ProviderError) as info:
        invoke(LocalProviders(), "text.generate", {"prompt": ""})
    assert info.value.fields["param"] == "prompt"


def test_unknown_capability_is_a_404():
    with pytest.raises(ProviderError) as info:
        invoke(LocalProviders(), "music.compose", {})
    assert info.value.fields["status"] == 404


def test_edit_transforms_a_stored_image():
    p, arts = LocalProviders(), MemoryArtifacts()
    src = invoke(p, "image.generate", {"prompt": "lake", "size": "512x512", "seed": 1}, arts)
    ref = src.result["artifact"]
    flipped = invoke(p, "image.edit", {"image": ref, "prompt": "flip it"}, arts).result
    assert flipped["operations"] == ["flip"] and flipped["source"] == ref
    original = Image.open(io.BytesIO(png_of(arts, ref))).convert("RGB")
    mirrored = Image.open(io.BytesIO(png_of(arts, flipped["artifact"]))).convert("RGB")
    assert mirrored.tobytes() == original.transpose(Image.Transpose.FLIP_LEFT_RIGHT).tobytes()
    again = invoke(p, "image.edit", {"image": ref, "prompt": "flip it"}, arts).result
    assert again == flipped  # deterministic edit
    captioned = invoke(p, "image.edit", {"image": ref, "prompt": "add a title"}, arts).result
    assert captioned["operations"] == ["caption"] and captioned["size"] == "512x512"


def test_edit_and_review_of_unknown_or_non_image_artifacts():
    p, arts = LocalProviders(), MemoryArtifacts()
    missing = "sha256:" + "0" * 64
    for cap in ("image.edit", "review.visual"):
        with pytest.raises(ProviderError) as info:
            invoke(p, cap, {"image": missing, "prompt": "blur"}, arts)
        assert info.value.fields["status"] == 404 and info.value.fields["error_code"] == "NotFound"
    text_ref = arts.put(b"not an image", "text/plain")
    with pytest.raises(ProviderError) as info:
        invoke(p, "review.visual", {"image": text_ref}, arts)
    assert info.value.fields["error_code"] == "InvalidImage"
    corrupt = arts.put(b"\x89PNG\r\n\x1a\ngarbage", "image/png")
    with pytest.raises(ProviderError) as info:
        invoke(p, "image.edit", {"image": corrupt, "prompt": "blur"}, arts)
    assert info.value.fields["status"] == 400


def test_review_measures_and_a_dark_image_fails_until_brightened():
    p, arts = LocalProviders(), MemoryArtifacts()
    day = invoke(p, "image.generate", {"prompt": "harbour in sunlight", "size": "512x512"}, arts)
    night = invoke(p, "image.generate", {"prompt": "harbour at night", "size": "512x512"}, arts)
    good = invoke(p, "review.visual", {"image": day.result["artifact"]}, arts)
    bad = invoke(p, "review.visual", {"image": night.result["artifact"], "criteria": "legible"},
                 arts)
    assert good.result["verdict"] == "pass" and good.result["reasons"] == []
    assert bad.result["verdict"] == "fail" and bad.result["criteria"] == "legible"
    assert any(r.startswith("too dark") for r in bad.result["reasons"])
    assert bad.result["score"] < good.result["score"]
    assert bad.result["stats"]["width"] == 512
    assert bad.result["stats"]["mean_brightness"] < good.result["stats"]["mean_brightness"]
    fixed = invoke(p, "image.edit", {"image": night.result["artifact"],
                                     "prompt": "brighten and add contrast"}, arts)
    again = invoke(p, "review.visual", {"image": fixed.result["artifact"]}, arts)
    assert again.result["verdict"] == "pass"
    assert good.usage["cost_usd"] == DEFAULT_CATALOG["review.visual"].price_usd


def test_storyboard_plan_is_structured_and_deterministic():
    p = LocalProviders()
    payload = {"brief": "thirty-second brand video for a bicycle", "shots": 6}
    a = invoke(p, "storyboard.plan", payload).result
    assert a == invoke(p, "storyboard.plan", payload).result
    assert [s["index"] for s in a["shots"]] == list(range(6))
    assert all("bicycle" in s["prompt"] and 3 <= s["duration_s"] <= 6 for s in a["shots"])
    assert a["total_duration_s"] == sum(s["duration_s"] for s in a["shots"])
    styled = invoke(p, "storyboard.plan", {**payload, "style": "noir"}).result
    assert styled["shots"][0]["prompt"].startswith("noir ")


@settings(max_examples=40, deadline=None)
@given(prompt=st.text(min_size=1, max_size=200), max_tokens=st.integers(1, 300))
def test_text_generate_respects_the_word_cap(prompt, max_tokens):
    res = invoke(LocalProviders(), "text.generate", {"prompt": prompt, "max_tokens": max_tokens})
    words = res.result["text"].split()
    assert 1 <= len(words) <= max_tokens
    assert res.result["finish_reason"] in ("stop", "length")
    assert res.usage["completion_tokens"] == len(words)
    assert res.usage["tokens"] == res.usage["prompt_tokens"] + len(words)
    assert res.result == invoke(LocalProviders(), "text.generate",
                                {"prompt": prompt, "max_tokens": max_tokens}).result


def test_text_generate_truncation_reports_length():
    res = invoke(LocalProviders(), "text.generate", {"prompt": "ocean waves", "max_tokens": 3})
    assert res.result["finish_reason"] == "length" and len(res.result["text"].split()) == 3


def test_echo_returns_its_payload():
    payload = {"x": 1, "nested": {"y": [1, 2]}}
    res = invoke(LocalProviders(), "echo", payload)
    assert res.result == payload and res.usage == {"cost_usd": 0.0, "tokens": 0}


@pytest.mark.parametrize("cap,payload", [
    ("video.generate", {"prompt": "waves", "duration_s": 5}),
    ("video.edit", {"video": "sha256:" + "a" * 64, "prompt": "slow down"}),
    ("audio.generate", {"prompt": "rain", "duration_s": 30}),
])
def test_catalog_only_capabilities_answer_dry_run(cap, payload, tmp_path):
    log = tmp_path / "calls.jsonl"
    arts = MemoryArtifacts()
    res = invoke(LocalProviders(log_path=str(log)), cap, payload, arts)
    assert res.result["dry_run"] is True and res.result["capability"] == cap
    assert res.result["would_cost_usd"] == DEFAULT_CATALOG[cap].price_usd
    assert res.usage["cost_usd"] == 0.0
    assert len(arts) == 0 and not log.exists()  # nothing billed, nothing executed


def test_latency_must_be_non_negative_and_idempotent_needs_a_path():
    with pytest.raises(DefinitionError):
        LocalProviders(latency_s=-1)
    with pytest.raises(DefinitionError, match="idempotency_path"):
        LocalProviders(idempotent=True)


def test_latency_is_an_async_sleep():
    # Two concurrent calls share one event loop: both start before either finishes.
    p = LocalProviders(latency_s=0.05)
    order: list[str] = []

    async def one(tag: str) -> None:
        order.append(f"start {tag}")
        await p.invoke("echo", {"t": tag}, call_context())
        order.append(f"end {tag}")

    async def main() -> None:
        await asyncio.gather(one("a"), one("b"))

    asyncio.run(main())
    assert order[:2] == ["start a", "start b"]


def test_results_are_json():
    arts = MemoryArtifacts()
    p = LocalProviders()
    for cap, payload in [("image.generate", {"prompt": "p", "size": "512x512"}),
                         ("storyboard.plan", {"brief": "b", "shots": 2}),
                         ("text.generate", {"prompt": "p"}), ("video.generate",
                                                              {"prompt": "p", "duration_s": 1})]:
        res = invoke(p, cap, payload, arts)
        assert json.loads(json.dumps(res.result)) == res.result
        assert json.loads(json.dumps(dict(res.usage))) == dict(res.usage)
