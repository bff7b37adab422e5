"""The seccomp filter: compiled by libseccomp, loaded by bubblewrap, enforced by the kernel."""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import textwrap

import pytest

from frostline.runtime import seccomp
from frostline.runtime.sandbox import SandboxUnavailable, prepare_launch
from frostline.runtime.sandbox_process import run_sandboxed
from frostline.runtime.seccomp import SeccompPolicy, build_filter, filter_fd


def test_filter_is_a_classic_bpf_program():
    program = build_filter()
    # struct sock_filter is 8 bytes; a real filter has many instructions.
    assert len(program) % 8 == 0 and len(program) // 8 > 40


def test_policies_compile_to_different_programs():
    base = build_filter()
    assert build_filter(SeccompPolicy(deny_process_creation=False)) != base
    assert build_filter(SeccompPolicy(deny_network=False)) != base
    assert build_filter(SeccompPolicy(extra_denied=("getpid",))) != base


def test_unknown_syscall_names_are_skipped_not_fatal():
    assert build_filter(SeccompPolicy(extra_denied=("no_such_syscall_xyz",))) == build_filter()


def test_filter_fd_holds_the_program_at_offset_zero():
    program = build_filter()
    fd = filter_fd(program)
    try:
        assert os.lseek(fd, 0, os.SEEK_CUR) == 0
        assert os.read(fd, len(program) + 10) == program
        assert os.get_inheritable(fd)
    finally:
        os.close(fd)


def test_libseccomp_version_is_reported():
    major, minor, _micro = (int(x) for x in seccomp.libseccomp_version().split("."))
    assert (major, minor) >= (2, 4)


def test_missing_libseccomp_fails_closed(monkeypatch):
    monkeypatch.setattr(seccomp, "_lib", None)
    monkeypatch.setattr(seccomp.ctypes.util, "find_library", lambda name: "libseccomp-absent.so.9")
    # The compiled-filter cache would hide the missing library; start from a cold cache.
    from frostline.runtime import sandbox

    sandbox._compiled_filter.cache_clear()
    try:
        with pytest.raises(seccomp.SeccompUnavailable, match="apt-get install libseccomp2"):
            build_filter()
        with pytest.raises(SandboxUnavailable, match="seccomp"):
            prepare_launch(["-c", "pass"], _profile())
    finally:
        sandbox._compiled_filter.cache_clear()


def _profile():
    from frostline.runtime.sandbox import SandboxProfile

    return SandboxProfile()


# Each row: syscall name, C arguments, expected errno name. Run through libc's syscall(2) so
# that nothing in Python's wrappers hides what the kernel returned.
DENIED = [
    ("mount", "b'none', b'/tmp', b'tmpfs', 0, None", "EPERM"),
    ("umount2", "b'/tmp', 0", "EPERM"),
    ("unshare", "0x10000000", "EPERM"),
    ("setns", "0, 0", "EPERM"),
    ("ptrace", "16, 1, 0, 0", "EPERM"),  # PTRACE_ATTACH to pid 1
    ("keyctl", "0, 0, 0, 0, 0", "EPERM"),
    ("add_key", "b'user', b'k', b'v', 1, -4", "EPERM"),
    ("bpf", "0, None, 0", "EPERM"),
    ("perf_event_open", "None, 0, -1, -1, 0", "EPERM"),
    ("userfaultfd", "0", "EPERM"),
    ("io_uring_setup", "1, None", "EPERM"),
    ("personality", "0x0400000", "EPERM"),  # READ_IMPLIES_EXEC
    ("process_vm_readv", "1, None, 0, None, 0, 0", "EPERM"),
    ("pivot_root", "b'/tmp', b'/tmp'", "EPERM"),
    ("chroot", "b'/tmp'", "EPERM"),
    ("reboot", "0, 0, 0, None", "EPERM"),
    ("init_module", "None, 0, b''", "EPERM"),
    ("connect", "0, None, 0", "EPERM"),
    ("bind", "0, None, 0", "EPERM"),
    ("listen", "0, 1", "EPERM"),
    ("clone3", "None, 0", "ENOSYS"),
    ("socketpair", "2, 1, 0, None", "EPERM"),  # AF_INET pair denied before the kernel sees it
]


