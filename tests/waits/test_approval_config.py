"""`approval = "required"` in the configuration file (issue 16)."""

from __future__ import annotations

from pathlib import Path

import pytest

from frostline.config import read_config
from frostline.errors import ConfigError
from frostline.providers.registry import open_registry


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "frostline.toml"
    path.write_text(body)
    return path


def test_approval_required_marks_the_capability(tmp_path: Path) -> None:
    path = _config(tmp_path, '[capabilities."echo"]\napproval = "required"\n')
    with open_registry(read_config(path)) as registry:
        assert registry.catalog["echo"].approval_required
        assert not registry.catalog["image.generate"].approval_required
        assert registry.catalog["echo"].to_dict()["approval_required"] is True
        assert "approval_required" not in registry.catalog["image.generate"].to_dict()


def test_the_waits_are_in_the_catalog_without_the_built_in_entries(tmp_path: Path) -> None:
    path = _config(tmp_path, "builtin = false\n")
    with open_registry(read_config(path)) as registry:
        assert set(registry.catalog.names()) == {"human.approve", "event.wait", "timer.sleep"}


def test_a_bad_approval_value_names_the_key(tmp_path: Path) -> None:
    path = _config(tmp_path, '[capabilities."echo"]\napproval = "sometimes"\n')
    with pytest.raises(ConfigError, match=r'capabilities\."echo"\.approval'):
        read_config(path)
