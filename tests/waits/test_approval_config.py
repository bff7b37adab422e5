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


def test_issue26_approvers_and_self_approval_are_read(tmp_path: Path) -> None:
    from frostline.capabilities.approvals import ApprovalRule

    path = _config(tmp_path, '[approvals]\napprovers = ["role:approver", "lead"]\n'
                   '[capabilities."echo"]\napproval = "required"\napprovers = ["ops"]\n'
                   '[capabilities."human.approve"]\nself_approval = true\n')
    policy = read_config(path).approvals
    assert policy.default == ApprovalRule(("role:approver", "lead"), False)
    assert policy.rule("echo") == ApprovalRule(("ops",), False)
    assert policy.rule("human.approve") == ApprovalRule(("role:approver", "lead"), True)
    assert policy.rule("image.generate") is policy.default
    assert read_config(_config(tmp_path, "")).approvals.default == ApprovalRule(
        ("role:approver",), False)  # the defaults: the approver role, no self-approval


@pytest.mark.parametrize(("body", "key"), [
    ('[approvals]\napprovers = "ops"\n', "approvals.approvers"),
    ('[approvals]\napprovers = ["role:Ops"]\n', "approvals.approvers"),
    ('[approvals]\napprovers = ["a b"]\n', "approvals.approvers"),
    ('[approvals]\nself_approval = "yes"\n', "approvals.self_approval"),
    ('[approvals]\nwho = ["ops"]\n', "approvals.who"),
    ('approvals = 1\n', "approvals"),
    ('[capabilities."echo"]\napprovers = []\n', 'capabilities."echo".approvers'),
    ('[capabilities."echo"]\napproval = "none"\napprovers = ["ops"]\n',
     'capabilities."echo".approval'),
])
def test_issue26_a_bad_approvers_table_names_the_key(tmp_path: Path, body: str,
                                                      key: str) -> None:
    with pytest.raises(ConfigError) as err:
        read_config(_config(tmp_path, body))
    assert err.value.fields["key"] == key, err.value.message
