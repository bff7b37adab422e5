"""frostline.repair: the repair loop, prompt assembly, and model clients."""

from frostline.repair.clients import OpenAIChatClient, client_from_spec
from frostline.repair.completion import Completion, ModelClient, ModelError, Usage
from frostline.repair.extract import extract_code
from frostline.repair.replay import ReplayClient, ReplayPolicy

__all__ = [
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
