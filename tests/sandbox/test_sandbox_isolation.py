"""Acceptance: each isolation property, proved by running real code in real bubblewrap."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from frostline.runtime.limits import ResourceLimits
from frostline.runtime.sandbox import SandboxProfile
from frostline.runtime.sandbox_env import environment_paths, site_dirs
from frostline.runtime.sandbox_process import run_sandboxed
from frostline.runtime.seccomp import SeccompPolicy


def run_code(code: str, profile: SandboxProfile, *args: str):
    return run_sandboxed(["-c", textwrap.dedent(code), *args], profile)


def run_json(code: str, profile: SandboxProfile, *args: str) -> dict:
    result = run_code(code, profile, *args)
    assert result.ok, result.stderr.decode()
    return json.loads(result.stdout)


def test_no_network_listener_on_host_loopback_sees_nothing(profile):
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    try:
        out = run_json(
            """
            import errno, json, socket, sys
            port = int(sys.argv[1])
            tries = {}
            for family, addr in ((socket.AF_INET, ("127.0.0.1", port)),
                                 (socket.AF_INET6, ("::1", port))):
                try:
                    s = socket.socket(family, socket.SOCK_STREAM)
                    s.connect(addr)
                    tries[str(family)] = "connected"
                except OSError as exc:
                    tries[str(family)] = errno.errorcode[exc.errno]
            print(json.dumps(tries))
            """,
            profile,
            str(port),
        )
        assert set(out.values()) == {"EPERM"}
        # The sandbox has exited; any connection it made would be queued by now.
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def test_no_network_even_with_sockets_allowed_by_seccomp(profile):
    """The network namespace alone isolates: with socket() allowed there is still no route."""
    open_profile = dataclasses.replace(profile, seccomp=_socket_allowed())
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    port = listener.getsockname()[1]
    try:
        out = run_json(
            """
            import errno, json, socket, sys
            res = {}
            s = socket.socket()
            try:
                s.connect(("127.0.0.1", int(sys.argv[1])))
                res["loopback"] = "connected"
            except OSError as exc:
                res["loopback"] = errno.errorcode[exc.errno]
            s = socket.socket()
            try:
                s.connect(("1.1.1.1", 53))
                res["internet"] = "connected"
            except OSError as exc:
                res["internet"] = errno.errorcode[exc.errno]
            print(json.dumps(res))
            """,
            open_profile,
            str(port),
        )
        # The sandbox's own loopback has nobody listening; the host's is another namespace.
        assert out == {"loopback": "ECONNREFUSED", "internet": "ENETUNREACH"}
        listener.setblocking(False)
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()


def _socket_allowed() -> SeccompPolicy:
    return SeccompPolicy(deny_network=False)


def test_read_only_root_only_tmp_writable(profile):
    # Names no bind under /tmp can take: a checkout or a venv under /tmp (/tmp/x, say) is
    # mounted read-only over the private /tmp at its own path.
    out = run_json(
        """
        import errno, json, os
        res = {}
        for path in ("/x", "/usr/x", "/etc/x", "/opt/frostline/frostline/x", "/proc/x",
                     "/dev/x", "/tmp/.probe-x", "/tmp/.probe-sub/x"):
            try:
                if path == "/tmp/.probe-sub/x":
                    os.mkdir("/tmp/.probe-sub")
                with open(path, "w") as f:
                    f.write("x")
                res[path] = "written"
            except OSError as exc:
                res[path] = errno.errorcode[exc.errno]
        print(json.dumps(res))
        """,
        profile,
    )
    assert out.pop("/tmp/.probe-x") == "written"
    assert out.pop("/tmp/.probe-sub/x") == "written"
    assert all(v != "written" for v in out.values()), out


def test_non_root_uid_and_no_capabilities(profile):
    out = run_json(
        """
        import json, os
        st = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines())
        print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "euid": os.geteuid(),
                          "cap": st["CapEff"].strip(), "caps_bnd": st["CapBnd"].strip()}))
        """,
        profile,
    )
    assert out == {"uid": 65534, "gid": 65534, "euid": 65534, "cap": "0" * 16, "caps_bnd": "0" * 16}


def test_seccomp_active_and_socket_denied(profile):
    out = run_json(
        """
        import errno, json, socket
        st = open("/proc/self/status").read()
        seccomp = [l.split()[1] for l in st.splitlines() if l.startswith("Seccomp:")][0]
        res = {"seccomp": seccomp}
        for fam in ("AF_INET", "AF_INET6", "AF_UNIX", "AF_NETLINK", "AF_PACKET"):
            try:
                socket.socket(getattr(socket, fam), socket.SOCK_RAW if fam in
                              ("AF_NETLINK", "AF_PACKET") else socket.SOCK_STREAM)
                res[fam] = "ok"
            except OSError as exc:
                res[fam] = errno.errorcode[exc.errno]
        print(json.dumps(res))
        """,
        profile,
    )
    assert out == {"seccomp": "2", "AF_INET": "EPERM", "AF_INET6": "EPERM", "AF_UNIX": "EPERM",
                   "AF_NETLINK": "EPERM", "AF_PACKET": "EPERM"}


def test_asyncio_event_loop_runs_inside(profile):
    # asyncio's self-pipe needs socketpair(AF_UNIX); the filter allows exactly that.
    out = run_json(
        """
        import asyncio, json
        async def main():
            await asyncio.sleep(0)
            return await asyncio.gather(*(asyncio.sleep(0, result=i) for i in range(3)))
        print(json.dumps(asyncio.run(main())))
        """,
        profile,
    )
    assert out == [0, 1, 2]


def test_secret_in_host_environment_never_reaches_the_sandbox(profile, secret_env, caplog):
    caplog.set_level(logging.DEBUG)
    result = run_code(
        """
        import os
        print(open("/proc/self/environ", "rb").read().decode(errors="replace"))
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    print(pid, open(f"/proc/{pid}/environ", "rb").read())
                except OSError as exc:
                    print(pid, exc)
        print(sorted(os.environ))
        """,
        profile,
    )
    assert result.ok, result.stderr
    assert secret_env.encode() not in result.stdout + result.stderr
    assert b"OPENAI_API_KEY" not in result.stdout
    assert secret_env not in caplog.text
    assert secret_env not in repr(result)


def test_output_cap_kills_and_truncates(profile):
    result = run_code("import sys\nwhile True: sys.stdout.write('x' * 4096)", profile)
    assert result.output_exceeded
    assert not result.ok
    assert len(result.stdout) == profile.output_bytes


def test_stderr_is_capped_too(profile):
    result = run_code("import sys\nwhile True: sys.stderr.write('e' * 4096)", profile)
    assert result.output_exceeded
    assert len(result.stderr) == profile.output_bytes


def test_timeout_kills_infinite_loop_and_nothing_survives(profile, marker_processes):
    marker = f"frostline-timeout-{uuid.uuid4().hex}"
    short = dataclasses.replace(profile, wall_seconds=1.5,
                                limits=dataclasses.replace(profile.limits, cpu_seconds=60))
    result = run_code("while True:\n    pass", short, marker)
    assert result.timed_out
    assert result.signal == signal.SIGKILL
    assert result.duration < short.wall_seconds + 10  # bounded, generously
    assert marker_processes(marker) == []


def test_timeout_kills_the_whole_process_tree(profile, marker_processes):
    """With process creation allowed, a grandchild still dies with the sandbox."""
    marker = f"frostline-tree-{uuid.uuid4().hex}"
    forking = dataclasses.replace(
        profile, wall_seconds=2, seccomp=SeccompPolicy(deny_process_creation=False)
    )
    result = run_code(
        """
        import subprocess, sys, time
        subprocess.Popen(["/bin/sleep", "3600", sys.argv[1]], start_new_session=True)
        print("started", flush=True)
        while True:
            time.sleep(1)
        """,
        forking,
        marker,
    )
    assert result.timed_out
    assert result.stdout == b"started\n"
    assert marker_processes(marker) == []


def test_memory_bomb_fails(profile):
    result = run_code(
        """
        chunks = []
        while True:
            chunks.append(bytearray(16 << 20))
        """,
        profile,
    )
    assert not result.ok and not result.timed_out
    assert b"MemoryError" in result.stderr


def test_single_huge_allocation_fails(profile):
    result = run_code("x = bytearray(2 << 30)", profile)
    assert b"MemoryError" in result.stderr


def test_fork_attempts_fail(profile):
    out = run_json(
        """
        import errno, json, os, subprocess, threading
        res = {}
        def attempt(name, fn):
            try:
                fn()
                res[name] = "ok"
            except OSError as exc:
                res[name] = errno.errorcode[exc.errno]
        attempt("fork", lambda: os.fork() == 0 and os._exit(0))
        attempt("subprocess", lambda: subprocess.run(["/bin/true"]))
        attempt("posix_spawn", lambda: os.posix_spawn("/bin/true", ["/bin/true"], {}))
        t = threading.Thread(target=lambda: None)
        t.start(); t.join()
        res["thread"] = "ok"
        print(json.dumps(res))
        """,
        profile,
    )
    assert out == {"fork": "EPERM", "subprocess": "EPERM", "posix_spawn": "EPERM", "thread": "ok"}


def test_fork_bomb_is_contained(profile):
    result = run_code(
        """
        import os
        count = 0
        while True:
            os.fork()
            count += 1
        """,
        profile,
    )
    assert not result.timed_out
    assert b"PermissionError" in result.stderr


FORK_SIXTEEN = """
import json, os, time
made = 0
for _ in range(16):
    try:
        if os.fork() == 0:
            time.sleep(5); os._exit(0)
        made += 1
    except OSError:
        break
