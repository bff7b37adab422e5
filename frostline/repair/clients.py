"""Model clients for the repair loop: any OpenAI-compatible chat endpoint, or stored replies.

The repair loop asks a model for a candidate script and needs only one operation,
`complete(messages) -> Completion`. Two clients implement it:

- `OpenAIChatClient` talks to an OpenAI-compatible `/chat/completions` endpoint through the
  `openai` package, which retries 429 and 5xx responses (and timeouts) with exponential
  backoff, jitter and `Retry-After`. Every failure that reaches the caller is translated at this
  boundary into a `ModelError` naming what went wrong (`kind`) and what to do.
- `ReplayClient` (frostline.repair.replay) replays stored replies in order from a JSON file:
  tests, demos and the reproduction of studies that used stored model outputs.

Configuration precedence for `OpenAIChatClient` (first found wins):

    base URL:  base_url argument > $FROSTLINE_MODEL_BASE_URL > $OPENAI_BASE_URL > https://api.openai.com/v1
    API key:   api_key argument  > $FROSTLINE_MODEL_API_KEY  > $OPENAI_API_KEY  > error

`ModelError` derives from `RunError`: a model that cannot be reached or answers nonsense stops
the repair of a run at run time, like a failing provider; it is not a definition problem.
"""

from __future__ import annotations

import json
import os
from typing import Any

from frostline.errors import DefinitionError
from frostline.providers.scrub import Secrets
from frostline.repair.completion import (
    Accounting,
    ChatClient,
    Completion,
    ModelError,
    Usage,
    check_messages,
    parse_usage,
)
from frostline.repair.replay import REPLAY_KINDS, ReplayClient, ReplayPolicy

ENV_BASE_URL = "FROSTLINE_MODEL_BASE_URL"
ENV_API_KEY = "FROSTLINE_MODEL_API_KEY"


