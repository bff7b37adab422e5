"""Verification of the sandbox's isolation profile before any script runs in it.

Building a bubblewrap command proves nothing about the machine: a kernel may refuse user
namespaces, a container runtime may mask /proc, a bubblewrap build may ignore an option. So
before the first script of a process runs, `verify_profile` starts a small probe *inside* the
sandbox and checks, from the inside, every property the runner promises: a user namespace with
a non-root uid and no capabilities, a private pid namespace, no network interface but the
loopback and no route, a read-only root with a writable /tmp, seccomp in filter mode (socket
and fork denied), an environment that is exactly the minimal one, and the rlimits. Every
failed property is reported at once in one `SandboxUnavailable`; nothing falls back.

The result is cached per process and profile; pass ``refresh=True`` to probe again.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from frostline.runtime.sandbox import SandboxProfile, SandboxUnavailable, minimal_environment
from frostline.runtime.sandbox_process import run_sandboxed

__all__ = ["PROBE_SOURCE", "Check", "ProfileReport", "verify_profile"]

# Runs inside the sandbox; prints one JSON object. Plain stdlib, no frostline import, so a
# broken package cannot mask an isolation failure.
PROBE_SOURCE = r'''
import errno, json, os, resource, socket

def attempt(fn):
    try:
        fn()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))

def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out

def interfaces():
    with open("/proc/net/dev") as f:
        return sorted(line.split(":")[0].strip() for line in f.readlines()[2:])

def routes(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return lines[1:] if path.endswith("/route") else [l for l in lines if not l.endswith(" lo")]

def write(path):
    def fn():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.write(fd, b"probe")
        os.close(fd)
    return fn

def read_back(path):
    with open(path, "rb") as f:
        return f.read().decode()

st = status()
report = {
    "uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(),
    "uid_map": open("/proc/self/uid_map").read().split(),
    "cap_eff": st.get("CapEff"), "cap_bnd": st.get("CapBnd"),
    "no_new_privs": st.get("NoNewPrivs"), "seccomp": st.get("Seccomp"),
    "pid": os.getpid(),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "interfaces": interfaces(),
    "routes": routes("/proc/net/route") + routes("/proc/net/ipv6_route"),
    "write_root": attempt(write("/frostline-probe")),
    "write_usr": attempt(write("/usr/frostline-probe")),
    "write_dev": attempt(write("/dev/frostline-probe")),
    "write_package": attempt(write("/opt/frostline/frostline/probe")),
    "write_tmp": attempt(write("/tmp/frostline-probe")),
    "socket": attempt(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()),
    "socket_unix": attempt(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).close()),
    "fork": attempt(lambda: os.fork() == 0 and os._exit(0)),
    "env": dict(os.environ),
    "rlimits": {name: list(resource.getrlimit(getattr(resource, name))) for name in
                ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_FSIZE")},
}
report["tmp_content"] = read_back("/tmp/frostline-probe") if report["write_tmp"] == "ok" else None
print(json.dumps(report))
'''

# Variables the interpreter or bubblewrap add by themselves (no host value can reach them).
_SELF_SET = {"PWD", "LC_CTYPE"}


@dataclass(frozen=True)
class Check:
    """One verified property: its name, whether it holds, and what was observed."""

    name: str
    ok: bool
    observed: str


@dataclass(frozen=True)
class ProfileReport:
    """The outcome of `verify_profile`; `ok` is True when every check holds."""

    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [c.__dict__ for c in self.checks]}


def evaluate(observed: dict[str, Any], profile: SandboxProfile) -> ProfileReport:
    """Judge a probe's observations against `profile` (pure; no sandbox needed)."""
    checks: list[Check] = []

    def check(name: str, ok: bool, value: object) -> None:
        checks.append(Check(name, bool(ok), json.dumps(value, sort_keys=True, default=str)))

    uid_map = observed.get("uid_map", [])
    check("user_namespace", len(uid_map) == 3 and uid_map[2] == "1"
          and uid_map[0] == str(profile.uid), uid_map)
    check("non_root_uid", observed.get("uid") == profile.uid and observed.get("euid") == profile.uid
          and observed.get("uid") != 0, [observed.get("uid"), observed.get("euid")])
    check("no_capabilities", observed.get("cap_eff") == "0000000000000000"
          and observed.get("cap_bnd") == "0000000000000000",
          [observed.get("cap_eff"), observed.get("cap_bnd")])
    check("no_new_privileges", observed.get("no_new_privs") == "1", observed.get("no_new_privs"))
    check("pid_namespace", observed.get("pid", 10**9) <= 8 and len(observed.get("pids", [])) <= 4,
          observed.get("pids"))
    check("network_loopback_only", observed.get("interfaces") == ["lo"], observed.get("interfaces"))
    check("network_no_route", observed.get("routes") == [], observed.get("routes"))
    for key in ("write_root", "write_usr", "write_dev", "write_package"):
        check(f"read_only_{key.removeprefix('write_')}", observed.get(key) in ("EROFS", "EACCES",
              "EPERM", "ENOENT"), observed.get(key))
    check("tmp_writable", observed.get("write_tmp") == "ok"
          and observed.get("tmp_content") == "probe", observed.get("write_tmp"))
    check("seccomp_filter", observed.get("seccomp") == "2", observed.get("seccomp"))
    check("socket_denied", observed.get("socket") == "EPERM"
          and observed.get("socket_unix") == "EPERM", [observed.get("socket"),
                                                       observed.get("socket_unix")])
    if profile.seccomp.deny_process_creation:
        check("fork_denied", observed.get("fork") == "EPERM", observed.get("fork"))
    env = dict(observed.get("env", {}))
    expected = minimal_environment(profile)
    extra = {k: v for k, v in env.items() if k not in expected and k not in _SELF_SET}
    wrong = {k: env.get(k) for k, v in expected.items() if env.get(k) != v}
    check("minimal_environment", not extra and not wrong,
          {"unexpected": sorted(extra), "differing": sorted(wrong)})
    limits = profile.limits
    want = {
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_AS": limits.address_space_bytes,
        "RLIMIT_NPROC": limits.processes,
        "RLIMIT_NOFILE": limits.open_files,
        "RLIMIT_FSIZE": limits.file_size_bytes,
    }
    got = observed.get("rlimits", {})
    # A soft limit above the profile would mean the limit stage did not run.
    check("rlimits", all(got.get(k, [None])[0] is not None and 0 <= got[k][0] <= v
                         for k, v in want.items()), got)
    return ProfileReport(tuple(checks))