print(json.dumps(made))
"""

# Runs in a process of the unprivileged user: the same sandbox call, with the profile's limits
# passed in as JSON and the interpreter that user can execute.
_AS_USER = """
import dataclasses, json, sys
from frostline.runtime.limits import ResourceLimits
from frostline.runtime.sandbox import SandboxProfile
from frostline.runtime.sandbox_env import environment_paths, site_dirs
from frostline.runtime.sandbox_process import run_sandboxed
from frostline.runtime.seccomp import SeccompPolicy
spec = json.loads(sys.argv[1])
profile = SandboxProfile(limits=ResourceLimits(**spec["limits"]), wall_seconds=spec["wall"],
                         output_bytes=spec["output"], seccomp=SeccompPolicy(deny_process_creation=False))
result = run_sandboxed(["-c", spec["code"]], profile)
sys.stderr.write(result.stderr.decode(errors="replace"))
sys.stdout.write(result.stdout.decode())
sys.exit(0 if result.ok else 1)
"""
UNPRIVILEGED = (65534, 65534)  # nobody / nogroup: on every Linux, owns nothing of ours


def _as_unprivileged_user(code: str, profile: SandboxProfile) -> object:
    """Run `code` in the sandbox from a process of an unprivileged host user (the test runs as
    root, whom the kernel exempts from RLIMIT_NPROC): setpriv drops to that user, and the
    interpreter is one that user can execute (root's own may sit under a private home)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("setpriv (util-linux) is needed to run this test as an unprivileged user")
    drop = [setpriv, f"--reuid={UNPRIVILEGED[0]}", f"--regid={UNPRIVILEGED[1]}",
            "--clear-groups", "--"]
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)}
    spec = {"wall": profile.wall_seconds, "output": profile.output_bytes,
            "limits": dataclasses.asdict(profile.limits)}

    def sandboxed(python: str, source: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [*drop, python, "-s", "-B", "-c", _AS_USER, json.dumps({**spec, "code": source})],
            env=env, cwd="/", capture_output=True, timeout=120)

    # The first interpreter that user can run a sandbox with (bubblewrap binds it from that
    # user's view of the file system).
    candidates = [os.path.realpath(sys.executable), "/usr/bin/python3"]
    python = next((c for c in candidates if os.path.exists(c)
                   and sandboxed(c, "import sys; assert sys.version_info >= (3, 11)")
                   .returncode == 0), None)
    if python is None:
        pytest.skip("no Python >= 3.11 with which an unprivileged user can run the sandbox")
    done = sandboxed(python, textwrap.dedent(code))
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return json.loads(done.stdout)


