"""`SandboxRunner`: the default runner on Linux — the child-process protocol inside bubblewrap.

It runs the same ``python -m frostline.runtime.child READ_FD WRITE_FD`` command as
`ChildProcessRunner`, over the same framed, nonce-bound RPC, but inside the sandbox of
`frostline.runtime.sandbox`: the two pipe descriptors are the only thing the script shares
with the host (bubblewrap keeps inherited descriptors open across its exec). Before the first
script of a process runs, the runner proves its profile with `verify_profile`; when the
machine cannot provide the isolation it raises `SandboxUnavailable` and runs nothing. It never
falls back to the plain child process, which must be chosen explicitly.

Usage::

    runner = SandboxRunner(SandboxProfile(wall_seconds=120))
    outcome = execute(store, run_id, source, providers=providers, runner=runner)
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import Any

from frostline.runtime.broker import Broker
from frostline.runtime.rpc import Channel
from frostline.runtime.runners import CappedReader, ChildProcessRunner, Job, ScriptOutcome
from frostline.runtime.sandbox import SandboxProfile, SandboxUnavailable
from frostline.runtime.sandbox_probe import verify_profile
from frostline.runtime.sandbox_process import SandboxProcess

__all__ = ["SandboxRunner", "default_runner"]


class SandboxRunner(ChildProcessRunner):
    """Runs each script in a fresh bubblewrap sandbox (see `frostline.runtime.sandbox`).

    Args:
        profile: the isolation profile; its ``wall_seconds`` is the script's wall-clock limit
            unless `timeout_s` is given.
        timeout_s: overrides the wall-clock limit.
        verify: probe the profile before the first run (cached per process). Leave it on;
            turning it off is for benchmarks that verify once themselves.
    """

    isolation_note = ""

    def __init__(
        self,
        profile: SandboxProfile | None = None,
        *,
        timeout_s: float | None = None,
        verify: bool = True,
    ) -> None:
        self.profile = profile or SandboxProfile()
        super().__init__(
            timeout_s=timeout_s if timeout_s is not None else self.profile.wall_seconds,
            python=self.profile.python,
        )
        self.verify = verify

    def child_argv(self, read_fd: int, write_fd: int) -> list[str]:
        """The interpreter arguments run inside the sandbox (after the limits stage)."""
        return ["-m", "frostline.runtime.child", str(read_fd), str(write_fd)]

    def start(self, read_fd: int, write_fd: int) -> SandboxProcess:
        """Start the sandboxed child with the two pipe ends it inherits."""
        return SandboxProcess(
            self.child_argv(read_fd, write_fd),
            self.profile,
            pass_fds=(read_fd, write_fd),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    async def run(self, job: Job, broker: Broker) -> ScriptOutcome:
        """Run one job in a fresh sandbox and converse with it until `done` or the limit.

        Raises:
            SandboxUnavailable: the profile cannot be established; nothing was started.
        """
        if self.verify:
            await asyncio.to_thread(verify_profile, self.profile)
        to_child_r, to_child_w = os.pipe()
        to_host_r, to_host_w = os.pipe()
        try:
            proc = self.start(to_child_r, to_host_w)
        except BaseException:
            for fd in (to_child_r, to_child_w, to_host_r, to_host_w):
                os.close(fd)
            raise
        os.close(to_child_r)
        os.close(to_host_w)
        channel = Channel(to_host_r, to_child_w)
        assert proc.popen.stdout is not None
        output = CappedReader(proc.popen.stdout)
        output.start()
        try:
            outcome = await self._converse(proc.popen, channel, job, broker, output)
        finally:
            # Returns only when no process of the sandbox is left.
            await asyncio.to_thread(proc.kill)
            channel.close()
            await asyncio.to_thread(output.join, 5)
        return _explain_setup_failure(outcome)


def _explain_setup_failure(outcome: ScriptOutcome) -> ScriptOutcome:
    # bubblewrap failing after the probe passed (e.g. a bind source vanished) shows up as a
    # child that exited without a frame and "bwrap: ..." in its output: say so plainly.
    if outcome.ok or outcome.error is None or outcome.error.get("type") != "ChildExited":
        return outcome
    first = outcome.logs.lstrip().splitlines()[0] if outcome.logs.strip() else ""
    if first.startswith("bwrap:"):
        raise SandboxUnavailable(
            f"bubblewrap could not start the script's sandbox: {first}",
            logs=outcome.logs[:2000],
        )
    return outcome


def default_runner(profile: SandboxProfile | None = None, **kwargs: Any) -> ChildProcessRunner:
    """The runner frostline uses when none is chosen: `SandboxRunner` on Linux.

    Raises:
        SandboxUnavailable: not on Linux; choose ``ChildProcessRunner`` explicitly to run with
            reduced isolation.
    """
    if not sys.platform.startswith("linux"):
        raise SandboxUnavailable(
            f"the bubblewrap sandbox needs Linux (this is {sys.platform}); to run scripts "
            "anyway, choose ChildProcessRunner explicitly (reduced isolation)",
            platform=sys.platform,
        )
    return SandboxRunner(profile, **kwargs)
