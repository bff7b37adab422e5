"""The HTTP API's repair route accepts the name of a model endpoint configured on the server
([models.NAME]) and uses that endpoint; it still refuses anything that names a file."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from frostline.config import parse_config
from frostline.providers.local import LocalProviders
from frostline.providers.registry import open_registry
from frostline.runtime.execute import execute
from frostline.service.operations import Services
from frostline.service.schemas import RepairRequest
from frostline.testing import InProcessRunner
from tests.cli.test_repair import FAILING, FIXED, RELOCATED
from tests.fakes.openai_server import FakeOpenAIServer, chat


@pytest.mark.parametrize("spec", ["fast", "model:fast", "openai:gpt-4o-mini"])
def test_configured_names_pass_validation(spec):
    assert RepairRequest(model=spec).model == spec


@pytest.mark.parametrize("spec", ["recorded:x.json", "replay:/etc/passwd", "model:../x",
                                  "Fast", "./fast", "fast/../../x", "model:"])
def test_anything_else_is_refused(spec):
    with pytest.raises(ValidationError, match="configured on the server"):
        RepairRequest(model=spec)


def test_the_service_repairs_with_a_configured_endpoint(sqlite_store, monkeypatch):
    assert execute(sqlite_store, "e5", FAILING, args={"brief": "fox"},
                   providers=LocalProviders(), runner=InProcessRunner()).status == "failed"
    monkeypatch.setenv("FAST_KEY", "sk-server-side")
    with FakeOpenAIServer(api_key="sk-server-side") as server:
        server.script(chat(RELOCATED), chat(FIXED))
        config = parse_config({"models": {"fast": {"base_url": server.url,
                                                   "api_key_env": "FAST_KEY",
                                                   "model": "fast-model"}}})
        with open_registry(config) as registry:
            services = Services.default(runner_name="process", capabilities=registry)
            result = services.repair(sqlite_store, "e5", "fast", 3, False)
        bodies = [r.body for r in server.requests]
    assert result["accepted"] is not None
    assert [b["model"] for b in bodies] == ["fast-model", "fast-model"]
