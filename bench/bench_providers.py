"""Benchmark the local providers: image rendering, edit, review, and the provider log.

Every row is compared with a baseline measured in the same run:
- render / edit / review of one size vs encoding a solid-colour PNG of that size (the floor
  of producing any PNG of those dimensions with Pillow);
- a full `invoke("image.generate")` vs calling the renderer directly (provider overhead);
- a provider-log append (flock + O_APPEND + fsync) vs a plain buffered append of the same line.

Run: ``python bench/bench_providers.py [--repeat N]``. Prints medians in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frostline.capabilities import (
    IMAGE_SIZES,
    images,
)
from frostline.capabilities.provider import CallContext
from frostline.providers.local import LocalProviders
from frostline.providers.provider_log import ProviderLog


class _Sink:
    def __init__(self) -> None:
        self.items: dict[str, tuple[bytes, str]] = {}

    def put(self, data: bytes, mime: str) -> str:
        ref = "sha256:" + hashlib.sha256(data).hexdigest()
        self.items[ref] = (data, mime)
        return ref

    def get(self, ref: str) -> tuple[bytes, str] | None:
        return self.items.get(ref)


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up (fonts, imports)
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def solid_png(size: str) -> bytes:
    w, h = images.parse_size(size)
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (90, 120, 200)).save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    n = args.repeat
    rows: list[tuple[str, float, str, float]] = []
    prompt = "a lighthouse on a cliff at dawn, waves below"
    for size in IMAGE_SIZES:
        base = median_ms(lambda s=size: solid_png(s), n)
        png = images.render(prompt, size, 1)
        rows.append((f"render {size}", median_ms(lambda s=size: images.render(prompt, s, 1), n),
                     "solid PNG encode", base))
        rows.append((f"edit (brighten+blur) {size}",
                     median_ms(lambda p=png: images.edit(p, "brighten and blur"), n),
                     "solid PNG encode", base))
        rows.append((f"review {size}", median_ms(lambda p=png: images.review(p), n),
                     "solid PNG encode", base))

    providers = LocalProviders()
    ctx = CallContext("bench", "orchestrate/#0@:0", None, _Sink())
    payload = {"prompt": prompt, "size": "1024x1024", "seed": 1}
    rows.append(("invoke image.generate 1024", median_ms(
        lambda: asyncio.run(providers.invoke("image.generate", payload, ctx)), n),
        "images.render 1024", median_ms(lambda: images.render(prompt, "1024x1024", 1), n)))

    with tempfile.TemporaryDirectory() as tmp:
        log = ProviderLog(Path(tmp) / "log.jsonl")
        plain = Path(tmp) / "plain.jsonl"
        line = '{"capability":"echo","ok":true,"payload":{"i":1}}\n'

        def plain_append() -> None:
            with plain.open("a") as fh:
                fh.write(line)

        rows.append(("provider log append (fsync)",
                     median_ms(lambda: log.append("echo", {"i": 1}, ok=True), n * 10),
                     "plain append, no fsync", median_ms(plain_append, n * 10)))

    print(f"{'operation':34} {'median ms':>10}  {'baseline':26} {'median ms':>10} {'ratio':>7}")
    print("-" * 93)
    for name, value, base_name, base in rows:
        print(f"{name:34} {value:10.2f}  {base_name:26} {base:10.2f} {value / base:7.2f}")


if __name__ == "__main__":
    main()
