"""The bubblewrap sandbox in which a model-written script executes.

A script is untrusted code. The checker rejects the source-level routes to an effect; this
module removes the rest, so that a rule the checker misses still cannot reach anything: the
script runs in fresh user, pid, network, ipc, uts (and, when available, cgroup) namespaces,
sees read-only binds of only the interpreter, its shared libraries and the frostline package
(and, for a repository's test suite, the Python environment frostline runs in: see
`frostline.runtime.sandbox_env`), a private ``/tmp``, a minimal ``/dev`` and its own
``/proc``, an environment built from scratch (no host variable, hence no provider
credential, ever crosses), a non-root uid, no capabilities, the seccomp filter of
`frostline.runtime.seccomp`, and the rlimits of `frostline.runtime.limits`. The host enforces a wall-clock timeout and output caps and kills
the whole tree: killing bubblewrap's monitor makes the sandbox's pid 1 die
(``--die-with-parent``), and the pid namespace dies with it.

Nothing here falls back to weaker isolation. When bubblewrap is missing or cannot build the
profile, `SandboxUnavailable` says how to fix the machine; the plain-subprocess runner has to
be chosen explicitly and warns (`warn_reduced_isolation`).

Usage::

    profile = SandboxProfile(wall_seconds=10)
    verify_profile(profile)                       # once per process; raises if not isolated
    result = run_sandboxed(["-c", "print(1)"], profile)   # frostline.runtime.sandbox_process

The process side (starting, output caps, the wall clock, killing the tree) lives in
`frostline.runtime.sandbox_process`; this module only decides what the sandbox is.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import shutil
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import frostline
from frostline.errors import (
    SandboxUnavailable as SandboxUnavailable,
)
from frostline.runtime.limits import ResourceLimits, stage_argv
from frostline.runtime.sandbox_env import environment_paths, site_dirs
from frostline.runtime.seccomp import (
    DEFAULT_POLICY,
    SeccompPolicy,
    SeccompUnavailable,
    build_filter,
    filter_fd,
)

__all__ = [
    "PACKAGE_ROOT",
    "SETUP_HINT",
    "ReducedIsolationWarning",
    "SandboxLaunch",
    "SandboxProfile",
    "SandboxUnavailable",
    "minimal_environment",
    "prepare_launch",
    "python_argv",
    "read_only_binds",
    "sandbox_argv",
    "warn_reduced_isolation",
]

log = logging.getLogger(__name__)

# Where the frostline package appears inside the sandbox; PYTHONPATH points at it.
PACKAGE_ROOT = "/opt/frostline"

# How to give a machine what the sandbox needs (part of every SandboxUnavailable message).
SETUP_HINT = (
    "unprivileged user namespaces must be enabled "
    "(sysctl user.max_user_namespaces > 0; on Debian kernels kernel.unprivileged_userns_clone=1; "
    "on Ubuntu 24.04+ kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile "
    "for bwrap); inside a container, run it with user namespaces allowed "
    "(e.g. docker --security-opt seccomp=unconfined or a profile that permits clone/unshare)"
)
_BWRAP_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap); " + SETUP_HINT
)


class ReducedIsolationWarning(UserWarning):
    """A script is about to run without the bubblewrap sandbox."""


def warn_reduced_isolation(runner: str) -> None:
    """Warn loudly that `runner` executes scripts without the sandbox.

    Called by the plain-subprocess runner whenever it is constructed; it must only ever be
    chosen explicitly.
    """
    message = (
        f"{runner} runs model-written scripts WITHOUT the bubblewrap sandbox: the script "
        "shares the host's network, filesystem, user and environment. Use it only for "
        "trusted scripts on a machine without bubblewrap; the default SandboxRunner isolates "
        "scripts (install bubblewrap to use it)."
    )
    log.warning(message)
    warnings.warn(message, ReducedIsolationWarning, stacklevel=3)


@dataclass(frozen=True)
class SandboxProfile:
    """Limits and options of the sandbox. Frozen; derive variants with `dataclasses.replace`.

    Attributes:
        limits: the rlimits applied inside the sandbox before the script runs.
        seccomp: what the seccomp filter denies.
        wall_seconds: the wall-clock limit; the whole tree is killed when it passes.
        output_bytes: the cap on each of stdout and stderr; exceeding it kills the sandbox.
        tmp_bytes: the size of the private tmpfs on /tmp.
        uid: the uid (and gid) the script sees; never 0.
        hostname: the hostname inside the uts namespace.
        python: the interpreter to run inside (defaults to this process's interpreter).
        bwrap: the bubblewrap executable (a name looked up on PATH, or a path).
        extra_ro_binds: additional host paths bound read-only at the same place.
        extra_env: variables added to the minimal environment (explicit; never copied from
            the host's environment).
        site_packages: show the environment frostline runs in (its venv's site-packages, or
            whatever folders of this process's sys.path hold installed distributions),
            read-only, and put it on sys.path (off by default: a script needs only the
            standard library and frostline). See `frostline.runtime.sandbox_env`.
        rw_binds: (host path, sandbox path) pairs bound read-write, e.g. a repository whose
            own test suite runs inside; nothing else of the host is writable.
        chdir: the working directory inside the sandbox.
    """

    limits: ResourceLimits = field(default_factory=ResourceLimits)
    seccomp: SeccompPolicy = DEFAULT_POLICY
    wall_seconds: float = 60.0
    output_bytes: int = 1 << 20
    tmp_bytes: int = 64 << 20
    uid: int = 65534
    hostname: str = "frostline-sandbox"
    python: str = field(default_factory=lambda: os.path.realpath(sys.executable))
    bwrap: str = "bwrap"
    extra_ro_binds: tuple[str, ...] = ()
    extra_env: tuple[tuple[str, str], ...] = ()
    site_packages: bool = False
    rw_binds: tuple[tuple[str, str], ...] = ()
    chdir: str = "/tmp"

    def __post_init__(self) -> None:
        if self.uid <= 0:
            raise ValueError("SandboxProfile.uid must be a non-root uid (> 0)")
        if self.wall_seconds <= 0 or self.output_bytes <= 0 or self.tmp_bytes <= 0:
            raise ValueError("wall_seconds, output_bytes and tmp_bytes must be positive")
        for key, _ in self.extra_env:
            if not key or "=" in key:
                raise ValueError(f"bad environment variable name {key!r}")
        for _, dest in self.rw_binds:
            if not dest.startswith("/") or dest in ("/", "/tmp", "/proc", "/dev"):
                raise ValueError(f"a read-write bind needs its own absolute path, not {dest!r}")


def minimal_environment(profile: SandboxProfile) -> dict[str, str]:
    """The complete environment of a sandboxed process; nothing comes from the host."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "PYTHONPATH": PACKAGE_ROOT,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        # Same string hashing in every attempt, as in the plain child runner.
        "PYTHONHASHSEED": "0",
    }
    env.update(dict(profile.extra_env))
    return env


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


_SHARED_OBJECT = re.compile(r"\.so(\.[0-9][0-9.]*)?$")


def _mapped_libraries() -> list[str]:
    """Shared objects mapped into this interpreter (libpython, extension modules, libc…).

    Only shared objects: the host also maps data files (a SQLite store's `-shm` file, for one),
    and those must never be bound into the sandbox.
    """
    found: set[str] = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(maxsplit=5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    path = parts[5].strip()
                    if (not path.endswith(" (deleted)") and _SHARED_OBJECT.search(path)
                            and os.path.isfile(path)):
                        found.add(path)
    except OSError:
        pass
    return sorted(found)


@functools.lru_cache(maxsize=8)
def read_only_binds(python: str, extra: tuple[str, ...] = ()) -> tuple[tuple[str, str], ...]:
    """The (host path, sandbox path) pairs bound read-only: the interpreter's prefixes,
    the shared libraries it maps that live elsewhere, and the frostline package.

    /usr is bound whole; the Python prefixes are bound whole (stdlib, lib-dynload,
    site-packages); nothing else of the host's tree, in particular no home directory, no
    checkout and no run store.
    """
    binds: list[tuple[str, str]] = [("/usr", "/usr")]
    roots = ["/usr"]
    prefixes = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    python_real = os.path.realpath(python)
    for prefix in sorted(prefixes):
        if os.path.isdir(prefix) and not _under(prefix, roots) and prefix != "/":
            binds.append((prefix, prefix))
            roots.append(prefix)
    if not _under(python_real, roots):
        binds.append((python_real, python_real))
        roots.append(python_real)
    for lib in _mapped_libraries():
        if not _under(lib, roots):
            binds.append((lib, lib))
            roots.append(lib)
    # ld.so.cache only speeds up library lookup; the rest of /etc stays out.
    if os.path.isfile("/etc/ld.so.cache"):
        binds.append(("/etc/ld.so.cache", "/etc/ld.so.cache"))
    package_dir = str(Path(frostline.__file__).resolve().parent)
    binds.append((package_dir, f"{PACKAGE_ROOT}/frostline"))
    for path in extra:
        real = os.path.realpath(path)
        binds.append((real, real))
    return tuple(binds)


def _root_links() -> list[str]:
    """Mirror the host's /bin, /lib, /lib64, /sbin: a symlink stays a symlink, a directory
    is bound read-only."""
    argv: list[str] = []
    for name in ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"):
        if os.path.islink(name):
            argv += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            argv += ["--ro-bind", name, name]
    return argv


def _read_only_mounts(binds: Iterable[tuple[str, str]], hidden: Iterable[str], *,
                      under_tmp: bool) -> list[str]:
    """The read-only binds and the hiding tmpfs mounts whose place is (or is not) under /tmp."""
    argv: list[str] = []
    for src, dest in binds:
        if _under(dest, ["/tmp"]) == under_tmp:
            argv += ["--ro-bind", src, dest]
    for path in hidden:
        if _under(path, ["/tmp"]) == under_tmp:
            argv += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
    return argv


def sandbox_argv(
    inner_argv: Sequence[str], profile: SandboxProfile, *, seccomp_fd: int
) -> list[str]:
    """The bubblewrap command that runs `inner_argv` inside the sandbox.

    Args:
        inner_argv: the command to run inside, e.g. ``[python, "-c", "..."]``.
        profile: the isolation profile.
        seccomp_fd: an inheritable fd holding the compiled filter (see `prepare_launch`).
    """
    bwrap = shutil.which(profile.bwrap) or profile.bwrap
    argv = [
        bwrap,
        "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--uid", str(profile.uid), "--gid", str(profile.uid),
        "--hostname", profile.hostname,
        "--die-with-parent", "--new-session",
        "--cap-drop", "ALL",
        "--clearenv",
    ]
    for key, value in minimal_environment(profile).items():
        argv += ["--setenv", key, value]
    binds = read_only_binds(profile.python, profile.extra_ro_binds)
    shown = environment_paths() if profile.site_packages else ()
    # The prefix binds carry site-packages; an empty read-only tmpfs hides each folder that
    # is not part of the environment shown.
    hidden = tuple(path for path in site_dirs() if path not in shown)
    argv += _read_only_mounts(binds, hidden, under_tmp=False)
    argv += _root_links()
    argv += ["--proc", "/proc", "--dev", "/dev",
             "--size", str(profile.tmp_bytes), "--tmpfs", "/tmp"]
    # What lives under /tmp on the host (a venv, a task tree) is mounted after the private
    # /tmp, which would cover it otherwise.
    argv += _read_only_mounts(binds, hidden, under_tmp=True)
    # The environment frostline runs in, read-only, at the same paths as on the host.
    for path in shown:
        argv += ["--ro-bind", path, path]
    argv += [
        *[arg for src, dest in profile.rw_binds for arg in ("--bind", src, dest)],
        # bubblewrap builds the root on a tmpfs of its own; make it read-only once every
        # mount point exists, so that only /tmp and the read-write binds are writable.
        "--remount-ro", "/dev",
        "--remount-ro", "/",
        "--chdir", profile.chdir,
        "--seccomp", str(seccomp_fd),
        "--",
        *inner_argv,
    ]
    return argv


def python_argv(profile: SandboxProfile, args: Sequence[str]) -> list[str]:
    """The interpreter command inside the sandbox: the limits stage, then `args`
    (``["-m", module, ...]``, ``["-c", code, ...]`` or ``[path, ...]``)."""
    # -S: no site module, so the interpreter's own site-packages (and every .pth hook in them)
    # stay off sys.path; a script needs only the standard library and frostline (and -S halves
    # the start). With `site_packages`, the limit stage adds the environment frostline runs
    # in (`frostline.runtime.sandbox_env`), not the base interpreter's.
    sites = environment_paths() if profile.site_packages else ()
    # -P: never prepend the working directory (the writable /tmp) to sys.path.
    return [profile.python, "-S", "-P", "-B", *stage_argv(profile.limits, args, sites)]


@functools.lru_cache(maxsize=8)
def _compiled_filter(policy: SeccompPolicy) -> bytes:
    return build_filter(policy)


@dataclass
class SandboxLaunch:
    """A ready-to-start sandbox command and the fds it needs.

    Start it with ``subprocess.Popen(launch.argv, pass_fds=launch.pass_fds + your_fds,
    start_new_session=True)``, then call `close` (the seccomp fd is only read at start-up).
    """

    argv: list[str]
    pass_fds: tuple[int, ...]
    _fds: list[int] = field(default_factory=list, repr=False)

    def close(self) -> None:
        while self._fds:
            os.close(self._fds.pop())

    def __enter__(self) -> SandboxLaunch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _require_bwrap(profile: SandboxProfile) -> str:
    path = shutil.which(profile.bwrap)
    if path is None:
        raise SandboxUnavailable(
            f"bubblewrap ({profile.bwrap!r}) was not found, so scripts cannot be sandboxed; "
            + _BWRAP_HINT,
            bwrap=profile.bwrap,
        )
    return path


def prepare_launch(
    args: Sequence[str], profile: SandboxProfile, *, info_fd: int | None = None
) -> SandboxLaunch:
    """Compile the seccomp filter and build the bubblewrap command for python `args`.

    Args:
        args: interpreter arguments (``["-m", module, ...]`` or ``["-c", code, ...]``).
        profile: the isolation profile.
        info_fd: an inheritable fd on which bubblewrap writes ``{"child-pid": N}``, the host
            pid of the sandbox's init (used to wait for the whole tree on kill).

    Raises:
        SandboxUnavailable: bubblewrap or libseccomp is missing.
    """
    _require_bwrap(profile)
    try:
        program = _compiled_filter(profile.seccomp)
    except SeccompUnavailable as exc:
        raise SandboxUnavailable(
            f"the seccomp filter cannot be built: {exc.strerror}", reason="seccomp"
        ) from exc
    fd = filter_fd(program)
    argv = sandbox_argv(python_argv(profile, args), profile, seccomp_fd=fd)
    pass_fds: tuple[int, ...] = (fd,)
    if info_fd is not None:
        argv[1:1] = ["--info-fd", str(info_fd)]
        pass_fds += (info_fd,)
    return SandboxLaunch(argv=argv, pass_fds=pass_fds, _fds=[fd])
