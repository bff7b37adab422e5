"""Real, deterministic images for the offline providers: render, edit and measure PNGs.

The local providers must produce artifacts a person can look at (they appear in demos) and
that a replay can prove byte-identical, so every function here is a pure function of its
inputs: the pseudo-random layout is seeded from a SHA-256 of the inputs (never from Python's
salted `hash`), and PNGs are encoded with fixed parameters and no metadata chunks (no
timestamps, no text, no DPI), so equal inputs give equal bytes in any process.

Prompts steer the picture in ways the demos rely on: words such as "night" or "dark" render a
very dark image, and "fog", "blank" or "empty" render a flat one, so `review` deterministically
fails them; `edit` with "brighten" or "contrast" repairs them.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import random
import re
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image, ImageDraw, ImageEnhance, ImageFilter, ImageFont, ImageOps, ImageStat

from frostline.capabilities.catalog import IMAGE_SIZES

PNG_MIME = "image/png"
# Fixed encoder parameters: a level change would change every artifact digest.
_PNG_PARAMS: dict[str, Any] = {"format": "PNG", "compress_level": 6, "optimize": False}

_DARK_WORDS = frozenset({"night", "dark", "midnight", "shadow", "shadows", "noir", "unlit"})
_FLAT_WORDS = frozenset({"fog", "foggy", "blank", "empty", "flat", "void"})
_TINTS: dict[str, tuple[int, int, int]] = {
    "red": (220, 40, 40), "orange": (240, 140, 30), "yellow": (240, 220, 40),
    "green": (40, 180, 70), "blue": (40, 90, 220), "purple": (140, 60, 200),
    "pink": (240, 120, 180), "warm": (250, 160, 60), "cool": (60, 140, 230),
    "sepia": (160, 110, 60),
}

# Review thresholds (0..255 luminance scale). A real reviewer is a model; this one is a rule
# that callers can reason about: too dark, too bright, too flat, or no detail fails.
MIN_BRIGHTNESS = 40.0
MAX_BRIGHTNESS = 235.0
MIN_CONTRAST = 12.0
MIN_EDGE_DENSITY = 0.002
_EDGE_THRESHOLD = 32


class ImageInputError(ValueError):
    """The bytes given as an image are not a decodable image."""


def parse_size(size: str) -> tuple[int, int]:
    """'1024x1536' → (1024, 1536). Raises ValueError for a size outside IMAGE_SIZES."""
    if size not in IMAGE_SIZES:
        raise ValueError(size)
    w, h = size.split("x")
    return int(w), int(h)


def default_seed(prompt: str) -> int:
    """The seed used when a caller gives none: derived from the prompt, so still deterministic."""
    return int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:4], "big") % (2**31)


def encode_png(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, **_PNG_PARAMS)
    return buf.getvalue()


def decode(data: bytes) -> Image.Image:
    """Decode image bytes to RGB; raises ImageInputError for anything Pillow cannot read."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as exc:  # Pillow raises several types for corrupt input
        raise ImageInputError(f"not a decodable image ({len(data)} bytes, "
                              f"{type(exc).__name__})") from exc
    return image.convert("RGB")


