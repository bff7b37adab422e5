"""Runners: where a script executes, and how its frames reach the broker.

- `ChildProcessRunner` starts ``python -m frostline.runtime.child READ_FD WRITE_FD`` as a real
  process in its own process group, with a minimal environment (never the host's variables,
  so never a provider credential), talks to it over two inherited pipes with the framed,
  nonce-bound protocol of frostline.runtime.rpc, and kills the whole group on a wall-clock
  timeout. It reduces isolation compared with a sandbox and must be chosen explicitly.

A sandboxing runner (e.g. bubblewrap) subclasses `ChildProcessRunner` and overrides
`child_argv()` (wrap the same command) and `popen_kwargs()`; the protocol stays the same: the
child inherits the two descriptors named on its command line, reads one `job` frame, sends
`call`/`decide`/`log` frames and one `done` frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import frostline
from frostline.runtime.broker import Broker, Reply
from frostline.runtime.rpc import MAX_LOG, Channel, ProtocolError

log = logging.getLogger("frostline.runner")

DEFAULT_TIMEOUT_S = 600.0


@dataclass(frozen=True)
class Job:
    """What a runner executes: the annotated source, its args and the envelope's limits."""

    source: str
    args: Any
    concurrency: int = 8
    max_fanout: int = 64

    def frame(self, nonce: str) -> dict[str, Any]:
        return {"type": "job", "nonce": nonce, "source": self.source, "args": self.args,
                "limits": {"concurrency": self.concurrency, "max_fanout": self.max_fanout}}


@dataclass(frozen=True)
class ScriptOutcome:
    """How the script ended (the broker separately knows whether the host stopped the run)."""

    ok: bool
    result: Any = None
    error: dict[str, Any] | None = None
    logs: str = ""
    timed_out: bool = False
    exit_code: int | None = None


class Runner(Protocol):
    async def run(self, job: Job, broker: Broker) -> ScriptOutcome: ...


