"""The bubblewrap command line: what is shared with the sandbox, and what never is."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import pytest

from frostline.runtime.sandbox import (
    PACKAGE_ROOT,
    ReducedIsolationWarning,
    SandboxProfile,
    SandboxUnavailable,
    minimal_environment,
    prepare_launch,
    python_argv,
    read_only_binds,
    sandbox_argv,
    warn_reduced_isolation,
)
from frostline.runtime.sandbox_process import run_sandboxed

REPO = Path(__file__).resolve().parents[2]


def _argv(profile: SandboxProfile | None = None) -> list[str]:
    profile = profile or SandboxProfile()
    return sandbox_argv(python_argv(profile, ["-c", "pass"]), profile, seccomp_fd=9)


def _options(argv: list[str], flag: str, arity: int) -> list[tuple[str, ...]]:
    return [tuple(argv[i + 1:i + 1 + arity]) for i, a in enumerate(argv[:argv.index("--")])
            if a == flag]


def test_every_namespace_and_hardening_flag_is_present():
    argv = _argv()
    head = argv[:argv.index("--")]
    for flag in ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                 "--unshare-uts", "--unshare-cgroup-try", "--disable-userns", "--die-with-parent",
                 "--new-session", "--clearenv"):
        assert flag in head, flag
    assert _options(argv, "--cap-drop", 1) == [("ALL",)]
    assert _options(argv, "--uid", 1) == [("65534",)] and _options(argv, "--gid", 1) == [("65534",)]
    assert _options(argv, "--seccomp", 1) == [("9",)]
    assert ("/",) in _options(argv, "--remount-ro", 1)
    # writable: /tmp only; the other tmpfs mounts hide site-packages and are remounted ro
    tmpfs = [t for (t,) in _options(argv, "--tmpfs", 1)]
    assert "/tmp" in tmpfs
    remounted = {r for (r,) in _options(argv, "--remount-ro", 1)}
    assert set(tmpfs) - {"/tmp"} <= remounted and "/tmp" not in remounted


def test_inner_command_follows_the_separator():
    profile = SandboxProfile()
    argv = _argv(profile)
    inner = argv[argv.index("--") + 1:]
    assert inner[0] == profile.python
    assert inner[1:4] == ["-S", "-P", "-B"]
    assert inner[4] == "-c" and "setrlimit" in inner[5]  # the limit stage
    assert inner[-2:] == ["-c", "pass"]


def test_binds_are_read_only_and_exclude_home_checkout_and_etc():
    argv = _argv()
    assert "--bind" not in argv and "--dev-bind" not in argv
    sources = [src for src, _ in _options(argv, "--ro-bind", 2)]
    home = str(Path.home())
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}
    for src in sources:
        assert src != home and src != "/" and src != "/etc" and src != "/root"
        assert not (src.startswith("/etc/") and src != "/etc/ld.so.cache"), src
        # The checkout is never bound, except the package directory itself and a venv the
        # interpreter runs from inside it.
        if src.startswith(str(REPO)) and not any(src == p or src.startswith(p + "/")
                                                 for p in prefixes):
            assert src == str(REPO / "frostline"), src
        if src.startswith(home + "/"):
            assert any(src == p or src.startswith(p + "/") for p in prefixes), src


def test_package_is_bound_at_the_fixed_root():
    binds = dict((dest, src) for src, dest in read_only_binds(SandboxProfile().python))
    assert binds[f"{PACKAGE_ROOT}/frostline"] == str(REPO / "frostline")
    assert binds["/usr"] == "/usr"


def test_environment_is_minimal_and_never_copied_from_the_host(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    monkeypatch.setenv("PATH", "/host/evil/bin")
    argv = _argv()
    assert "sk-host-secret" not in " ".join(argv)
    env = dict(_options(argv, "--setenv", 2))
    assert env == minimal_environment(SandboxProfile())
    assert env["HOME"] == "/tmp" and env["PYTHONPATH"] == PACKAGE_ROOT
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin"


def test_extra_env_is_added_explicitly():
    profile = SandboxProfile(extra_env=(("FROSTLINE_RUN", "r1"),))
    assert dict(_options(_argv(profile), "--setenv", 2))["FROSTLINE_RUN"] == "r1"


@pytest.mark.parametrize(
    "kwargs",
    [{"uid": 0}, {"wall_seconds": 0}, {"output_bytes": 0}, {"tmp_bytes": -1},
     {"extra_env": (("A=B", "x"),)}],
)
def test_profile_rejects_unsafe_or_meaningless_values(kwargs):
    with pytest.raises(ValueError):
        SandboxProfile(**kwargs)


def test_profile_is_frozen_and_hashable():
    profile = SandboxProfile()
    with pytest.raises(AttributeError):
        profile.uid = 1  # type: ignore[misc]
    assert hash(profile) == hash(SandboxProfile())


def test_missing_bubblewrap_raises_with_the_fix():
    profile = SandboxProfile(bwrap="frostline-no-such-bwrap")
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap") as info:
        run_sandboxed(["-c", "pass"], profile)
    assert info.value.to_dict()["code"] == "sandbox_unavailable"


def test_bubblewrap_setup_failure_is_reported_not_run(tmp_path):
    missing = tmp_path / "does-not-exist"
    profile = SandboxProfile(extra_ro_binds=(str(missing),))
    with pytest.raises(SandboxUnavailable, match="bubblewrap could not set up the sandbox"):
        run_sandboxed(["-c", "open('/tmp/ran', 'w')"], profile)


def test_launch_closes_its_seccomp_fd():
    with prepare_launch(["-c", "pass"], SandboxProfile()) as launch:
        (fd,) = launch.pass_fds
        os.fstat(fd)
    with pytest.raises(OSError):
        os.fstat(fd)


def test_reduced_isolation_warns_loudly(caplog):
    caplog.set_level(logging.WARNING)
    with pytest.warns(ReducedIsolationWarning, match="WITHOUT the bubblewrap sandbox"):
        warn_reduced_isolation("SubprocessRunner")
    assert "SubprocessRunner runs model-written scripts WITHOUT" in caplog.text


def test_data_files_mapped_by_the_host_are_never_bound(tmp_path):
    # A SQLite store in WAL mode maps its -shm file into the host process; /proc/self/maps
    # lists it beside the shared libraries, and it must not reach the sandbox.
    from frostline.runtime import sandbox
    from frostline.store import open_store

    with open_store(f"sqlite:///{tmp_path / 'store.db'}") as store:
        store.create_run("r", {})
        with open("/proc/self/maps", encoding="utf-8") as maps:
            assert str(tmp_path) in maps.read()  # the premise: the store is mapped
        assert not [p for p in sandbox._mapped_libraries() if str(tmp_path) in p]
        sandbox.read_only_binds.cache_clear()
        binds = sandbox.read_only_binds(sys.executable)
        assert not [b for b in binds if str(tmp_path) in b[0]]
        assert any(".so" in b[0] or b[0] == "/usr" for b in binds)
