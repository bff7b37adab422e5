"""Providers backed by an OpenAI-compatible HTTP API: real paid image and text calls.

`OpenAIProviders` implements `image.generate` (POST /v1/images/generations, base64 response
stored as an artifact) and `text.generate` (POST /v1/chat/completions) with the `openai`
package. Third-party exceptions are translated here, once, into ProviderError with the
API's `status`, `error_code` and `param`, so the broker records a rejection exactly like a
local one.

Two choices protect the budget:
- The broker's idempotency key goes out as the ``Idempotency-Key`` header on every request.
- The HTTP client retries (429, 5xx, timeouts) only when the API honours idempotency keys for
  that capability, or the capability has no side effects: retrying a paid request that may
  already have executed would pay twice. A timeout or lost connection on a side-effecting
  call is reported with ``outcome_unknown=True``: the provider may have executed it.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.costs import reported_cost
from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.errors import DefinitionError, ProviderError
from frostline.providers import images
from frostline.providers.provider_log import ProviderLog, log_call
from frostline.providers.scrub import Secrets

SUPPORTED = frozenset({"image.generate", "text.generate"})


class OpenAIProviders:
    """image.generate and text.generate over an OpenAI-compatible endpoint.

    Args:
        base_url: API root, e.g. ``https://api.openai.com/v1``.
        api_key: bearer key.
        image_model, text_model: model names sent with each request.
        timeout: seconds per HTTP attempt.
        max_retries: retries for requests that are safe to repeat (see the module docstring).
        idempotency_keys: whether the API deduplicates ``Idempotency-Key``; None takes the
            catalog entry's ``idempotency_keys`` flag.
        log_path: provider log (default $FROSTLINE_PROVIDER_LOG).
        response_format: sent to the images endpoint; None omits it (for models that always
            answer base64).

    Example: ``OpenAIProviders("https://api.openai.com/v1", key, image_model="gpt-image-1",
    text_model="gpt-4o-mini", timeout=120)``
    """

    def __init__(self, base_url: str, api_key: str, *, image_model: str, text_model: str,
                 timeout: float = 120.0, max_retries: int = 2, idempotency_keys: bool | None = None,
                 log_path: str | os.PathLike[str] | None = None, catalog: Catalog = DEFAULT_CATALOG,
                 response_format: str | None = "b64_json") -> None:
        try:
            import openai
        except ImportError as exc:  # an optional dependency
            raise DefinitionError("OpenAIProviders needs the 'openai' package: "
                                  "pip install 'frostline[llm]'") from exc
        if not base_url or not api_key:
            raise DefinitionError("OpenAIProviders needs a base_url and an api_key")
        if timeout <= 0 or max_retries < 0:
            raise DefinitionError("timeout must be > 0 and max_retries >= 0")
        self._openai = openai
        self.base_url = base_url
        self._api_key = api_key
        self.image_model = image_model
        self.text_model = text_model
        self.timeout = timeout
        self.max_retries = max_retries
        self.catalog = catalog
        self.response_format = response_format
        self._idempotency_keys = idempotency_keys
        self.log = ProviderLog.from_env(log_path)

    # Provider protocol -------------------------------------------------------------------
    def capabilities(self) -> frozenset[str]:
        return frozenset(name for name in SUPPORTED if name in self.catalog)

    def honours_idempotency_keys(self, capability: str) -> bool:
        if capability not in self.capabilities():
            return False
        if self._idempotency_keys is not None:
            return self._idempotency_keys
        return self.catalog[capability].idempotency_keys

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        """Send one request; raises ProviderError with the API's status and code on failure."""
        if capability not in self.capabilities():
            raise ProviderError(f"{capability}: not served by OpenAIProviders (serves "
                                f"{', '.join(sorted(self.capabilities()))})", status=404,
                                error_code="UnknownCapability", capability=capability)
        try:
            if capability == "image.generate":
                result = await self._image(payload, ctx)
            else:
                result = await self._text(payload, ctx)
        except ProviderError as exc:
            # The endpoint's words may quote the key it was sent: neither the log nor the
            # error keeps it (the registry scrubs every configured secret again).
            scrubbed = Secrets([self._api_key]).error(exc, capability)
            await log_call(self.log, capability, payload, ctx, ok=False,
                           error_code=scrubbed.fields.get("error_code"),
                           status=scrubbed.fields.get("status"),
                           cost_usd=reported_cost(scrubbed.fields))
            raise scrubbed from None
        await log_call(self.log, capability, payload, ctx, ok=True,
                       cost_usd=reported_cost(result.usage))
        return result

    # requests ------------------------------------------------------------------------------
    def _client(self, capability: str) -> Any:
        cap = self.catalog[capability]
        safe_to_repeat = not cap.side_effecting or self.honours_idempotency_keys(capability)
        # A fresh client per call: the broker may drive calls from different event loops, and
        # an async connection pool is bound to the loop that opened it.
        return self._openai.AsyncOpenAI(base_url=self.base_url, api_key=self._api_key,
                                        timeout=self.timeout,
                                        max_retries=self.max_retries if safe_to_repeat else 0)

    def _headers(self, ctx: CallContext) -> dict[str, str]:
        return {"Idempotency-Key": header_key(ctx.idempotency_key)} if ctx.idempotency_key else {}

    async def _image(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        cap = "image.generate"
        params: dict[str, Any] = {"model": self.image_model, "prompt": payload.get("prompt"),
                                  "size": payload.get("size"), "n": 1}
        if self.response_format:
            params["response_format"] = self.response_format
        extra_body = {"seed": payload["seed"]} if "seed" in payload else None
        async with self._client(cap) as client:
            response = await self._call(cap, client.images.generate(
                **params, extra_body=extra_body, extra_headers=self._headers(ctx)))
        data = getattr(response, "data", None) or []
        encoded = getattr(data[0], "b64_json", None) if data else None
        if not isinstance(encoded, str) or not encoded:
            raise _malformed(cap, "no data[0].b64_json in the images response")
        try:
            blob = base64.b64decode(encoded, validate=True)
            mime, width, height = images.describe(blob)
        except (binascii.Error, images.ImageInputError) as exc:
            raise _malformed(cap, f"data[0].b64_json is not a base64 image: {exc}") from exc
        ref = ctx.artifacts.put(blob, mime)
        result: dict[str, Any] = {"artifact": ref, "mime": mime, "size": f"{width}x{height}",
                                  "model": self.image_model}
        if "seed" in payload:
            result["seed"] = payload["seed"]
        revised = getattr(data[0], "revised_prompt", None)
        if isinstance(revised, str):
            result["revised_prompt"] = revised
        usage = getattr(response, "usage", None)
        tokens = int(getattr(usage, "total_tokens", 0) or 0) if usage is not None else 0
        return ProviderResult(result, {"cost_usd": self.catalog[cap].price_usd, "tokens": tokens})

    async def _text(self, payload: Mapping[str, Any], ctx: CallContext) -> ProviderResult:
        cap = "text.generate"
        params: dict[str, Any] = {"model": self.text_model,
                                  "messages": [{"role": "user", "content": payload.get("prompt")}]}
        if "max_tokens" in payload:
            params["max_tokens"] = payload["max_tokens"]
        async with self._client(cap) as client:
            response = await self._call(cap, client.chat.completions.create(
                **params, extra_headers=self._headers(ctx)))
        choices = getattr(response, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        text = getattr(message, "content", None)
        if not isinstance(text, str) or not text:
            raise _malformed(cap, "no choices[0].message.content in the chat response")
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return ProviderResult(
            {"text": text, "finish_reason": getattr(choices[0], "finish_reason", None),
             "model": getattr(response, "model", None) or self.text_model},
            {"cost_usd": self.catalog[cap].price_usd, "tokens": prompt_tokens + completion_tokens,
             "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens})

    async def _call(self, capability: str, request: Any) -> Any:
        """Await an openai request, translating its exceptions into ProviderError."""
        openai = self._openai
        side_effecting = self.catalog[capability].side_effecting
        try:
            return await request
        except openai.APITimeoutError as exc:
            raise ProviderError(
                f"{capability}: request timed out after {self.timeout}s", status=None,
                error_code="Timeout", capability=capability,
                outcome_unknown=side_effecting) from exc
        except openai.APIConnectionError as exc:
            raise ProviderError(
                f"{capability}: connection to {self.base_url} failed: {exc.__cause__ or exc}",
                status=None, error_code="ConnectionError", capability=capability,
                outcome_unknown=side_effecting) from exc
        except openai.APIStatusError as exc:
            body = exc.body if isinstance(exc.body, dict) else {}
            detail = body.get("message") or str(exc)
            code = exc.code or body.get("type") or f"HTTP{exc.status_code}"
            raise ProviderError(
                f"{capability}: HTTP {exc.status_code} {code}: {detail}",
                status=exc.status_code, error_code=str(code), param=exc.param,
                capability=capability) from exc
        except openai.APIError as exc:
            raise _malformed(capability, str(exc)) from exc
        except ValueError as exc:  # the library's JSON decoding of a non-JSON body
            raise _malformed(capability, f"body is not JSON ({exc})") from exc



def header_key(key: str) -> str:
    """The idempotency key as an HTTP header value: ASCII keys pass unchanged, others are
    percent-encoded (a callsite may contain non-ASCII Python identifiers)."""
    return quote(key, safe="/@:.#-_~!$&'()*+,;=")


def _malformed(capability: str, why: str) -> ProviderError:
    return ProviderError(f"{capability}: malformed response from the API: {why}", status=502,
                         error_code="MalformedResponse", capability=capability)
