"""Running a sandbox: start it, bound its output and wall-clock time, and kill the whole tree.

`frostline.runtime.sandbox` decides what the sandbox is; this module owns its lifetime.

Killing is the subtle part. bubblewrap runs as a monitor on the host whose child is the
sandbox's pid 1, and the script runs under that init in its own session. SIGKILL to the
monitor's process group makes pid 1 die through ``--die-with-parent``, and the kernel then
kills every process of the pid namespace, but asynchronously: the monitor's exit says nothing
about when the script is gone. So the host learns pid 1's host pid from bubblewrap's
``--info-fd`` while the monitor is alive (the pid cannot be recycled while its parent has not
reaped it), holds a pidfd on it, signals it directly on kill, and waits on the pidfd: the kernel
reports pid 1's exit only after every other process of the namespace has exited. When
`SandboxProcess.kill` returns, nothing of the sandbox runs any more.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import selectors
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, Any

from frostline.runtime.sandbox import (
    SETUP_HINT,
    SandboxProfile,
    SandboxUnavailable,
    prepare_launch,
)

__all__ = ["SandboxProcess", "SandboxResult", "run_sandboxed"]

# How long kill() waits for the namespace to empty; the kernel normally needs milliseconds.
_REAP_SECONDS = 30.0
# How long start-up waits for bubblewrap to report the sandbox's pid 1 (it does so right after
# creating it; an early failure closes the pipe at once).
_INFO_SECONDS = 10.0

_BWRAP_HINT = (
    "check that the bind sources exist and that bubblewrap is >= 0.8; " + SETUP_HINT
)


class SandboxProcess:
    """One running sandbox: bubblewrap's `Popen` plus a pidfd on the sandbox's init.

    Usage::

        proc = SandboxProcess(["-m", "frostline.runtime.child", ...], profile,
                              pass_fds=(r, w), stdout=subprocess.PIPE)
        try:
            proc.wait(profile.wall_seconds)
        finally:
            proc.kill()          # idempotent; returns once the whole tree is gone

    Raises:
        SandboxUnavailable: bubblewrap or libseccomp is missing.
    """

    def __init__(
        self,
        args: Sequence[str],
        profile: SandboxProfile,
        *,
        pass_fds: Sequence[int] = (),
        stdin: int | IO[Any] | None = subprocess.DEVNULL,
        stdout: int | IO[Any] | None = subprocess.PIPE,
        stderr: int | IO[Any] | None = subprocess.PIPE,
    ) -> None:
        self.profile = profile
        info_r, info_w = os.pipe()
        os.set_blocking(info_r, False)
        self._info_r = info_r
        self._info = b""
        self._info_eof = False
        self._pidfd: int | None = None
        self.child_pid: int | None = None
        try:
            with prepare_launch(args, profile, info_fd=info_w) as launch:
                self.popen: subprocess.Popen[bytes] = subprocess.Popen(
                    launch.argv,
                    stdin=stdin,
                    stdout=stdout,
                    stderr=stderr,
                    pass_fds=(*launch.pass_fds, *pass_fds),
                    start_new_session=True,
                    # bubblewrap itself gets no environment either: nothing of the host's
                    # can reach /proc/1/environ inside.
                    env={},
                )
        except BaseException:
            os.close(info_r)
            raise
        finally:
            os.close(info_w)
        self.started = time.monotonic()
        # Learn pid 1 now, while bubblewrap's monitor is certainly alive and holds it: later,
        # after the monitor died, the pid could in principle belong to someone else.
        self._await_info(_INFO_SECONDS)

    def _await_info(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.child_pid is None and not self.read_info():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            select.select([self._info_r], [], [], remaining)

    @property
    def pid(self) -> int:
        """bubblewrap's (the monitor's) host pid."""
        return self.popen.pid

    @property
    def info_fd(self) -> int:
        """Readable when bubblewrap reports the sandbox's init; pass it to `read_info`."""
        return self._info_r

    def read_info(self) -> bool:
        """Consume what bubblewrap wrote on the info fd; True at end of file."""
        if self._info_r < 0 or self._info_eof:
            return True
        while True:
            try:
                chunk = os.read(self._info_r, 4096)
            except BlockingIOError:
                return False
            if not chunk:
                self._info_eof = True
                return True
            self._info += chunk
            self._take_child_pid()

    def _take_child_pid(self) -> None:
        if self.child_pid is not None:
            return
        try:
            info = json.loads(self._info)
        except ValueError:
            return  # not complete yet
        pid = info.get("child-pid")
        if isinstance(pid, int) and pid > 0:
            self.child_pid = pid
            try:
                self._pidfd = os.pidfd_open(pid)
            except ProcessLookupError:
                self._pidfd = None  # already gone, nothing to wait for

    def wait(self, timeout: float | None = None) -> int:
        """Wait for bubblewrap to exit (it exits after the sandbox's init, hence after all).

        Raises:
            subprocess.TimeoutExpired: still running after `timeout` seconds.
        """
        rc = self.popen.wait(timeout)
        self.read_info()
        return rc

    def kill(self) -> None:
        """Kill the whole sandbox and return once none of its processes runs. Idempotent."""
        self.read_info()
        if self.popen.returncode is None:
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            except PermissionError:
                self.popen.kill()
        if self._pidfd is not None:
            with contextlib.suppress(ProcessLookupError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
        self.popen.wait()
        self.read_info()
        if self._pidfd is not None:
            # Readable when pid 1 has exited, which the kernel reports only after the rest of
            # the pid namespace has been killed and reaped.
            select.select([self._pidfd], [], [], _REAP_SECONDS)
        self.close()

    def close(self) -> None:
        """Release the pidfd and the info pipe (does not kill; see `kill`)."""
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self._info_r >= 0:
            os.close(self._info_r)
            self._info_r = -1

    def __enter__(self) -> SandboxProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()


@dataclass(frozen=True)
class SandboxResult:
    """What one sandboxed execution produced.

    Attributes:
        returncode: the exit status (bubblewrap reports a payload killed by signal N as
            128 + N; negative: bubblewrap itself was killed by the host).
        stdout, stderr: captured output, at most ``profile.output_bytes`` each.
        timed_out: the wall-clock limit killed it.
        output_exceeded: an output cap killed it.
        duration: wall-clock seconds from start to exit.
    """

    returncode: int
    stdout: bytes
    stderr: bytes
    timed_out: bool
    output_exceeded: bool
    duration: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and not self.output_exceeded

    @property
    def signal(self) -> int | None:
        """The signal that ended the script, if any."""
        if self.returncode < 0:
            return -self.returncode
        if 128 < self.returncode <= 128 + 64:
            return self.returncode - 128
        return None


def run_sandboxed(
    args: Sequence[str],
    profile: SandboxProfile | None = None,
    *,
    stdin: bytes | None = None,
    pass_fds: Sequence[int] = (),
    extra_env: Mapping[str, str] | None = None,
) -> SandboxResult:
    """Run the sandboxed interpreter with `args` to completion, timeout or output cap.

    Usage: ``run_sandboxed(["-c", "print(1)"], SandboxProfile(wall_seconds=5))``.

    Args:
        args: interpreter arguments: ``["-c", code, ...]``, ``["-m", module, ...]``.
        profile: the isolation profile (default `SandboxProfile()`).
        stdin: bytes fed to the sandbox's stdin (closed afterwards).
        pass_fds: host fds the sandboxed process inherits under the same numbers.
        extra_env: variables added to the minimal environment for this run.

    Raises:
        SandboxUnavailable: bubblewrap or libseccomp is missing, or bubblewrap could not
            set the sandbox up (its message and the fix are included).
    """
    profile = profile or SandboxProfile()
    if extra_env:
        profile = replace(profile, extra_env=(*profile.extra_env, *extra_env.items()))
    proc = SandboxProcess(
        args,
        profile,
        pass_fds=pass_fds,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
    )
    try:
        out, err, timed_out, exceeded = _collect(proc, stdin)
    finally:
        proc.kill()  # a no-op wait when it already exited; otherwise the whole tree dies
    result = SandboxResult(
        returncode=proc.popen.returncode,
        stdout=out,
        stderr=err,
        timed_out=timed_out,
        output_exceeded=exceeded,
        duration=time.monotonic() - proc.started,
    )
    _raise_if_setup_failed(result)
    return result


def _collect(proc: SandboxProcess, stdin: bytes | None) -> tuple[bytes, bytes, bool, bool]:
    popen, profile = proc.popen, proc.profile
    assert popen.stdout is not None and popen.stderr is not None
    if popen.stdin is not None:
        try:
            popen.stdin.write(stdin or b"")
        except BrokenPipeError:
            pass
        finally:
            popen.stdin.close()
    out_fd, err_fd, info_fd = popen.stdout.fileno(), popen.stderr.fileno(), proc.info_fd
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    streams = {out_fd, err_fd}
    deadline = proc.started + profile.wall_seconds
    timed_out = exceeded = False
    with selectors.DefaultSelector() as sel:
        sel.register(out_fd, selectors.EVENT_READ)
        sel.register(err_fd, selectors.EVENT_READ)
        sel.register(info_fd, selectors.EVENT_READ)
        while streams:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            for key, _ in sel.select(remaining):
                if key.fd == info_fd:
                    if proc.read_info():
                        sel.unregister(key.fd)
                    continue
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    streams.discard(key.fd)
                    continue
                buf = buffers[key.fd]
                room = profile.output_bytes - len(buf)
                buf += chunk[: max(room, 0)]
                if len(chunk) > room:
                    exceeded = True
            if exceeded:
                break
    if timed_out or exceeded:
        proc.kill()
    else:
        try:
            proc.wait(max(deadline - time.monotonic(), 0.001))
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
    popen.stdout.close()
    popen.stderr.close()
    return bytes(buffers[out_fd]), bytes(buffers[err_fd]), timed_out, exceeded


def _raise_if_setup_failed(result: SandboxResult) -> None:
    # bubblewrap reports its own set-up failures as "bwrap: ..." on stderr with status 1,
    # before the payload could print anything.
    if result.returncode != 1 or result.timed_out or result.output_exceeded:
        return
    first = result.stderr.splitlines()[0] if result.stderr else b""
    if first.startswith(b"bwrap:") and not result.stdout:
        raise SandboxUnavailable(
            "bubblewrap could not set up the sandbox: "
            + first.decode("utf-8", "replace")
            + "; "
            + _BWRAP_HINT,
            stderr=result.stderr.decode("utf-8", "replace")[:2000],
            returncode=result.returncode,
        )
