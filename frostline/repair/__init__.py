"""frostline.repair: the repair loop, prompt assembly, and model clients."""

from frostline.repair.clients import (
    Completion,
    ModelClient,
    ModelError,
    OpenAIChatClient,
    RecordedClient,
    Usage,
    client_from_spec,
)
from frostline.repair.extract import extract_code

__all__ = [
    "Completion",
    "ModelClient",
    "ModelError",
    "OpenAIChatClient",
    "RecordedClient",
    "Usage",
    "client_from_spec",
    "extract_code",
]