_cache: dict[SandboxProfile, ProfileReport] = {}
_lock = threading.Lock()


def verify_profile(profile: SandboxProfile | None = None, *, refresh: bool = False) -> ProfileReport:
    """Prove, from inside a sandbox, that `profile`'s isolation holds on this machine.

    The first call per profile starts the probe; later calls return the cached report.

    Raises:
        SandboxUnavailable: bubblewrap is missing or failed, or any property does not hold
            (every failing property is listed, with what was observed).
    """
    profile = profile or SandboxProfile()
    with _lock:
        if not refresh and profile in _cache:
            return _cache[profile]
        result = run_sandboxed(["-c", PROBE_SOURCE], profile)
        if not result.ok:
            raise SandboxUnavailable(
                "the sandbox probe did not complete "
                f"(exit status {result.returncode}, timed out: {result.timed_out}); "
                f"its stderr: {result.stderr.decode('utf-8', 'replace')[-1500:]!r}",
                returncode=result.returncode,
            )
        try:
            observed = json.loads(result.stdout)
        except ValueError as exc:
            raise SandboxUnavailable(
                f"the sandbox probe printed no report: {result.stdout[:500]!r}"
            ) from exc
        report = evaluate(observed, profile)
        if not report.ok:
            lines = "; ".join(f"{c.name} (observed {c.observed})" for c in report.failures())
            raise SandboxUnavailable(
                "the sandbox does not provide the promised isolation on this machine: "
                f"{lines}. Nothing was executed. Check the bubblewrap version (>= 0.8) and "
                "that the kernel allows unprivileged user namespaces and seccomp.",
                failures=[c.__dict__ for c in report.failures()],
            )
        _cache[profile] = report
        return report
