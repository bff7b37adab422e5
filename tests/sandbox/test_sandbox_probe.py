"""Profile verification: the probe runs inside real bubblewrap and every property is judged."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from frostline.runtime import sandbox, sandbox_probe
from frostline.runtime.sandbox import SandboxProfile, SandboxUnavailable
from frostline.runtime.sandbox_probe import PROBE_SOURCE, evaluate, verify_profile
from frostline.runtime.sandbox_process import run_sandboxed

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def observed(profile) -> dict:
    result = run_sandboxed(["-c", PROBE_SOURCE], profile)
    assert result.ok, result.stderr
    return json.loads(result.stdout)


def test_verify_profile_passes_and_lists_every_property(profile):
    report = verify_profile(profile)
    assert report.ok
    names = {c.name for c in report.checks}
    assert names >= {
        "user_namespace", "non_root_uid", "no_capabilities", "no_new_privileges", "pid_namespace",
        "network_loopback_only", "network_no_route", "read_only_root", "read_only_usr",
        "read_only_dev", "read_only_package", "tmp_writable", "seccomp_filter", "socket_denied",
        "fork_denied", "minimal_environment", "rlimits",
    }


def test_verify_profile_is_cached_per_profile(profile, monkeypatch):
    verify_profile(profile)
    calls = []
    monkeypatch.setattr(sandbox_probe, "run_sandboxed",
                        lambda *a, **k: calls.append(a) or run_sandboxed(*a, **k))
    assert verify_profile(profile).ok
    assert calls == []
    assert verify_profile(profile, refresh=True).ok
    assert len(calls) == 1


def test_real_observations_satisfy_the_profile(profile, observed):
    assert evaluate(observed, profile).ok


MUTATIONS = [
    ("user_namespace", {"uid_map": ["0", "0", "4294967295"]}),
    ("non_root_uid", {"uid": 0, "euid": 0}),
    ("no_capabilities", {"cap_eff": "000001ffffffffff"}),
    ("no_new_privileges", {"no_new_privs": "0"}),
    ("pid_namespace", {"pid": 4242, "pids": list(range(1, 200))}),
    ("network_loopback_only", {"interfaces": ["eth0", "lo"]}),
    ("network_no_route", {"routes": ["eth0\t00000000\t0101A8C0"]}),
    ("read_only_root", {"write_root": "ok"}),
    ("read_only_usr", {"write_usr": "ok"}),
    ("read_only_dev", {"write_dev": "ok"}),
    ("read_only_package", {"write_package": "ok"}),
    ("tmp_writable", {"write_tmp": "EROFS", "tmp_content": None}),
    ("seccomp_filter", {"seccomp": "0"}),
    ("socket_denied", {"socket": "ok"}),
    ("fork_denied", {"fork": "ok"}),
    ("minimal_environment", {"env": {"OPENAI_API_KEY": "sk-x"}}),
    ("rlimits", {"rlimits": {"RLIMIT_AS": [-1, -1]}}),
]


@pytest.mark.parametrize(("check", "change"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_each_property_failure_is_detected(profile, observed, check, change):
    mutated = {**observed, **change}
    if check == "minimal_environment":
        mutated["env"] = {**observed["env"], **change["env"]}
    if check == "rlimits":
        mutated["rlimits"] = {**observed["rlimits"], "RLIMIT_AS": [2**62, 2**62]}
    report = evaluate(mutated, profile)
    assert [c.name for c in report.failures()] == [check]


def test_fork_check_follows_the_policy(profile, observed):
    from frostline.runtime.seccomp import SeccompPolicy

    forking = dataclasses.replace(profile, seccomp=SeccompPolicy(deny_process_creation=False))
    report = evaluate({**observed, "fork": "ok"}, forking)
    assert report.ok and "fork_denied" not in {c.name for c in report.checks}


def test_missing_isolation_is_caught_by_the_real_probe(profile, monkeypatch):
    """A bubblewrap that silently ignored --unshare-net and --remount-ro would be refused."""
    real = sandbox.sandbox_argv

    def weakened(inner, prof, *, seccomp_fd):
        argv = real(inner, prof, seccomp_fd=seccomp_fd)
        argv.remove("--unshare-net")
        i = next(i for i, a in enumerate(argv) if a == "--remount-ro" and argv[i + 1] == "/")
        del argv[i:i + 2]
        return argv

    monkeypatch.setattr(sandbox, "sandbox_argv", weakened)
    other = dataclasses.replace(profile, hostname="weakened-probe")
    with pytest.raises(SandboxUnavailable) as info:
        verify_profile(other)
    failed = {f["name"] for f in info.value.fields["failures"]}
    assert failed >= {"read_only_root", "network_loopback_only"}, failed
    assert "Nothing was executed" in str(info.value)
    # A failure is not cached: the next call probes again (and fails again).
    with pytest.raises(SandboxUnavailable):
        verify_profile(other)


def test_missing_bwrap_is_a_clear_error():
    with pytest.raises(SandboxUnavailable, match="bubblewrap"):
        verify_profile(SandboxProfile(bwrap="frostline-no-such-bwrap"))


def test_report_serializes(profile):
    data = verify_profile(profile).to_dict()
    assert data["ok"] is True and all(set(c) == {"name", "ok", "observed"} for c in data["checks"])


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare(1) from util-linux")
def test_user_namespaces_disabled_is_a_clear_error(profile):
    """Disable user namespaces for real — inside a throwaway user namespace whose own
    max_user_namespaces is set to 0 (per-namespace, so the machine is untouched) — and run
    the real verification there."""
    code = (
        "from frostline.runtime.sandbox_probe import verify_profile\n"
        "from frostline.runtime.sandbox import SandboxUnavailable\n"
        "try:\n"
        "    verify_profile()\n"
        "    print('VERIFIED')\n"
        "except SandboxUnavailable as exc:\n"
        "    print('UNAVAILABLE', exc)\n"
    )
    proc = subprocess.run(
        ["unshare", "--user", "--map-root-user", "sh", "-c",
         'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" -c "$1"',
         sys.executable, code],
        capture_output=True, text=True, timeout=60, cwd=str(REPO),
    )
    if proc.returncode != 0 and "unshare" in proc.stderr:
        pytest.skip(f"cannot create a user namespace to run this test in: {proc.stderr}")
    assert proc.stdout.startswith("UNAVAILABLE"), proc.stdout + proc.stderr
    assert "max_user_namespaces" in proc.stdout