def test_nproc_limit_for_unprivileged_host_user(profile):
    # Seccomp denies process creation by default (test_fork_attempts_fail); with it allowed,
    # the process limit is what stops a fork loop — for any host user but root, whom the
    # kernel exempts. As root, the test therefore runs the sandbox as an unprivileged user.
    limited = dataclasses.replace(
        profile, seccomp=SeccompPolicy(deny_process_creation=False),
        limits=dataclasses.replace(profile.limits, processes=4),
    )
    if os.geteuid() == 0:
        out = _as_unprivileged_user(FORK_SIXTEEN, limited)
    else:
        out = run_json(FORK_SIXTEEN, limited)
    assert isinstance(out, int) and out < 4


def test_cpu_limit_kills_busy_loop(profile):
    cpu = dataclasses.replace(
        profile, wall_seconds=30, limits=dataclasses.replace(profile.limits, cpu_seconds=1)
    )
    result = run_code("while True:\n    pass", cpu)
    assert not result.timed_out
    assert result.signal in (signal.SIGXCPU, signal.SIGKILL)


def test_file_size_limit(profile):
    out = run_json(
        """
        import errno, json
        try:
            with open("/tmp/big", "wb") as f:
                f.write(b"x" * (2 << 20))
            print(json.dumps("written"))
        except OSError as exc:
            print(json.dumps(errno.errorcode[exc.errno]))
        """,
        profile,
    )
    assert out == "EFBIG"


