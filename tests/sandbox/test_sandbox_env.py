"""Which folders of the host's sys.path a suite's sandbox sees (issue 27), and where they are
mounted: pure argv checks, no bubblewrap needed."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from frostline.runtime.sandbox import SandboxProfile, python_argv, sandbox_argv
from frostline.runtime.sandbox_env import environment_paths, site_dirs


def _folder(path: Path, *names: str) -> str:
    path.mkdir(parents=True)
    for name in names:
        (path / name).mkdir()
    return str(path)


def test_issue27_only_folders_holding_installed_distributions_are_the_environment(
        tmp_path: Path) -> None:
    venv = _folder(tmp_path / "venv/site-packages", "click-8.1.dist-info", "click")
    target = _folder(tmp_path / "target", "old_style.egg-info")
    checkout = _folder(tmp_path / "checkout", "frostline.egg-info", "frostline", "tests")
    wheel_only = _folder(tmp_path / "own", "frostline-0.1.0.dist-info", "frostline")
    plain = _folder(tmp_path / "plain", "somepackage")
    path = ["", "relative/dir", checkout, venv, plain, target, venv, wheel_only,
            str(tmp_path / "missing")]
    assert environment_paths(path) == (venv, target)


def test_issue27_the_environment_is_mounted_read_only_after_the_private_tmp() -> None:
    shown = environment_paths()
    assert shown
    profile = dataclasses.replace(SandboxProfile(), site_packages=True)
    argv = sandbox_argv(["true"], profile, seccomp_fd=9)
    tmp = argv.index("/tmp", argv.index("--tmpfs"))
    for folder in shown:
        at = max(i for i, arg in enumerate(argv) if arg == folder)
        assert argv[at - 2:at + 1] == ["--ro-bind", folder, folder] and at > tmp
    # nothing of the environment is hidden; every other site-packages folder is
    hidden = {argv[i + 1] for i, arg in enumerate(argv) if arg == "--tmpfs"} - {"/tmp"}
    assert hidden == set(site_dirs()) - set(shown)
    assert not hidden & set(shown)
    stage = python_argv(profile, ["-c", "pass"])
    assert stage[1] == "-S" and all(repr(folder) in stage[5] for folder in shown)
    assert "addsitedir" in stage[5]
    assert "addsitedir" not in python_argv(SandboxProfile(), ["-c", "pass"])[5]


def test_issue27_binds_under_tmp_come_after_the_private_tmp(tmp_path: Path) -> None:
    tree = str(tmp_path / "tree")  # pytest's tmp_path lives under /tmp
    assert tree.startswith("/tmp/")
    argv = sandbox_argv(["true"], SandboxProfile(extra_ro_binds=(tree,)), seccomp_fd=9)
    tmp = argv.index("/tmp", argv.index("--tmpfs"))
    assert argv.index(tree) > tmp
