"""frostline.repair: the repair loop, prompt assembly, and model clients."""

from frostline.capabilities.model import ModelClient
from frostline.repair.clients import OpenAIChatClient, client_from_spec
from frostline.repair.completion import ChatClient, Completion, ModelError, Usage
from frostline.repair.extract import extract_code
from frostline.repair.replay import ReplayClient, ReplayPolicy

__all__ = [
    "ChatClient",
    "Completion",
    "ModelClient",
    "ModelError",
    "OpenAIChatClient",
    "ReplayClient",
    "ReplayPolicy",
    "Usage",
    "client_from_spec",
    "extract_code",
]
