"""Resource limits for a sandboxed script, applied inside the sandbox before the script runs.

The limits are set by a tiny first stage that runs in the sandboxed interpreter itself
(``python -m frostline.runtime.limits SPEC -m module ...``): it lowers the soft and hard
rlimits and then runs the real entry point in the same interpreter with `runpy`, so the limits
cost no second interpreter start and nothing in the script can raise them again (an
unprivileged process cannot raise a hard limit).

Why inside rather than in the host's ``preexec_fn``: bubblewrap must still fork its init and
the payload, and RLIMIT_NPROC is counted per user *per user namespace level*. Set on the host,
it would be charged against every process of the host user and could stop bubblewrap itself;
set inside the new user namespace, it counts only the sandbox's own processes. (When the host
user is root, the kernel exempts the sandbox from RLIMIT_NPROC altogether, because its user
maps to host root; the seccomp filter denies process creation for that reason.)

Limits:
    cpu_seconds: RLIMIT_CPU; the kernel sends SIGXCPU at the soft limit and SIGKILL at the hard
        limit, which is set one second later.
    address_space_bytes: RLIMIT_AS; allocations beyond it fail (`MemoryError` in Python).
    processes: RLIMIT_NPROC; threads count too.
    open_files: RLIMIT_NOFILE.
    file_size_bytes: RLIMIT_FSIZE; a write beyond it fails with EFBIG (SIGXFSZ is ignored so
        the script sees an error instead of dying silently).
"""

from __future__ import annotations

import resource
import runpy
import signal
import sys
from dataclasses import dataclass, fields

__all__ = ["ResourceLimits", "apply_limits", "main"]

_RESOURCES = {
    "cpu_seconds": resource.RLIMIT_CPU,
    "address_space_bytes": resource.RLIMIT_AS,
    "processes": resource.RLIMIT_NPROC,
    "open_files": resource.RLIMIT_NOFILE,
    "file_size_bytes": resource.RLIMIT_FSIZE,
}


@dataclass(frozen=True)
class ResourceLimits:
    """The rlimits of one sandboxed execution.

    Usage: ``ResourceLimits(cpu_seconds=10, address_space_bytes=512 << 20)``.
    """

    cpu_seconds: int = 30
    address_space_bytes: int = 1 << 30
    processes: int = 64
    open_files: int = 256
    file_size_bytes: int = 16 << 20

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(
                    f"ResourceLimits.{f.name} must be a positive integer, got {value!r}"
                )

    def to_spec(self) -> str:
        """The compact command-line form, e.g. ``cpu_seconds=30,processes=64,...``."""
        return ",".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))

    @classmethod
    def from_spec(cls, spec: str) -> ResourceLimits:
        """Parse `to_spec` output.

        Raises:
            ValueError: an unknown key or a malformed value.
        """
        values: dict[str, int] = {}
        for item in spec.split(","):
            key, sep, raw = item.partition("=")
            if not sep or key not in _RESOURCES:
                raise ValueError(f"bad resource limit {item!r}; expected one of {sorted(_RESOURCES)}")
            values[key] = int(raw)
        return cls(**values)


def apply_limits(limits: ResourceLimits) -> None:
    """Lower the current process's rlimits to `limits` (soft = hard, except CPU).

    A limit is never raised above the hard limit already in force.
    """
    for name, res in _RESOURCES.items():
        value = getattr(limits, name)
        _soft, hard = resource.getrlimit(res)
        soft_new = value
        # CPU: SIGXCPU at the soft limit, the kernel's SIGKILL one second later.
        hard_new = value + 1 if res == resource.RLIMIT_CPU else value
        if hard != resource.RLIM_INFINITY:
            hard_new = min(hard_new, hard)
            soft_new = min(soft_new, hard_new)
        resource.setrlimit(res, (soft_new, hard_new))
    # Exceeding RLIMIT_FSIZE raises SIGXFSZ, whose default action kills silently; ignoring it
    # turns the write into an EFBIG error the script and the host can report.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def main(argv: list[str] | None = None) -> None:
    """``python -m frostline.runtime.limits SPEC (-m MODULE | -c CODE | PATH) [ARGS...]``.

    Applies the limits, then runs the target exactly as the interpreter would have.
    """
    args = sys.argv[1:] if argv is None else argv
    if len(args) < 2:
        raise SystemExit(
            "usage: python -m frostline.runtime.limits SPEC (-m MODULE | -c CODE | PATH) [ARGS...]"
        )
    apply_limits(ResourceLimits.from_spec(args[0]))
    mode, rest = args[1], args[2:]
    if mode == "-m":
        if not rest:
            raise SystemExit("-m needs a module name")
        sys.argv = [rest[0], *rest[1:]]
        runpy.run_module(rest[0], run_name="__main__", alter_sys=True)
    elif mode == "-c":
        if not rest:
            raise SystemExit("-c needs code")
        sys.argv = ["-c", *rest[1:]]
        code = compile(rest[0], "<string>", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    else:
        sys.argv = [mode, *rest]
        runpy.run_path(mode, run_name="__main__")


if __name__ == "__main__":
    main()