def test_open_files_limit(profile):
    out = run_json(
        """
        import errno, json, os
        fds = []
        try:
            while True:
                fds.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as exc:
            print(json.dumps([len(fds), errno.errorcode[exc.errno]]))
        """,
        profile,
    )
    assert out[1] == "EMFILE" and out[0] < profile.limits.open_files


def test_no_access_to_host_files(profile, tmp_path):
    store = tmp_path / "frostline.db"
    with sqlite3.connect(store) as db:
        db.execute("create table t (secret text)")
        db.execute("insert into t values ('store-canary')")
    db.close()
    repo_file = Path(__file__).resolve()
    paths = [str(store), str(tmp_path), str(repo_file), str(repo_file.parents[2]),
             "/etc/passwd", "/etc/shadow", "/etc/hostname", str(Path.home() / ".bashrc"),
             "/home", "/var", "/srv", "/mnt"]
    out = run_json(
        """
        import json, os, sys
        print(json.dumps({p: os.listdir(p) if os.path.isdir(p) else os.path.exists(p)
                          for p in sys.argv[1:]}))
        """,
        profile,
        *paths,
    )
    checkout, prefix = repo_file.parents[2], Path(sys.prefix).resolve()
    if prefix.is_relative_to(checkout):
        # A venv inside the checkout is bound for the interpreter (unless the sandbox's own
        # /tmp hides where it is): the checkout shows that one folder and nothing else.
        assert out.pop(str(checkout)) in (False, [prefix.relative_to(checkout).parts[0]])
        paths.remove(str(checkout))
    assert out == {p: False for p in paths}