# child process -----------------------------------------------------------------------
class CappedReader(threading.Thread):
    """Drains a child's output stream so it never blocks, keeping the first MAX_LOG chars."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__(daemon=True, name="frostline-output")
        self._stream = stream
        self._chunks: list[bytes] = []
        self._kept = 0
        self.dropped = 0

    def run(self) -> None:
        for chunk in iter(lambda: self._stream.read(4096), b""):
            room = MAX_LOG - self._kept
            if room > 0:
                self._chunks.append(chunk[:room])
                self._kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        out = b"".join(self._chunks).decode("utf-8", "replace")
        return out + (f"\n… {self.dropped} bytes of output dropped" if self.dropped else "")


class ChildProcessRunner:
    """Runs the script in a child Python process over inherited pipes.

    Example: ``ChildProcessRunner(timeout_s=60)``; override `child_argv()` / `popen_kwargs()`
    to wrap the same command in a sandbox.
    """

    #: said once per runner; plain processes share the host's filesystem and network
    isolation_note = ("ChildProcessRunner: the script runs as a plain process (no namespaces, "
                      "no seccomp); isolation is reduced compared with the sandbox runner")

    def __init__(self, *, timeout_s: float = DEFAULT_TIMEOUT_S, python: str | None = None) -> None:
        self.timeout_s = timeout_s
        self.python = python or sys.executable
        self._warned = False

    # overridable pieces ---------------------------------------------------------------
    def package_root(self) -> str:
        """The directory that contains the `frostline` package this host runs."""
        return str(Path(frostline.__file__).resolve().parent.parent)

    def child_env(self) -> dict[str, str]:
        """A minimal environment: nothing of the host's (no credentials, no proxies)."""
        return {"PATH": os.defpath, "LANG": "C.UTF-8", "PYTHONPATH": self.package_root(),
                "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}

    def child_argv(self, read_fd: int, write_fd: int) -> list[str]:
        # -S: the child needs the standard library and frostline only (PYTHONPATH); skipping
        # site-packages keeps third-party .pth hooks out of it and saves their import time.
        return [self.python, "-S", "-m", "frostline.runtime.child", str(read_fd), str(write_fd)]

    def popen_kwargs(self, pass_fds: tuple[int, ...], workdir: str) -> dict[str, Any]:
        return {"pass_fds": pass_fds, "env": self.child_env(), "cwd": workdir,
                "start_new_session": True,  # own process group: a timeout kills all of it
                "stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE,
                "stderr": subprocess.STDOUT, "close_fds": True}

    # running ------------------------------------------------------------------------------
    async def run(self, job: Job, broker: Broker) -> ScriptOutcome:
        if not self._warned:
            log.warning(self.isolation_note)
            self._warned = True
        to_child_r, to_child_w = os.pipe()
        to_host_r, to_host_w = os.pipe()
        workdir = tempfile.mkdtemp(prefix="frostline-child-")
        try:
            proc = subprocess.Popen(self.child_argv(to_child_r, to_host_w),
                                    **self.popen_kwargs((to_child_r, to_host_w), workdir))
        except BaseException:
            for fd in (to_child_r, to_child_w, to_host_r, to_host_w):
                os.close(fd)
            shutil.rmtree(workdir, ignore_errors=True)
            raise
        os.close(to_child_r)
        os.close(to_host_w)
        channel = Channel(to_host_r, to_child_w)
        assert proc.stdout is not None
        output = CappedReader(proc.stdout)
        output.start()
        try:
            return await self._converse(proc, channel, job, broker, output)
        finally:
            self._kill(proc)
            await asyncio.to_thread(proc.wait)
            channel.close()
            output.join(timeout=5)
            shutil.rmtree(workdir, ignore_errors=True)

    async def _converse(self, proc: subprocess.Popen[bytes], channel: Channel, job: Job,
                        broker: Broker, output: CappedReader) -> ScriptOutcome:
        loop = asyncio.get_running_loop()
        frames: asyncio.Queue[dict[str, Any] | BaseException | None] = asyncio.Queue()

        def pump() -> None:
            try:
                while (frame := channel.receive()) is not None:
                    loop.call_soon_threadsafe(frames.put_nowait, frame)
                loop.call_soon_threadsafe(frames.put_nowait, None)
            except (OSError, ProtocolError) as exc:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(frames.put_nowait, exc)
            except RuntimeError:  # loop closed
                pass

        # Writes go through one writer thread: a child that stops reading its pipe can block
        # a write, but never the event loop (so the timeout still fires and kills it).
        writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="frostline-rpc-writer")
        try:
            return await self._exchange(proc, channel, job, broker, output, frames, pump, writer)
        finally:
            writer.shutdown(wait=False, cancel_futures=True)

    async def _exchange(self, proc: subprocess.Popen[bytes], channel: Channel, job: Job,
                        broker: Broker, output: CappedReader,
                        frames: asyncio.Queue[dict[str, Any] | BaseException | None],
                        pump: Callable[[], None], writer: ThreadPoolExecutor) -> ScriptOutcome:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.timeout_s
        unsent = await self._send_job(proc, channel, job, broker, output, writer)
        if unsent is not None:
            return unsent
        threading.Thread(target=pump, daemon=True, name="frostline-rpc-host").start()
        replies = _Replies(channel, writer, broker.nonce)
        logs: list[str] = []
        kept = 0
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                self._kill(proc)
                return ScriptOutcome(False, error={
                    "type": "Timeout", "message": f"the script ran longer than {self.timeout_s}s "
                    "and its process group was killed"}, logs="".join(logs) + output.text(),
                    timed_out=True)
            try:
                # asyncio.timeout, not wait_for: on 3.11 wait_for swallows a cancellation that
                # arrives as its frame does, and a cancelled run would go on to its end.
                async with asyncio.timeout(remaining):
                    item = await frames.get()
            except TimeoutError:
                continue
            if item is None or isinstance(item, BaseException):
                if item is not None:  # a protocol violation: the child is not trusted further
                    self._kill(proc)
                code = await asyncio.to_thread(proc.wait)
                why = "closed the channel" if item is None else f"broke the protocol: {item}"
                return ScriptOutcome(False, error={
                    "type": "ChildExited", "message": f"the script process {why} without "
                    f"reporting a result (exit code {code})", "exit_code": code},
                    logs="".join(logs) + output.text(), exit_code=code)
            kind = item.get("type")
            if kind in ("call", "decide"):
                task = broker.submit(item)
                task.add_done_callback(functools.partial(replies.answer, item.get("id")))
            elif kind == "log" and item.get("nonce") == broker.nonce:
                text = str(item.get("text", ""))[: max(0, MAX_LOG - kept)]
                kept += len(text)
                logs.append(text)
            elif kind == "done" and item.get("nonce") == broker.nonce:
                code = await asyncio.to_thread(proc.wait)
                return ScriptOutcome(bool(item.get("ok")), result=item.get("result"),
                                     error=item.get("error"), logs="".join(logs) + output.text(),
                                     exit_code=code)
            else:
                # A frame of an unknown type or a `done` with a forged nonce: the broker audits
                # it (submit rejects anything that is not an admissible call or decide).
                broker.submit(item)

    async def _send_job(self, proc: subprocess.Popen[bytes], channel: Channel, job: Job,
                        broker: Broker, output: CappedReader,
                        writer: ThreadPoolExecutor) -> ScriptOutcome | None:
        """Send the job frame; the outcome of a child that does not take it, else None."""
        try:
            async with asyncio.timeout(self.timeout_s):  # see _exchange: never wait_for
                await asyncio.wrap_future(writer.submit(channel.send, job.frame(broker.nonce)))
        except TimeoutError:
            self._kill(proc)
            return ScriptOutcome(False, error={"type": "Timeout", "message": "the script "
                                               "process did not read its job in time"},
                                 logs=output.text(), timed_out=True)
        except (OSError, ProtocolError) as exc:
            return ScriptOutcome(False, error={"type": "ProtocolError",
                                               "message": f"could not send the job: {exc}"},
                                 logs=output.text())
        return None

    @staticmethod
    def _kill(proc: subprocess.Popen[bytes]) -> None:
        if proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


class _Replies:
    """Sends each call's reply to the child, through the writer thread, once the call is done."""

    def __init__(self, channel: Channel, writer: ThreadPoolExecutor, nonce: str) -> None:
        self._channel = channel
        self._writer = writer
        self._nonce = nonce

    def answer(self, rid: Any, task: asyncio.Task[Reply]) -> None:
        if task.cancelled() or task.exception() is not None:
            reply: Reply = {"ok": False, "error": {
                "kind": "stop", "type": "HostError",
                "message": "the host could not complete this call"}}
        else:
            reply = dict(task.result())
        with contextlib.suppress(RuntimeError):  # after the exchange: the child is gone
            self._writer.submit(self._send, rid, {**reply, "type": "reply", "id": rid,
                                                  "nonce": self._nonce})

    def _send(self, rid: Any, frame: dict[str, Any]) -> None:
        try:
            self._channel.send(frame)
        except ProtocolError as exc:  # e.g. a result over the frame cap
            with contextlib.suppress(OSError, ProtocolError):
                self._channel.send({"type": "reply", "id": rid, "nonce": self._nonce,
                                    "ok": False, "error": {"kind": "stop",
                                                           "type": "ProtocolError",
                                                           "message": str(exc)}})
        except OSError:
            pass  # the child is gone; the call itself completed on the host