def test_denied_syscalls_return_their_errno_inside_the_sandbox(profile):
    code = textwrap.dedent(
        """
        import ctypes, errno, json, sys
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        names = {"mount": 165, "umount2": 166, "unshare": 272, "setns": 308, "ptrace": 101,
                 "keyctl": 250, "add_key": 248, "bpf": 321, "perf_event_open": 298,
                 "userfaultfd": 323, "io_uring_setup": 425, "personality": 135,
                 "process_vm_readv": 310, "pivot_root": 155, "chroot": 161, "reboot": 169,
                 "init_module": 175, "connect": 42, "bind": 49, "listen": 50, "clone3": 435,
                 "socketpair": 53}
        out = {}
        for name, args in json.loads(sys.argv[1]):
            ctypes.set_errno(0)
            rc = libc.syscall(names[name], *eval("(" + args + ",)"))
            out[name] = errno.errorcode.get(ctypes.get_errno(), "ok") if rc < 0 else "ok"
        print(json.dumps(out))
        """
    )
    if os.uname().machine != "x86_64":
        pytest.skip("syscall numbers in this test are x86-64's")
    rows = json.dumps([[n, a] for n, a, _ in DENIED])
    result = run_sandboxed(["-c", code, rows], profile)
    assert result.ok, result.stderr.decode()
    assert json.loads(result.stdout) == {n: e for n, _, e in DENIED}


def test_tiocsti_terminal_injection_is_denied(profile):
    code = textwrap.dedent(
        """
        import ctypes, errno, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open("/dev/null", os.O_RDWR)
        c = ctypes.c_char(b"x")
        rc = libc.ioctl(fd, 0x5412, ctypes.byref(c))
        print(json.dumps(errno.errorcode.get(ctypes.get_errno()) if rc < 0 else "ok"))
        """
    )
    result = run_sandboxed(["-c", code], profile)
    assert json.loads(result.stdout) == "EPERM"


def test_ordinary_ioctl_still_works(profile):
    code = "import os, json\nprint(json.dumps(os.isatty(0)))"
    result = run_sandboxed(["-c", code], profile)
    assert result.ok and json.loads(result.stdout) is False


def test_without_the_process_rule_fork_works(profile):
    """Shows the process-creation rule is what stops fork (the test above is not vacuous)."""
    forking = dataclasses.replace(profile, seccomp=SeccompPolicy(deny_process_creation=False))
    code = "import os, json\npid = os.fork()\nif pid == 0: os._exit(7)\n" \
           "print(json.dumps(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])))"
    result = run_sandboxed(["-c", code], forking)
    assert result.ok, result.stderr
    assert json.loads(result.stdout) == 7


def test_clone_into_a_new_namespace_is_denied_even_with_processes_allowed(profile):
    forking = dataclasses.replace(profile, seccomp=SeccompPolicy(deny_process_creation=False))
    code = textwrap.dedent(
        """
        import ctypes, errno, json
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        # clone(CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0)
        rc = libc.syscall(56, 0x40000000 | 17, 0, 0, 0, 0)
        if rc == 0:
            libc._exit(0)
        print(json.dumps(errno.errorcode.get(ctypes.get_errno()) if rc < 0 else "ok"))
        """
    )
    result = run_sandboxed(["-c", code], forking)
    assert result.ok, result.stderr
    assert json.loads(result.stdout) == "EPERM"


def test_ctypes_arg_struct_matches_libseccomp_abi():
    # struct scmp_arg_cmp: uint arg; enum op; uint64 a; uint64 b -> 24 bytes on LP64.
    assert ctypes.sizeof(seccomp._ArgCmp) == 24


# getpid through three ABIs: the native one, the i386 `int 0x80` entry and the x32 bit.
ABI_PROBE = textwrap.dedent(
    """
    import ctypes, mmap, sys
    code = {"native": b"\\xb8\\x27\\x00\\x00\\x00\\x0f\\x05\\xc3",
            "i386": b"\\xb8\\x14\\x00\\x00\\x00\\xcd\\x80\\xc3",
            "x32": b"\\xb8\\x27\\x00\\x00\\x40\\x0f\\x05\\xc3"}[sys.argv[1]]
    m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    m.write(code)
    fn = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
    print(fn(), flush=True)
    """
)


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="x86-64 machine code")
@pytest.mark.parametrize("abi", ["i386", "x32"])
def test_foreign_abi_syscalls_kill_the_process(profile, abi):
    """The filter is native-only; a syscall entered through another ABI is never judged by
    native rules: libseccomp's bad-arch action kills the process with SIGSYS."""
    import signal

    native = run_sandboxed(["-c", ABI_PROBE, "native"], profile)
    assert native.ok and native.stdout.strip() == b"2"  # getpid in the pid namespace
    foreign = run_sandboxed(["-c", ABI_PROBE, abi], profile)
    assert foreign.signal == signal.SIGSYS and foreign.stdout == b""
