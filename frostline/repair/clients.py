"""Model clients for the repair loop: any OpenAI-compatible chat endpoint, or recorded replies.

The repair loop asks a model for a candidate script and needs only one operation,
`complete(messages) -> Completion`. Two clients implement it:

- `OpenAIChatClient` talks to an OpenAI-compatible `/chat/completions` endpoint through the
  `openai` package, which retries 429 and 5xx responses (and timeouts) with exponential
  backoff, jitter and `Retry-After`. Every failure that reaches the caller is translated at this
  boundary into a `ModelError` naming what went wrong (`kind`) and what to do.
- `RecordedClient` replays stored responses in order from a JSON file: tests, demos and the
  reproduction of studies that used stored model outputs.

Configuration precedence for `OpenAIChatClient` (first found wins):

    base URL:  base_url argument > $FROSTLINE_MODEL_BASE_URL > $OPENAI_BASE_URL > https://api.openai.com/v1
    API key:   api_key argument  > $FROSTLINE_MODEL_API_KEY  > $OPENAI_API_KEY  > error

`ModelError` derives from `RunError`: a model that cannot be reached or answers nonsense stops
the repair of a run at run time, like a failing provider; it is not a definition problem.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from frostline.errors import DefinitionError, RunError

ENV_BASE_URL = "FROSTLINE_MODEL_BASE_URL"
ENV_API_KEY = "FROSTLINE_MODEL_API_KEY"


class ModelError(RunError):
    """A model call failed. `kind` is one of: rate_limited, server_error, timeout, connection,
    auth, bad_request, malformed, exhausted."""

    code = "model"


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens,
                     self.total_tokens + other.total_tokens)

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens}


@dataclass(frozen=True)
class Completion:
    text: str
    usage: Usage
    model: str
    raw: dict[str, Any] = field(default_factory=dict)


class ModelClient(Protocol):
    """What the repair loop needs from a model."""

    def complete(self, messages: list[dict[str, Any]]) -> Completion: ...


def _check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    if not isinstance(messages, Sequence) or not messages:
        raise DefinitionError("messages must be a non-empty list of {'role', 'content'} objects")
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) or not isinstance(m.get("role"), str) \
                or not isinstance(m.get("content"), str):
            raise DefinitionError(f"message {i} must be an object with string 'role' and 'content'")
    return [dict(m) for m in messages]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_usage(data: Any) -> Usage:
    """Usage from an API `usage` object; missing or malformed counts read as 0."""
    if not isinstance(data, Mapping):
        return Usage()
    prompt, completion = _int(data.get("prompt_tokens")), _int(data.get("completion_tokens"))
    return Usage(prompt, completion, _int(data.get("total_tokens")) or prompt + completion)


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


class _Accounting:
    """Cumulative token usage and call count, safe to update from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.usage = Usage()
        self.calls = 0

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.usage = self.usage + usage
            self.calls += 1


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
                f"no API key for model {model}: pass api_key or set {ENV_API_KEY} "
                "(any non-empty value for servers that do not check keys)")
        self.model = model
        self.base_url = base_url or os.environ.get(ENV_BASE_URL) or None
        self.max_retries = max_retries
        self._extra: dict[str, Any] = {}
        if temperature is not None:
            self._extra["temperature"] = temperature
        if max_tokens is not None:
            self._extra["max_tokens"] = max_tokens
        self._openai = openai
        self._client = openai.OpenAI(base_url=self.base_url, api_key=key, timeout=timeout,
                                     max_retries=max_retries)
        self._accounting = _Accounting()

    @property
    def usage(self) -> Usage:
        """Tokens used by every successful completion so far."""
        return self._accounting.usage

    @property
    def calls(self) -> int:
        return self._accounting.calls

    def complete(self, messages: list[dict[str, Any]]) -> Completion:
        """One chat completion; raises ModelError for every failure that survives retries."""
        msgs = _check_messages(messages)
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
        return ModelError(f"model {self.model}: {message}", kind=kind, model=self.model,
                          status=status, cause=type(exc).__name__)

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAIChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecordedClient:
    """Replays stored responses in order from a JSON file.

    File shape::

        {"model": "gpt-x", "note": "why these were recorded",
         "responses": [{"content": "...", "usage": {"prompt_tokens": 1, ...}},
                       {"error": {"kind": "rate_limited", "message": "..."}}]}

    An ``error`` entry replays a model failure as ModelError. Asking for more responses than
    the file holds raises ModelError(kind="exhausted"). `requests` keeps every message list.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            raise DefinitionError(f"recorded responses file {self.path} does not exist") from None
        except ValueError as exc:
            raise DefinitionError(f"recorded responses file {self.path} is not JSON: {exc}") from exc
        if not isinstance(data, dict) or not isinstance(data.get("responses"), list):
            raise DefinitionError(f"{self.path}: expected an object with a 'responses' list, "
                                  'e.g. {"model": "m", "responses": [{"content": "..."}]}')
        for i, r in enumerate(data["responses"]):
            ok = isinstance(r, dict) and (isinstance(r.get("content"), str)
                                          or isinstance(r.get("error"), dict))
            if not ok or ("usage" in r and not isinstance(r["usage"], dict)):
                raise DefinitionError(f"{self.path}: responses[{i}] needs a string 'content' "
                                      "(and an optional 'usage' object) or an 'error' object")
        self.model = str(data.get("model") or "recorded")
        self.note = str(data.get("note") or "")
        self._responses: list[dict[str, Any]] = data["responses"]
        self._next = 0
        self._lock = threading.Lock()
        self._accounting = _Accounting()
        self.requests: list[list[dict[str, Any]]] = []

    @property
    def usage(self) -> Usage:
        return self._accounting.usage

    @property
    def calls(self) -> int:
        return self._accounting.calls

    @property
    def remaining(self) -> int:
        return len(self._responses) - self._next

    def complete(self, messages: list[dict[str, Any]]) -> Completion:
        msgs = _check_messages(messages)
        with self._lock:
            index = self._next
            if index >= len(self._responses):
                raise ModelError(
                    f"recorded client {self.path}: all {len(self._responses)} stored responses "
                    f"were used and response {index + 1} was requested; add responses to the "
                    "file or lower the number of model calls (e.g. max_rewrites)",
                    kind="exhausted", model=self.model, path=str(self.path))
            self._next += 1
            self.requests.append(msgs)
        entry = self._responses[index]
        if "error" in entry:
            err = entry["error"]
            raise ModelError(f"recorded model error #{index}: {err.get('message', 'error')}",
                             kind=str(err.get("kind", "server_error")), model=self.model,
                             status=err.get("status"))
        usage = parse_usage(entry.get("usage"))
        self._accounting.add(usage)
        return Completion(entry["content"], usage, self.model, dict(entry))


def client_from_spec(spec: str, **options: Any) -> ModelClient:
    """Build a client from ``openai:MODEL`` or ``recorded:FILE``.

    `options` go to OpenAIChatClient (base_url, api_key, timeout, max_retries, ...).
    Example: ``client_from_spec("recorded:tests/data/repair.json")``
    """
    kind, sep, rest = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    if sep and rest and kind == "openai":
        return OpenAIChatClient(rest, **options)
    if sep and rest and kind == "recorded":
        if options:
            raise DefinitionError(f"recorded clients take no options (got {', '.join(options)})")
        return RecordedClient(rest)
    raise DefinitionError(
        f"model spec {spec!r} is not understood; use 'openai:MODEL' (an OpenAI-compatible "
        "endpoint, see FROSTLINE_MODEL_BASE_URL) or 'recorded:FILE' (stored responses)")
