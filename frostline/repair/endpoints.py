"""Model endpoints named in the configuration file (``[models.NAME]``), resolved to clients.

A configured name is what a server may safely accept from a client: it points at an endpoint
and a key the operator chose, never at a file or an arbitrary URL. On the command line the
other spellings keep working as before: ``openai:MODEL`` (the endpoint of
$FROSTLINE_MODEL_BASE_URL / $FROSTLINE_MODEL_API_KEY) and ``replay:FILE`` under a ReplayPolicy.

    spec ``NAME`` or ``model:NAME``  →  the [models.NAME] endpoint, key from $api_key_env
    anything else                    →  `client_from_spec` (environment defaults)
"""

from __future__ import annotations

import os
from typing import Any

from frostline.config import Config, ModelConfig
from frostline.errors import ConfigError
from frostline.repair.clients import OpenAIChatClient, client_from_spec
from frostline.repair.completion import ChatClient
from frostline.repair.replay import ReplayPolicy

PREFIX = "model:"


def configured_model(config: Config | None, spec: str) -> ModelConfig | None:
    """The [models.NAME] table `spec` names (``NAME`` or ``model:NAME``), or None."""
    if config is None or not isinstance(spec, str):
        return None
    name = spec[len(PREFIX):] if spec.startswith(PREFIX) else spec
    return config.models.get(name)


def model_client(spec: str, config: Config | None = None, *, replay: ReplayPolicy | None = None,
                 **options: Any) -> ChatClient:
    """A client for `spec`: a configured endpoint when the configuration names it, else the
    spellings `client_from_spec` understands.

    Example: ``model_client("fast", load_config())``
    """
    endpoint = configured_model(config, spec)
    if endpoint is None:
        if spec.startswith(PREFIX):
            known = ", ".join(sorted(config.models)) if config is not None else ""
            raise ConfigError(f"model {spec!r} is not configured; declare [models."
                              f"{spec[len(PREFIX):]}] in the configuration file"
                              + (f" (configured: {known})" if known else ""),
                              file=config.label if config else "", key="models",
                              expected="a [models.NAME] table")
        return client_from_spec(spec, replay=replay, **options)
    assert config is not None
    key = os.environ.get(endpoint.api_key_env)
    if not key:
        raise ConfigError(f"{config.label}: models.{endpoint.name}.api_key_env names "
                          f"${endpoint.api_key_env}, which is not set",
                          file=config.label, key=f"models.{endpoint.name}.api_key_env",
                          expected=f"the environment variable {endpoint.api_key_env} to hold "
                          "the API key")
    settings: dict[str, Any] = {"timeout": endpoint.timeout_s,
                                "max_retries": endpoint.max_retries, **options}
    return OpenAIChatClient(endpoint.model, base_url=endpoint.base_url, api_key=key, **settings)
