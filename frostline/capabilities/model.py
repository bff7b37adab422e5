"""The model-client protocol: the one learned component frostline asks for a completion.

Beside the Provider protocol the broker calls (frostline.capabilities.provider), every model
frostline consults is a `ModelClient`: one `complete(request)` that returns a reply. What a
request and a reply are depends on the caller, so the protocol is generic in both:

    ModelClient[SlotRequest, SlotReply | Mapping[str, Any]]   # a graph state's slot
    ModelClient[list[Message], Reply]                         # repair, authoring, coding

(frostline.graph.slot.SlotModel and frostline.repair.completion.ChatClient name the two.)
The request is positional-only, so a client may call its parameter what it likes.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

RequestT = TypeVar("RequestT", contravariant=True)
ReplyT = TypeVar("ReplyT", covariant=True)


class ModelClient(Protocol[RequestT, ReplyT]):
    """A model: `complete(request)` returns its reply; it raises frostline.errors.ModelError
    when the model cannot answer."""

    def complete(self, request: RequestT, /) -> ReplyT: ...
