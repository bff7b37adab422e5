"""What every chat model client shares: the completion it returns, token usage, the one error
type, the checks on the messages it is given, and `ChatClient` (the model-client protocol of
frostline.capabilities.model over chat messages)."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from frostline.capabilities.model import ModelClient
from frostline.errors import (
    DefinitionError,
)
from frostline.errors import (
    ModelError as ModelError,
)


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


class Reply(Protocol):
    """What the repair and authoring loops read of a reply (Completion has these fields)."""

    @property
    def text(self) -> str: ...

    @property
    def usage(self) -> Any: ...  # a Usage with to_dict(), a mapping of counts, or None


# A chat model, as the repair and authoring loops and the coding workflow use it: messages
# ({"role", "content"}) in, a reply with text and usage out (frostline.capabilities.model).
ChatClient = ModelClient[list[dict[str, Any]], Reply]


def check_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
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


class Accounting:
    """Cumulative token usage and call count, safe to update from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.usage = Usage()
        self.calls = 0

    def add(self, usage: Usage) -> None:
        with self._lock:
            self.usage = self.usage + usage
            self.calls += 1
