"""Offline providers that produce real artifacts: the default backend for demos and tests.

`LocalProviders` implements the Provider protocol without any network: images are real PNGs
rendered with Pillow (see `images.py`), reviews measure real pixel statistics, text and
storyboards are deterministic functions of their inputs. Everything is byte-for-byte
reproducible, so a replay can be compared with a fresh execution.

Behaviour a caller can rely on:
- a rejected request raises ProviderError shaped like a real API's rejection (`status`,
  `error_code`, `param`), e.g. an unsupported image size is HTTP 400 InvalidParameter;
- catalog entries with ``production=False`` answer in dry-run mode with cost 0;
- with a provider log (argument, else $FROSTLINE_PROVIDER_LOG) every real execution, accepted
  or rejected, appends one JSON line — independent evidence of what was paid for;
- with ``idempotent=True`` the provider remembers idempotency keys in a SQLite file and returns
  the first result for a repeated key without executing again.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import threading
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, IMAGE_SIZES, Catalog
from frostline.capabilities.costs import reported_cost
from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.contract.identity import digest
from frostline.errors import DefinitionError, ProviderError
from frostline.providers import images
from frostline.providers.idempotency import KeyMemory
from frostline.providers.provider_log import ProviderLog, log_call

Handler = Callable[["LocalProviders", Mapping[str, Any], CallContext], Awaitable[ProviderResult]]

DEFAULT_MAX_TOKENS = 128

_VOCAB = ("light", "frame", "scene", "motion", "colour", "texture", "rhythm", "detail",
          "contrast", "mood", "story", "focus", "subject", "space", "depth", "balance", "tone",
          "edge", "shadow", "warmth", "pace", "moment", "gesture", "surface", "horizon",
          "layer", "sequence", "accent", "silhouette", "grain")
_ANGLES = ("wide shot", "medium shot", "close-up", "overhead shot", "low-angle shot",
           "tracking shot", "over-the-shoulder shot", "detail insert")
_BEATS = ("establishing", "introduction", "build-up", "detail", "turn", "climax",
          "resolution", "closing")


def _rejection(capability: str, status: int, code: str, message: str, **fields: Any) -> ProviderError:
    return ProviderError(f"{capability}: {message} (HTTP {status} {code})", status=status,
                         error_code=code, capability=capability, **fields)


def _param_str(capability: str, payload: Mapping[str, Any], name: str, *,
               required: bool = True) -> str | None:
    value = payload.get(name)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value:
        raise _rejection(capability, 400, "InvalidParameter",
                         f"parameter {name!r} must be a non-empty string", param=name)
    return value


def _param_int(capability: str, payload: Mapping[str, Any], name: str, *, default: int,
               lo: int, hi: int) -> int:
    value = payload.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _rejection(capability, 400, "InvalidParameter",
                         f"parameter {name!r} must be an integer in {lo}..{hi}, got {value!r}",
                         param=name)
    return value


def _rng_int(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()[:8], "big")


def _word_count(text: str) -> int:
    return len(text.split())


class LocalProviders:
    """Offline implementations of the catalog's capabilities.

    Args:
        latency_s: simulated latency per real execution (an async sleep).
        log_path: provider log file; default $FROSTLINE_PROVIDER_LOG; None disables the log.
        catalog: prices and the production flag come from here.
        idempotent: remember idempotency keys and return the first result for a repeated key.
        idempotency_path: the SQLite file holding remembered keys (required with idempotent).

    Example: ``providers = LocalProviders(log_path="calls.jsonl")``
    """

    def __init__(self, *, latency_s: float = 0.0, log_path: str | os.PathLike[str] | None = None,
                 catalog: Catalog = DEFAULT_CATALOG, idempotent: bool = False,
                 idempotency_path: str | os.PathLike[str] | None = None) -> None:
        if latency_s < 0:
            raise DefinitionError("latency_s must be >= 0")
        if idempotent and idempotency_path is None:
            raise DefinitionError(
                "idempotent=True needs idempotency_path: a file where remembered keys survive "
                "a crash, e.g. LocalProviders(idempotent=True, idempotency_path='keys.db')"
            )
        self.latency_s = latency_s
        self.catalog = catalog
        self.log = ProviderLog.from_env(log_path)
        self.memory = KeyMemory(idempotency_path) if idempotent and idempotency_path else None
        self._key_locks: dict[str, threading.Lock] = {}
        self._key_locks_guard = threading.Lock()
        self._capabilities: tuple[Catalog, frozenset[str]] | None = None

    # Provider protocol ---------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        """Catalog capabilities this provider answers: implemented ones plus dry-run entries."""
        # Asked on every call (twice): built once per catalog, rebuilt if `catalog` is replaced.
        cached = self._capabilities
        if cached is None or cached[0] is not self.catalog:
            names = frozenset(c.name for c in self.catalog
                              if c.name in _HANDLERS or not c.production)
            cached = self._capabilities = (self.catalog, names)
        return cached[1]

    def honours_idempotency_keys(self, capability: str) -> bool:
        return self.memory is not None and capability in self.capabilities()

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        """Execute one capability call (or answer it in dry-run mode)."""
        cap = self.catalog.get(capability)
        if cap is None or capability not in self.capabilities():
            raise _rejection(capability, 404, "UnknownCapability",
                             f"no local implementation; available: "
                             f"{', '.join(sorted(self.capabilities()))}")
        if not cap.production:
            return ProviderResult(
                {"dry_run": True, "capability": capability, "payload_digest": digest(dict(payload)),
                 "would_cost_usd": cap.price_usd},
                {"cost_usd": 0.0, "tokens": 0, "dry_run": True},
            )
        key = ctx.idempotency_key
        if self.memory is None or key is None:
            return await self._execute(capability, payload, ctx)
        lock = self._lock_for(key)
        # A per-key lock keeps two concurrent requests with one key from both executing. It is
        # polled rather than awaited in a thread so that a cancelled caller never leaves the
        # lock taken, and it works whichever event loop (or thread) the broker calls from.
        while not lock.acquire(blocking=False):
            await asyncio.sleep(0.002)
        try:
            return await self._with_key(self.memory, key, capability, payload, ctx)
        finally:
            lock.release()

    # internals -------------------------------------------------------------------------
    def _lock_for(self, key: str) -> threading.Lock:
        with self._key_locks_guard:
            return self._key_locks.setdefault(key, threading.Lock())

    async def _with_key(self, memory: KeyMemory, key: str, capability: str,
                        payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        h = digest(dict(payload))
        known = await asyncio.to_thread(memory.get, key)
        if known is None:
            result = await self._execute(capability, payload, ctx)
            known = await asyncio.to_thread(memory.remember, key, capability, h,
                                            result.result, dict(result.usage))
            return ProviderResult(known.result, known.usage)
        if (known.capability, known.digest) != (capability, h):
            raise _rejection(capability, 422, "IdempotencyKeyReused",
                             f"idempotency key {key!r} was first used for {known.capability} "
                             f"with another payload; use a new key for a new request",
                             idempotency_key=key)
        return ProviderResult(known.result, {**known.usage, "idempotent_replay": True})

    async def _execute(self, capability: str, payload: Mapping[str, Any],
                       ctx: CallContext) -> ProviderResult:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        try:
            result = await _HANDLERS[capability](self, payload, ctx)
        except ProviderError as exc:
            await log_call(self.log, capability, payload, ctx, ok=False,
                            error_code=exc.fields.get("error_code"), status=exc.fields.get("status"),
                            cost_usd=reported_cost(exc.fields))
            raise
        await log_call(self.log, capability, payload, ctx, ok=True,
                       cost_usd=reported_cost(result.usage))
        return result


    def _usage(self, capability: str, tokens: int = 0) -> dict[str, Any]:
        return {"cost_usd": self.catalog[capability].price_usd, "tokens": tokens}

    def _load_image(self, capability: str, ctx: CallContext, ref: str) -> bytes:
        stored = ctx.artifacts.get(ref)
        if stored is None:
            raise _rejection(capability, 404, "NotFound",
                             f"image {ref} is not in the artifact store; pass a reference "
                             "returned by image.generate or image.edit", param="image")
        data, mime = stored
        if not mime.startswith("image/"):
            raise _rejection(capability, 400, "InvalidImage",
                             f"artifact {ref} is {mime}, not an image", param="image")
        return data

    # handlers ---------------------------------------------------------------------------
    async def _image_generate(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        cap = "image.generate"
        prompt = _param_str(cap, payload, "prompt") or ""
        size = payload.get("size")
        if size not in IMAGE_SIZES:
            raise _rejection(cap, 400, "InvalidParameter",
                             f"the parameter 'size' specified in the request is not valid: "
                             f"{size!r}; supported values: {', '.join(IMAGE_SIZES)}",
                             param="size", supported=list(IMAGE_SIZES))
        seed = _param_int(cap, payload, "seed", default=images.default_seed(prompt),
                          lo=0, hi=2**31 - 1)
        png = await asyncio.to_thread(images.render, prompt, str(size), seed)
        ref = ctx.artifacts.put(png, images.PNG_MIME)
        return ProviderResult({"artifact": ref, "mime": images.PNG_MIME, "size": size,
                               "seed": seed}, self._usage(cap))

    async def _image_edit(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        cap = "image.edit"
        ref = _param_str(cap, payload, "image") or ""
        prompt = _param_str(cap, payload, "prompt") or ""
        data = self._load_image(cap, ctx, ref)
        try:
            png, ops = await asyncio.to_thread(images.edit, data, prompt)
        except images.ImageInputError as exc:
            raise _rejection(cap, 400, "InvalidImage", str(exc), param="image") from exc
        new_ref = ctx.artifacts.put(png, images.PNG_MIME)
        width, height = images.decode(png).size
        return ProviderResult({"artifact": new_ref, "mime": images.PNG_MIME,
                               "size": f"{width}x{height}", "source": ref, "operations": ops},
                              self._usage(cap))

    async def _review_visual(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        cap = "review.visual"
        ref = _param_str(cap, payload, "image") or ""
        criteria = _param_str(cap, payload, "criteria", required=False)
        data = self._load_image(cap, ctx, ref)
        try:
            verdict = await asyncio.to_thread(images.review, data, criteria)
        except images.ImageInputError as exc:
            raise _rejection(cap, 400, "InvalidImage", str(exc), param="image") from exc
        return ProviderResult({"image": ref, **verdict}, self._usage(cap))

    async def _storyboard_plan(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        cap = "storyboard.plan"
        brief = _param_str(cap, payload, "brief") or ""
        count = _param_int(cap, payload, "shots", default=1, lo=1, hi=64)
        style = _param_str(cap, payload, "style", required=False) or "cinematic"
        return ProviderResult(storyboard(brief, count, style), self._usage(cap, _word_count(brief)))

    async def _text_generate(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        cap = "text.generate"
        prompt = _param_str(cap, payload, "prompt") or ""
        cap_words = _param_int(cap, payload, "max_tokens", default=DEFAULT_MAX_TOKENS, lo=1, hi=32768)
        text, finish = compose_text(prompt, cap_words)
        prompt_tokens, completion_tokens = _word_count(prompt), _word_count(text)
        usage = self._usage(cap, prompt_tokens + completion_tokens)
        usage.update(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        return ProviderResult({"text": text, "finish_reason": finish}, usage)

    async def _echo(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        return ProviderResult(dict(payload), self._usage("echo"))


def storyboard(brief: str, count: int, style: str) -> dict[str, Any]:
    """A deterministic storyboard of `count` shots for `brief` in `style`."""
    subject = " ".join(brief.split())[:160]
    shots = []
    for i in range(count):
        r = _rng_int("shot", brief, count, style, i)
        beat = _BEATS[min(i * len(_BEATS) // count, len(_BEATS) - 1)]
        angle = _ANGLES[r % len(_ANGLES)]
        shots.append({"index": i, "prompt": f"{style} {angle}, {beat}: {subject}",
                      "duration_s": 3 + (r >> 8) % 4, "beat": beat})
    return {"shots": shots, "total_duration_s": sum(s["duration_s"] for s in shots),
            "style": style}


def compose_text(prompt: str, max_words: int) -> tuple[str, str]:
    """Deterministic prose about `prompt`, capped at `max_words` words; returns (text, finish)."""
    topic = [w for w in re.findall(r"[A-Za-z][A-Za-z'-]*", prompt) if len(w) > 3][:12] or ["it"]
    r = _rng_int("text", prompt)
    target = 40 + r % 50
    words: list[str] = []
    sentence = 0
    while len(words) < target:
        k = _rng_int("sentence", prompt, sentence)
        a, b = topic[k % len(topic)], _VOCAB[(k >> 8) % len(_VOCAB)]
        c, d = _VOCAB[(k >> 16) % len(_VOCAB)], topic[(k >> 24) % len(topic)]
        words.extend(f"The {a} gives the {b} its {c}, and the {d} carries it forward.".split())
        sentence += 1
    if len(words) > max_words:
        return " ".join(words[:max_words]), "length"
    return " ".join(words), "stop"


_HANDLERS: dict[str, Handler] = {
    "image.generate": LocalProviders._image_generate,
    "image.edit": LocalProviders._image_edit,
    "review.visual": LocalProviders._review_visual,
    "storyboard.plan": LocalProviders._storyboard_plan,
    "text.generate": LocalProviders._text_generate,
    "echo": LocalProviders._echo,
}