def test_home_shows_nothing_but_the_interpreter_bind_path(profile):
    home = str(Path.home())
    out = run_json(
        """
        import json, os, sys
        home = sys.argv[1]
        print(json.dumps(sorted(os.listdir(home)) if os.path.isdir(home) else None))
        """,
        profile,
        home,
    )
    import sys

    # Every interpreter prefix is bound (in a venv: the venv's and its base interpreter's);
    # under the home directory only the first path component towards each one exists.
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                              sys.base_exec_prefix, profile.python)}
    expected = sorted({p[len(home) + 1:].split("/")[0] for p in prefixes
                       if p.startswith(home + "/")})
    assert out == (expected or None)


def test_inherited_pipes_work_in_both_directions(profile):
    to_child_r, to_child_w = os.pipe()
    from_child_r, from_child_w = os.pipe()
    try:
        os.write(to_child_w, b"ping")
        os.close(to_child_w)
        result = run_sandboxed(
            ["-c", "import os, sys\nr, w = int(sys.argv[1]), int(sys.argv[2])\n"
                   "os.write(w, os.read(r, 4)[::-1] + b'!')",
             str(to_child_r), str(from_child_w)],
            profile,
            pass_fds=(to_child_r, from_child_w),
        )
        assert result.ok, result.stderr
        os.close(from_child_w)
        from_child_w = -1
        assert os.read(from_child_r, 100) == b"gnip!"
    finally:
        for fd in (to_child_r, from_child_r, from_child_w):
            if fd >= 0:
                os.close(fd)


def test_only_passed_fds_are_inherited(profile):
    r, w = os.pipe()  # not passed
    try:
        out = run_json(
            "import json, os\nprint(json.dumps(sorted(int(f) for f in os.listdir('/proc/self/fd'))))",
            profile,
        )
        # stdin, stdout, stderr and the directory fd listdir itself opens; no host fd.
        assert r not in out[4:] and w not in out[4:]
        assert out[:3] == [0, 1, 2] and len(out) == 4
    finally:
        os.close(r)
        os.close(w)


def test_limits_cannot_be_raised_by_the_script(profile):
    out = run_json(
        """
        import errno, json, resource
        try:
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            print(json.dumps("raised"))
        except (OSError, ValueError) as exc:
            print(json.dumps(type(exc).__name__))
        """,
        profile,
    )
    assert out in ("ValueError", "PermissionError")


def test_exit_status_and_stdin_pass_through(profile):
    result = run_sandboxed(
        ["-c", "import sys\nsys.stdout.write(sys.stdin.read().upper())\nsys.exit(3)"],
        profile,
        stdin=b"hello",
    )
    assert result.returncode == 3
    assert result.stdout == b"HELLO"
    assert result.signal is None


def test_extra_env_is_explicit_and_host_env_still_absent(profile, secret_env):
    out = run_json(
        "import json, os\nprint(json.dumps(dict(os.environ)))",
        profile,
    )
    assert "OPENAI_API_KEY" not in out
    result = run_sandboxed(["-c", "import os\nprint(os.environ['RUN_ID'])"], profile,
                           extra_env={"RUN_ID": "r1"})
    assert result.stdout == b"r1\n"


def test_user_namespaces_cannot_be_nested(profile):
    """--disable-userns plus seccomp: no new namespace from inside."""
    out = run_json(
        """
        import ctypes, errno, json, os
        libc = ctypes.CDLL(None, use_errno=True)
        rc = libc.unshare(0x10000000)  # CLONE_NEWUSER
        print(json.dumps(errno.errorcode.get(ctypes.get_errno()) if rc != 0 else "ok"))
        """,
        profile,
    )
    assert out == "EPERM"


def test_hostname_is_the_sandbox_one(profile):
    out = run_json("import json, socket\nprint(json.dumps(socket.gethostname()))", profile)
    assert out == profile.hostname and out != socket.gethostname()


