"""Resource limits for a sandboxed script, applied inside the sandbox before the script runs.

The limits are set by a tiny first stage that runs in the sandboxed interpreter itself
(``python -c STAGE -m module ...``, see `stage_argv`): it lowers the soft and hard rlimits and
then runs the real entry point in the same interpreter with `runpy`, so the limits cost no
second interpreter start, and nothing in the script can raise them again (an unprivileged
process cannot raise a hard limit). The stage imports nothing of frostline's and almost
nothing of the standard library, so it adds next to nothing to the start-up.

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

from collections.abc import Sequence
from dataclasses import dataclass, fields

__all__ = ["ResourceLimits", "stage_argv", "stage_source"]

_RESOURCES = {
    "cpu_seconds": "RLIMIT_CPU",
    "address_space_bytes": "RLIMIT_AS",
    "processes": "RLIMIT_NPROC",
    "open_files": "RLIMIT_NOFILE",
    "file_size_bytes": "RLIMIT_FSIZE",
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


def _triples(limits: ResourceLimits) -> list[tuple[str, int, int]]:
    """(RLIMIT name, soft, hard) for each limit; CPU gets one second of grace before SIGKILL."""
    out = []
    for name, res_name in _RESOURCES.items():
        value = getattr(limits, name)
        out.append((res_name, value, value + 1 if res_name == "RLIMIT_CPU" else value))
    return out


def stage_source(limits: ResourceLimits, site_dirs: Sequence[str] = ()) -> str:
    """The limit stage: a ``python -c`` program that lowers the rlimits, adds `site_dirs`
    to sys.path (with ``site.addsitedir``: their ``.pth`` files run, under the limits), then
    runs its arguments (``-m MODULE ...``, ``-c CODE ...`` or ``PATH ...``) as the
    interpreter would.

    It imports only ``resource``, ``_signal`` and ``sys`` (``runpy`` for a module, ``site``
    for site folders), so it adds almost nothing to the start-up; a limit is never raised
    above a hard limit already in force.
    """
    triples = ", ".join(f"(_r.{res}, {soft}, {hard})" for res, soft, hard in _triples(limits))
    sites = ""
    if site_dirs:
        sites = (f"import site as _site\nfor _d in {tuple(site_dirs)!r}:\n"
                 "    _site.addsitedir(_d)\ndel _site, _d\n")
    return f"""\
import resource as _r, sys as _s, _signal
for _k, _soft, _hard in ({triples},):
    _cur = _r.getrlimit(_k)[1]
    if _cur != _r.RLIM_INFINITY:
        _hard = min(_hard, _cur)
        _soft = min(_soft, _hard)
    _r.setrlimit(_k, (_soft, _hard))
# SIGXFSZ would kill silently at the file-size limit; ignored, the write fails with EFBIG.
_signal.signal(_signal.SIGXFSZ, _signal.SIG_IGN)
del _r, _k, _soft, _hard, _cur, _signal
{sites}_s.argv = _s.argv[1:]
if not _s.argv or (_s.argv[0] in ("-m", "-c") and len(_s.argv) < 2):
    raise SystemExit("limit stage: expected -m MODULE, -c CODE or PATH")
if _s.argv[0] == "-m":
    import runpy
    del _s.argv[0]
    runpy.run_module(_s.argv[0], run_name="__main__", alter_sys=True)
elif _s.argv[0] == "-c":
    _code = _s.argv.pop(1)
    exec(compile(_code, "<string>", "exec"))
else:
    import runpy
    runpy.run_path(_s.argv[0], run_name="__main__")
"""


def stage_argv(limits: ResourceLimits, args: Sequence[str],
               site_dirs: Sequence[str] = ()) -> list[str]:
    """Interpreter arguments that apply `limits`, add `site_dirs` to sys.path, then run `args`.

    Usage: ``[python, "-S", *stage_argv(limits, ["-m", "frostline.runtime.child", "3", "4"])]``.
    """
    return ["-c", stage_source(limits, site_dirs), *args]