def describe(data: bytes) -> tuple[str, int, int]:
    """(mime, width, height) of image bytes; raises ImageInputError for non-images."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as exc:  # Pillow raises several types for corrupt input
        raise ImageInputError(f"not a decodable image ({len(data)} bytes, "
                              f"{type(exc).__name__})") from exc
    mime = Image.MIME.get(image.format or "", "application/octet-stream")
    return mime, image.width, image.height


def _rng(*parts: object) -> random.Random:
    seed = hashlib.sha256("\x00".join(str(p) for p in parts).encode()).digest()
    return random.Random(int.from_bytes(seed, "big"))


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z]+", text.lower()))


def _font(px: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    try:
        return ImageFont.load_default(size=px)
    except (ImportError, OSError):  # Pillow without FreeType: fixed bitmap font
        return ImageFont.load_default()


def _color(hue: float, sat: float, val: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(hue % 1.0, max(0.0, min(sat, 1.0)), max(0.0, min(val, 1.0)))
    return round(r * 255), round(g * 255), round(b * 255)


def _gradient(size: tuple[int, int], top: Sequence[int], bottom: Sequence[int],
              tilt: float) -> Image.Image:
    # A vertical ramp blended with a horizontal one gives a tilted gradient; working on a
    # 256x256 ramp and resizing costs far less than per-pixel Python work.
    vertical = Image.linear_gradient("L")
    ramp = Image.blend(vertical, vertical.transpose(Image.Transpose.TRANSPOSE), tilt).resize(size)
    bands = [ramp.point([round(a + (b - a) * v / 255) for v in range(256)])
             for a, b in zip(top, bottom, strict=True)]
    return Image.merge("RGB", bands)


@dataclass(frozen=True)
class _Mood:
    value: float
    shapes: bool
    text_fill: tuple[int, int, int, int]


def _mood(prompt: str) -> _Mood:
    words = _words(prompt)
    if words & _FLAT_WORDS:
        return _Mood(0.75, False, (0, 0, 0, 0))
    if words & _DARK_WORDS:
        return _Mood(0.10, True, (70, 70, 80, 255))
    return _Mood(0.85, True, (255, 255, 255, 255))


def render(prompt: str, size: str, seed: int) -> bytes:
    """Render a PNG for (prompt, size, seed): byte-identical for equal inputs.

    Example: ``png = render("a red fox in snow", "1024x1024", 7)``
    """
    width, height = parse_size(size)
    mood = _mood(prompt)
    # The palette follows the prompt, the layout follows the seed: two seeds of one prompt
    # look like variations of one picture.
    hue = _rng("hue", prompt).random()
    rng = _rng("layout", prompt, size, seed)
    top = _color(hue, 0.55, mood.value)
    bottom = _color(hue + 0.12, 0.75, mood.value * 0.55)
    if not mood.shapes:
        bottom = _color(hue, 0.05, mood.value * 0.98)
        top = _color(hue, 0.05, mood.value)
    image = _gradient((width, height), top, bottom, rng.uniform(0.0, 0.45))
    draw = ImageDraw.Draw(image, "RGBA")
    if mood.shapes:
        unit = min(width, height)
        for _ in range(rng.randint(6, 12)):
            cx, cy = rng.uniform(0, width), rng.uniform(0, height * 0.8)
            r = rng.uniform(0.05, 0.22) * unit
            fill = (*_color(hue + rng.uniform(-0.25, 0.35), rng.uniform(0.4, 0.9),
                            mood.value * rng.uniform(0.6, 1.1)), rng.randint(90, 200))
            shape = rng.choice(("ellipse", "rect", "triangle"))
            box = (cx - r, cy - r, cx + r, cy + r)
            if shape == "ellipse":
                draw.ellipse(box, fill=fill)
            elif shape == "rect":
                draw.rounded_rectangle(box, radius=r * 0.2, fill=fill)
            else:
                draw.polygon([(cx, cy - r), (cx + r, cy + r), (cx - r, cy + r)], fill=fill)
        # A horizon band grounds the composition.
        horizon = height * rng.uniform(0.62, 0.78)
        ground = (*_color(hue + 0.5, 0.35, mood.value * 0.45), 170)
        draw.rectangle((0, horizon, width, height), fill=ground)
        _caption(draw, width, height, prompt, f"seed {seed} · {size}", mood.text_fill)
    return encode_png(image)


def _caption(draw: ImageDraw.ImageDraw, width: int, height: int, text: str, footer: str,
             fill: tuple[int, int, int, int], *, at_top: bool = False) -> None:
    px = max(14, width // 28)
    font = _font(px)
    lines = textwrap.wrap(text, width=max(12, int(width / (px * 0.55))))[:3]
    band = (len(lines) + 1) * px * 1.3 + px
    y0 = px * 0.5 if at_top else height - band - px * 0.5
    draw.rectangle((0, y0, width, y0 + band), fill=(0, 0, 0, 110))
    y = y0 + px * 0.5
    for line in lines:
        draw.text((px, y), line, font=font, fill=fill)
        y += px * 1.3
    draw.text((px, y), footer, font=_font(max(10, px // 2)), fill=fill)


def edit_operations(prompt: str) -> list[str]:
    """The deterministic transforms an edit prompt selects, in the order they are applied."""
    words = _words(prompt)
    ops: list[str] = []
    if words & {"flip", "mirror", "mirrored"}:
        ops.append("flip")
    if words & {"brighten", "brighter", "lighten", "lighter", "exposure"}:
        ops.append("brighten")
    if words & {"darken", "darker"}:
        ops.append("darken")
    if words & {"contrast", "sharpen", "crisp", "vivid"}:
        ops.append("contrast")
    if words & {"gray", "grey", "greyscale", "grayscale", "monochrome"}:
        ops.append("grayscale")
    ops.extend(f"tint:{name}" for name in sorted(words & set(_TINTS)))
    if words & {"blur", "soft", "softer", "dreamy"}:
        ops.append("blur")
    if not ops or words & {"caption", "title", "label", "text"}:
        ops.append("caption")
    return ops


def edit(data: bytes, prompt: str) -> tuple[bytes, list[str]]:
    """Apply the transforms `prompt` selects to the image `data`; returns (png, operations)."""
    image = decode(data)
    ops = edit_operations(prompt)
    for op in ops:
        if op == "flip":
            image = ImageOps.mirror(image)
        elif op == "brighten":
            mean = ImageStat.Stat(image.convert("L")).mean[0]
            # Aim the mean luminance at mid-grey, within sane bounds.
            image = ImageEnhance.Brightness(image).enhance(max(1.2, min(128.0 / max(mean, 1.0), 6.0)))
        elif op == "darken":
            image = ImageEnhance.Brightness(image).enhance(0.5)
        elif op == "contrast":
            image = ImageOps.autocontrast(image, cutoff=1)
        elif op == "grayscale":
            image = ImageOps.grayscale(image).convert("RGB")
        elif op.startswith("tint:"):
            overlay = Image.new("RGB", image.size, _TINTS[op[5:]])
            image = Image.blend(image, overlay, 0.25)
        elif op == "blur":
            image = image.filter(ImageFilter.GaussianBlur(radius=max(1, image.width // 200)))
        elif op == "caption":
            draw = ImageDraw.Draw(image, "RGBA")
            _caption(draw, image.width, image.height, prompt, "edited", (255, 255, 255, 255),
                     at_top=True)
    return encode_png(image), ops


def statistics(data: bytes) -> dict[str, Any]:
    """Measured statistics of an image: dimensions, brightness, contrast, edges, colour."""
    image = decode(data)
    luma = image.convert("L")
    stat = ImageStat.Stat(luma)
    edges = luma.filter(ImageFilter.FIND_EDGES)
    # Pillow copies the 1-pixel border unfiltered; measure only the interior.
    if image.width > 2 and image.height > 2:
        edges = edges.crop((1, 1, image.width - 1, image.height - 1))
    # Fraction of pixels whose edge response exceeds a fixed threshold.
    strong = edges.point([0] * _EDGE_THRESHOLD + [255] * (256 - _EDGE_THRESHOLD))
    edge_density = ImageStat.Stat(strong).mean[0] / 255.0
    rgb = ImageStat.Stat(image)
    return {
        "width": image.width,
        "height": image.height,
        "mean_brightness": round(stat.mean[0], 3),
        "contrast": round(stat.stddev[0], 3),
        "edge_density": round(edge_density, 5),
        "mean_rgb": [round(v, 3) for v in rgb.mean],
    }


def review(data: bytes, criteria: str | None = None) -> dict[str, Any]:
    """Verdict over measured statistics: fail when too dark, too bright, too flat or featureless.

    The score is the mean of four sub-scores in [0, 1]; a verdict fails when any rule fails.
    """
    stats = statistics(data)
    reasons: list[str] = []
    mean, contrast, edges = stats["mean_brightness"], stats["contrast"], stats["edge_density"]
    if mean < MIN_BRIGHTNESS:
        reasons.append(f"too dark: mean brightness {mean:.1f} < {MIN_BRIGHTNESS:.0f}")
    if mean > MAX_BRIGHTNESS:
        reasons.append(f"too bright: mean brightness {mean:.1f} > {MAX_BRIGHTNESS:.0f}")
    if contrast < MIN_CONTRAST:
        reasons.append(f"too flat: contrast {contrast:.1f} < {MIN_CONTRAST:.0f}")
    if edges < MIN_EDGE_DENSITY:
        reasons.append(f"no detail: edge density {edges:.4f} < {MIN_EDGE_DENSITY}")
    parts = (
        min(mean / MIN_BRIGHTNESS, 1.0),
        min((255.0 - mean) / (255.0 - MAX_BRIGHTNESS), 1.0),
        min(contrast / (MIN_CONTRAST * 4), 1.0),
        min(edges / (MIN_EDGE_DENSITY * 10), 1.0),
    )
    out: dict[str, Any] = {
        "verdict": "fail" if reasons else "pass",
        "score": round(sum(parts) / len(parts), 4),
        "stats": stats,
        "reasons": reasons,
    }
    if criteria is not None:
        out["criteria"] = criteria
    return out
