"""The seccomp filter the sandbox installs before a script's interpreter starts.

Namespaces take the network, the host's files and the host's processes away; seccomp takes
away the kernel interfaces that could give them back or attack the kernel itself: sockets,
mounts, new namespaces, ptrace, keyrings, BPF, module loading, io_uring (whose socket
operations bypass seccomp), terminal injection, and process creation.

The filter is compiled with the system's libseccomp through ctypes (no Python binding is
needed) for the **native architecture only**. libseccomp's generated program kills any
process that enters the kernel under another ABI (the i386 `int 0x80` route on x86-64, x32),
so a foreign-ABI syscall cannot slip past rules written for the native numbers.

Two choices worth knowing:

* `socket()` is denied for every domain, but `socketpair(AF_UNIX)` is allowed: asyncio's
  event loop builds its self-pipe with `socketpair()`, and an anonymous connected pair can
  reach nothing outside the process. Every other domain, `connect`, `bind`, `listen` and
  `accept` are denied.
* Process creation is denied (`fork`, `vfork`, `clone` without `CLONE_THREAD`, and `clone3`
  answers ENOSYS so that the C library falls back to `clone` for threads). The kernel exempts
  processes whose user maps to host root from RLIMIT_NPROC, and a sandbox started by root
  maps to host root, so the rlimit alone cannot stop a fork bomb there; seccomp does, for
  every host user. Threads stay allowed and are bounded by the address-space limit.

If libseccomp cannot be loaded, `build_filter` raises `SeccompUnavailable`; the sandbox
refuses to run rather than run without a filter.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from dataclasses import dataclass

__all__ = [
    "DEFAULT_POLICY",
    "SeccompPolicy",
    "SeccompUnavailable",
    "build_filter",
    "filter_fd",
    "libseccomp_version",
]

# libseccomp ABI constants (seccomp.h, stable since 2.x).
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_ACT_KILL_PROCESS = 0x80000000
_SCMP_FLTATR_ACT_BADARCH = 2
_SCMP_CMP_NE = 1
_SCMP_CMP_MASKED_EQ = 7


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


# Linux ABI constants the argument rules compare against.
_AF_UNIX = 1
_CLONE_THREAD = 0x00010000
_CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C

# Denied with EPERM whatever their arguments. Names the running kernel's architecture does not
# know (e.g. a syscall only some architectures have) are skipped, never an error.
_NETWORK: tuple[str, ...] = ("socket", "connect", "bind", "listen", "accept", "accept4")

_DENIED: tuple[str, ...] = (
    # debugging and reading other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    # filesystems and namespaces
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
    "name_to_handle_at", "open_by_handle_at", "quotactl", "acct",
    # kernel keyrings, BPF, perf, userfaultfd, io_uring (bypasses seccomp for its own ops)
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    # the machine itself
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "syslog", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "iopl", "ioperm", "vhangup", "lookup_dcookie",
    # execution-domain switches (e.g. READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE)
    "personality",
)

_PROCESS_CREATION: tuple[str, ...] = ("fork", "vfork")


class SeccompUnavailable(OSError):
    """libseccomp could not be loaded or refused the filter.

    The sandbox translates this into `SandboxUnavailable`; a run never proceeds without the
    filter.
    """


@dataclass(frozen=True)
class SeccompPolicy:
    """What the filter denies beyond the fixed list.

    Attributes:
        deny_network: deny socket (every domain), connect, bind, listen, accept. Turn it off
            only to test the network namespace on its own.
        deny_process_creation: deny fork/vfork/clone-without-CLONE_THREAD (threads stay allowed).
        allow_socketpair_unix: allow `socketpair(AF_UNIX, ...)` (asyncio's self-pipe needs it).
        extra_denied: more syscall names to deny with EPERM.
    """

    deny_network: bool = True
    deny_process_creation: bool = True
    allow_socketpair_unix: bool = True
    extra_denied: tuple[str, ...] = ()


DEFAULT_POLICY = SeccompPolicy()


class _ArgCmp(ctypes.Structure):
    # struct scmp_arg_cmp { unsigned int arg; enum scmp_compare op; scmp_datum_t a, b; }
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


_lib: ctypes.CDLL | None = None


def _load() -> ctypes.CDLL:
    global _lib
    if _lib is not None:
        return _lib
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompUnavailable(
            errno.ENOENT,
            "libseccomp is not installed, so the sandbox cannot build its seccomp filter; "
            "install it (Debian/Ubuntu: apt-get install libseccomp2; Fedora: dnf install "
            "libseccomp)",
        ) from exc
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_release.restype = None
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_attr_set.restype = ctypes.c_int
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_export_bpf.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    _lib = lib
    return lib


def libseccomp_version() -> str:
    """The loaded libseccomp's version, e.g. ``"2.5.4"``.

    Raises:
        SeccompUnavailable: libseccomp cannot be loaded.
    """

    class _Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("micro", ctypes.c_uint)]

    lib = _load()
    lib.seccomp_version.restype = ctypes.POINTER(_Version)
    v = lib.seccomp_version().contents
    return f"{v.major}.{v.minor}.{v.micro}"


class _Filter:
    """A libseccomp context; rules are added by syscall name with errors turned into Python."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._lib = lib
        self._ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)
        if not self._ctx:
            raise SeccompUnavailable(errno.ENOMEM, "seccomp_init failed")
        # A syscall entered under a foreign ABI is never judged by native rules: kill it.
        self._check(lib.seccomp_attr_set(self._ctx, _SCMP_FLTATR_ACT_BADARCH,
                                         _SCMP_ACT_KILL_PROCESS), "seccomp_attr_set")

    def _check(self, rc: int, what: str) -> None:
        if rc < 0:
            raise SeccompUnavailable(-rc, f"{what} failed: {os.strerror(-rc)}")

    def resolve(self, name: str) -> int | None:
        nr = self._lib.seccomp_syscall_resolve_name(name.encode())
        return None if nr < 0 else int(nr)

    def rule(self, action: int, name: str, *cmps: tuple[int, int, int, int]) -> bool:
        nr = self.resolve(name)
        if nr is None:
            return False
        arr = (_ArgCmp * max(len(cmps), 1))(*[_ArgCmp(*c) for c in cmps])
        self._check(self._lib.seccomp_rule_add_array(self._ctx, action, nr, len(cmps), arr),
                    f"seccomp_rule_add({name})")
        return True

    def export(self) -> bytes:
        fd = os.memfd_create("frostline-seccomp-export", os.MFD_CLOEXEC)
        try:
            self._check(self._lib.seccomp_export_bpf(self._ctx, fd), "seccomp_export_bpf")
            os.lseek(fd, 0, os.SEEK_SET)
            chunks = []
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def close(self) -> None:
        if self._ctx:
            self._lib.seccomp_release(self._ctx)
            self._ctx = None