def parse_completion(body: str, requested_model: str) -> Completion:
    """Validate a chat-completions response body; raises ModelError(kind="malformed")."""

    def bad(why: str) -> ModelError:
        return ModelError(f"model {requested_model} returned a malformed response: {why}; "
                          "check that the base URL points at an OpenAI-compatible "
                          "/chat/completions endpoint", kind="malformed", model=requested_model)

    try:
        data = json.loads(body)
    except ValueError:
        raise bad(f"body is not JSON (starts with {body[:80]!r})") from None
    if not isinstance(data, dict):
        raise bad("body is not a JSON object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise bad("no 'choices'")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise bad("choices[0] has no 'message'")
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = "".join(p.get("text", "") for p in content
                          if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str) or not content.strip():
        reason = first.get("finish_reason") if isinstance(first, dict) else None
        raise bad(f"empty message content (finish_reason={reason!r})")
    model = data.get("model") if isinstance(data.get("model"), str) else requested_model
    return Completion(content, parse_usage(data.get("usage")), str(model), data)


class OpenAIChatClient:
    """A chat model behind any OpenAI-compatible endpoint.

    Args:
        model: model name sent with each request.
        base_url: endpoint root, e.g. ``http://localhost:8000/v1`` (see the module docstring
            for the precedence with environment variables).
        api_key: bearer key (any non-empty string for servers that need none).
        timeout: seconds per HTTP attempt.
        max_retries: retries on 408/409/429/5xx and timeouts, with exponential backoff,
            jitter and Retry-After (the `openai` package's policy); 0 disables them.
        temperature, max_tokens: sent when not None.

    Example: ``OpenAIChatClient("gpt-4o-mini").complete([{"role": "user", "content": "hi"}])``
    """

    def __init__(self, model: str, *, base_url: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0, max_retries: int = 3, temperature: float | None = None,
                 max_tokens: int | None = None) -> None:
        try:
            import openai
        except ImportError as exc:  # an optional dependency
            raise DefinitionError("OpenAIChatClient needs the 'openai' package: "
                                  "pip install 'frostline[llm]'") from exc
        if not model:
            raise DefinitionError("a model name is required, e.g. openai:gpt-4o-mini")
        if timeout <= 0 or max_retries < 0:
            raise DefinitionError("timeout must be > 0 and max_retries >= 0")
        key = api_key or os.environ.get(ENV_API_KEY) or os.environ.get("OPENAI_API_KEY")
        if not key:
            raise DefinitionError(
                f"no API key for model {model}: set ${ENV_API_KEY} (or $OPENAI_API_KEY) "
                "in the environment (any non-empty value for a server that checks no key), or "
                "declare the endpoint in frostline.toml as a [models.NAME] table whose "
                "api_key_env names the variable holding the key, and pass --model NAME "
                "(from Python: api_key=...)")
        self.model = model
        self.base_url = base_url or os.environ.get(ENV_BASE_URL) or None
        self.max_retries = max_retries
        self._extra: dict[str, Any] = {}
        if temperature is not None:
            self._extra["temperature"] = temperature
        if max_tokens is not None:
            self._extra["max_tokens"] = max_tokens
        self._openai = openai
        self._secrets = Secrets([key])  # an endpoint may quote the key back in its error
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout,
                                     max_retries=max_retries)
        self._accounting = Accounting()

    @property
    def usage(self) -> Usage:
        """Tokens used by every successful completion so far."""
        return self._accounting.usage

    @property
    def calls(self) -> int:
        return self._accounting.calls

    def complete(self, messages: list[dict[str, Any]]) -> Completion:
        """One chat completion; raises ModelError for every failure that survives retries."""
        msgs = check_messages(messages)
        openai = self._openai
        try:
            response = self._client.chat.completions.with_raw_response.create(
                model=self.model, messages=msgs, **self._extra)  # type: ignore[arg-type]
            body = response.http_response.text
        except openai.APITimeoutError as exc:
            raise self._error("timeout", f"timed out after {self.max_retries} retries; raise "
                              "timeout or check the endpoint", exc) from exc
        except openai.APIConnectionError as exc:
            raise self._error("connection", f"could not connect to {self._client.base_url} "
                              f"({exc.__cause__ or exc}); check the base URL", exc) from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except openai.APIError as exc:
            raise self._error("malformed", str(exc), exc) from exc
        completion = parse_completion(body, self.model)
        self._accounting.add(completion.usage)
        return completion

    def _status_error(self, exc: Any) -> ModelError:
        status = int(exc.status_code)
        detail = exc.body.get("message") if isinstance(exc.body, dict) else None
        detail = detail or str(exc)
        if status in (401, 403):
            return self._error("auth", f"HTTP {status}: {detail}; check the API key", exc, status)
        if status == 429:
            return self._error("rate_limited", f"HTTP 429 after {self.max_retries} retries: "
                               f"{detail}; wait or raise max_retries", exc, status)
        if status >= 500:
            return self._error("server_error", f"HTTP {status} after {self.max_retries} retries: "
                               f"{detail}", exc, status)
        return self._error("bad_request", f"HTTP {status}: {detail}", exc, status)

    def _error(self, kind: str, message: str, exc: BaseException,
               status: int | None = None) -> ModelError:
        return ModelError(self._secrets.scrub(f"model {self.model}: {message}"), kind=kind,
                          model=self.model,
                          status=status, cause=type(exc).__name__)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def client_from_spec(spec: str, *, replay: ReplayPolicy | None = None,
                     **options: Any) -> ChatClient:
    """Build a client from ``openai:MODEL`` or, where `replay` allows it, ``replay:FILE``
    (stored replies; ``recorded:FILE`` is the older spelling of the same thing).

    `options` go to OpenAIChatClient (base_url, api_key, timeout, max_retries, ...). Without a
    `replay` policy a replay spec is refused: a server never turns a client's text into a path
    it opens.
    Example: ``client_from_spec("replay:replies.json", replay=ReplayPolicy.for_cli())``
    """
    kind, sep, rest = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if sep and rest and kind == "openai":
        return OpenAIChatClient(rest, **options)
    if sep and rest and kind in REPLAY_KINDS:
        if replay is None:
            raise DefinitionError(
                f"model spec {spec!r} replays stored replies from a file, which is a command-line "
                "and test facility only; name a configured model endpoint, e.g. 'openai:MODEL'",
                field="model")
        if options:
            raise DefinitionError(f"replayed replies take no options (got {', '.join(options)})")
        return ReplayClient(rest, policy=replay)
    raise DefinitionError(
        f"model spec {spec!r} is not understood; use 'openai:MODEL' (an OpenAI-compatible "
        "endpoint, see FROSTLINE_MODEL_BASE_URL) or 'replay:FILE' (stored replies)",
        field="model")
