"""The image functions behind the local providers: determinism, edits and measured reviews."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw

from frostline.capabilities import IMAGE_SIZES
from frostline.providers import images


def png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


@settings(max_examples=12, deadline=None)
@given(prompt=st.text(min_size=1, max_size=80), seed=st.integers(0, 2**31 - 1),
       size=st.sampled_from(IMAGE_SIZES[:1]))
def test_render_is_a_pure_function(prompt, seed, size):
    a = images.render(prompt, size, seed)
    assert a == images.render(prompt, size, seed)
    mime, w, h = images.describe(a)
    assert mime == "image/png" and f"{w}x{h}" == size


def test_png_has_no_metadata_chunks():
    data = images.render("metadata check", "512x512", 0)
    chunks, pos = [], 8
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        chunks.append(data[pos + 4:pos + 8].decode())
        pos += 12 + length
    assert set(chunks) == {"IHDR", "IDAT", "IEND"}


@settings(max_examples=15, deadline=None)
@given(prompt=st.text(min_size=1, max_size=60))
def test_review_invariants(prompt):
    verdict = images.review(images.render(prompt, "512x512", 1))
    stats = verdict["stats"]
    assert 0 <= stats["mean_brightness"] <= 255 and stats["contrast"] >= 0
    assert 0 <= stats["edge_density"] <= 1
    assert 0 <= verdict["score"] <= 1
    assert (verdict["verdict"] == "pass") == (verdict["reasons"] == [])


@settings(max_examples=40, deadline=None)
@given(prompt=st.text(max_size=60))
def test_edit_operations_are_never_empty_and_deterministic(prompt):
    ops = images.edit_operations(prompt)
    assert ops and ops == images.edit_operations(prompt)


def test_review_rules_on_constructed_images():
    black = images.review(png(Image.new("RGB", (256, 256), (0, 0, 0))))
    white = images.review(png(Image.new("RGB", (256, 256), (255, 255, 255))))
    grey = images.review(png(Image.new("RGB", (256, 256), (128, 128, 128))))
    checker = Image.new("RGB", (256, 256), (30, 30, 30))
    draw = ImageDraw.Draw(checker)
    for x in range(0, 256, 32):
        for y in range(0, 256, 32):
            if (x + y) // 32 % 2:
                draw.rectangle((x, y, x + 31, y + 31), fill=(230, 230, 230))
    board = images.review(png(checker))
    assert black["verdict"] == "fail" and any("too dark" in r for r in black["reasons"])
    assert white["verdict"] == "fail" and any("too bright" in r for r in white["reasons"])
    assert grey["verdict"] == "fail" and any("too flat" in r for r in grey["reasons"])
    assert any("no detail" in r for r in grey["reasons"])
    assert board["verdict"] == "pass" and board["stats"]["contrast"] > 90
    assert board["score"] > max(black["score"], white["score"], grey["score"])


def test_flat_prompts_render_flat_images():
    verdict = images.review(images.render("a foggy blank morning", "512x512", 3))
    assert verdict["verdict"] == "fail" and any("too flat" in r for r in verdict["reasons"])


@pytest.mark.parametrize("prompt,ops", [
    ("mirror it", ["flip"]),
    ("make it grayscale and blur", ["grayscale", "blur"]),
    ("warm red tint", ["tint:red", "tint:warm"]),
    ("darken, add a caption", ["darken", "caption"]),
    ("something nice", ["caption"]),
])
def test_edit_selects_operations_and_keeps_dimensions(prompt, ops):
    source = images.render("harbour", "512x512", 2)
    out, applied = images.edit(source, prompt)
    assert applied == ops
    assert images.describe(out)[1:] == (512, 512)
    assert out != source


def test_grayscale_edit_is_grey():
    out, _ = images.edit(images.render("orchard", "512x512", 2), "monochrome")
    r, g, b = images.statistics(out)["mean_rgb"]
    assert r == g == b


def test_decode_rejects_garbage():
    with pytest.raises(images.ImageInputError):
        images.decode(b"GIF89a-not-really")
    with pytest.raises(ValueError):
        images.parse_size("100x100")