def build_filter(policy: SeccompPolicy = DEFAULT_POLICY) -> bytes:
    """Compile the sandbox's seccomp filter to a classic-BPF program for the native arch.

    Returns:
        The raw `struct sock_filter` array, as bubblewrap's ``--seccomp FD`` expects.

    Raises:
        SeccompUnavailable: libseccomp is missing or rejected a rule.
    """
    f = _Filter(_load())
    try:
        eperm = _act_errno(errno.EPERM)
        network = _NETWORK if policy.deny_network else ()
        for name in (*network, *_DENIED, *policy.extra_denied):
            f.rule(eperm, name)
        # Terminal injection into the controlling terminal (CVE-2017-5226 class).
        for request in (_TIOCSTI, _TIOCLINUX):
            f.rule(eperm, "ioctl", (1, _SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, request))
        if policy.allow_socketpair_unix:
            f.rule(eperm, "socketpair", (0, _SCMP_CMP_NE, _AF_UNIX, 0))
        else:
            f.rule(eperm, "socketpair")
        if policy.deny_process_creation:
            for name in _PROCESS_CREATION:
                f.rule(eperm, name)
            # clone(flags, ...): a new process is a clone without CLONE_THREAD.
            f.rule(eperm, "clone", (0, _SCMP_CMP_MASKED_EQ, _CLONE_THREAD, 0))
        # Threads may still be created, but never into new namespaces.
        for flag in _CLONE_NAMESPACE_FLAGS:
            f.rule(eperm, "clone", (0, _SCMP_CMP_MASKED_EQ, flag, flag))
        # clone3 passes its flags in memory that seccomp cannot read; ENOSYS makes the C
        # library fall back to clone(), whose flags the rules above can check.
        f.rule(_act_errno(errno.ENOSYS), "clone3")
        return f.export()
    finally:
        f.close()


def filter_fd(program: bytes) -> int:
    """Put a compiled program in an anonymous file and return a readable fd positioned at 0.

    The fd is inheritable so that it can be handed to bubblewrap with ``pass_fds``; the
    caller closes it after the sandbox has started.
    """
    fd = os.memfd_create("frostline-seccomp", 0)
    try:
        view = memoryview(program)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