def test_memory_limit_profile_knob(profile):
    small = dataclasses.replace(
        profile, limits=ResourceLimits(address_space_bytes=128 << 20, cpu_seconds=5)
    )
    ok = run_code("x = bytearray(16 << 20)", small)
    assert ok.ok, ok.stderr
    bomb = run_code("x = bytearray(256 << 20)", small)
    assert b"MemoryError" in bomb.stderr


def test_script_runs_in_its_own_session_without_a_terminal(profile):
    # --new-session: the session is created inside the pid namespace (its leader is visible
    # there); the host's session would show as 0, its leader being outside the namespace.
    out = run_json("import json, os\nprint(json.dumps([os.getsid(0), os.getpgrp()]))", profile)
    assert out[0] in (1, 2) and out[1] in (1, 2)


def test_site_packages_hidden_unless_asked_for_then_only_the_hosts_environment(profile):
    # Issue 27: the sandbox runs the real interpreter behind a venv; with site_packages it
    # must see the environment frostline runs in (this venv's site-packages), read-only, and
    # not the base interpreter's site-packages unless this process has them on sys.path.
    shown = environment_paths()
    assert shown, "the suite runs with its dependencies installed somewhere"
    listing = "import json, os, sys\nprint(json.dumps(sorted(os.listdir(sys.argv[1]))[:3]))"
    on_path = "import json, os, sys\nprint(json.dumps([os.path.realpath(p) for p in sys.path]))"
    for folder in site_dirs():
        assert run_json(listing, profile, folder) == [], folder
    assert not set(shown) & set(run_json(on_path, profile))
    with_site = dataclasses.replace(profile, site_packages=True)
    for folder in shown:
        assert run_json(listing, with_site, folder) == sorted(os.listdir(folder))[:3]
    assert [p for p in run_json(on_path, with_site) if p in shown] == list(shown)
    for folder in set(site_dirs()) - set(shown):  # e.g. an isolated venv's base interpreter's
        assert run_json(listing, with_site, folder) == [], folder
    imported = run_code("import rfc8785\nprint(rfc8785.dumps({'b': 1, 'a': 2}).decode())",
                        with_site)
    assert imported.stdout == b'{"a":2,"b":1}\n', imported.stderr
    write = run_code("import sys\nopen(sys.argv[1] + '/frostline-probe', 'w')", with_site,
                     shown[0])
    assert not write.ok and b"Read-only file system" in write.stderr


def test_tmp_is_bounded_by_its_size(profile):
    # tmpfs pages are not address space: the tmpfs size is what bounds them.
    small = dataclasses.replace(profile, tmp_bytes=4 << 20)
    out = run_json(
        """
        import errno, json
        written = 0
        try:
            for i in range(64):
                with open(f"/tmp/f{i}", "wb") as f:
                    f.write(b"x" * (512 << 10))
                written += 1
            print(json.dumps([written, "ok"]))
        except OSError as exc:
            print(json.dumps([written, errno.errorcode[exc.errno]]))
        """,
        small,
    )
    assert out[1] == "ENOSPC" and out[0] <= 8  # 4 MiB holds at most 8 such files


def test_sandbox_process_knows_its_init_and_kill_waits_for_the_tree(profile, marker_processes):
    from frostline.runtime.sandbox_process import SandboxProcess

    marker = f"frostline-init-{uuid.uuid4().hex}"
    proc = SandboxProcess(["-c", "import time\nwhile True: time.sleep(1)", marker], profile)
    try:
        assert proc.child_pid is not None
        with open(f"/proc/{proc.child_pid}/status") as f:
            nspid = next(line.split()[1:] for line in f if line.startswith("NSpid:"))
        assert nspid == [str(proc.child_pid), "1"]  # the host pid of the sandbox's pid 1
        assert marker_processes(marker)
    finally:
        proc.kill()
    assert marker_processes(marker) == []
    proc.kill()  # idempotent
