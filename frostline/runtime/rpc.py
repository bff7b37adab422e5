"""Framed JSON over inherited pipes: the only channel between a script and the host.

Why a hand-rolled framing: the script process has no network and no filesystem worth talking
about, so the host hands it two pipe file descriptors at spawn time and nothing else. Each
frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON (one object).
A frame longer than the cap is a protocol error: the reader stops and the host kills the child.

Protocol (every frame carries ``nonce``, the per-attempt secret the host generated with
``secrets.token_hex``; the host rejects and audits a frame whose nonce differs):

host → child
    ``{"type": "job", "nonce", "source", "args", "limits": {"concurrency", "max_fanout"}}``
        exactly once, first; ``source`` is the annotated script.
    ``{"type": "reply", "nonce", "id", "ok": true, "result"}``
    ``{"type": "reply", "nonce", "id", "ok": false, "error": {"kind": "stop" | "raise", ...}}``
        the answer to a ``call`` or ``decide`` with the same ``id``.
child → host
    ``{"type": "call", "nonce", "id", "site", "path": [int...], "capability", "payload"}``
    ``{"type": "decide", "nonce", "id", "path": [int...], "value": int}``  (race winners)
    ``{"type": "log", "nonce", "text"}``  (size-capped in total)
    ``{"type": "done", "nonce", "ok": true, "result"}`` or ``{"type": "done", "nonce",
        "ok": false, "error": {"type", "message", ...}}``  exactly once, last.

Another runner (e.g. a bubblewrap sandbox) may wrap the same child command: it only has to keep
the two descriptors open across its own exec.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import threading
from typing import Any

from frostline.errors import (
    ProtocolError as ProtocolError,
)

MAX_FRAME = 8 * 1024 * 1024  # bytes of JSON in one frame
MAX_SOURCE = 256 * 1024  # characters of annotated source in the job frame
MAX_ARGS = 1024 * 1024  # bytes of canonical JSON args
MAX_RESULT = 4 * 1024 * 1024  # bytes of JSON of a script result or a call result
MAX_LOG = 64 * 1024  # characters of log output kept per attempt

_HEADER = struct.Struct(">I")


def encode(frame: dict[str, Any], *, cap: int = MAX_FRAME) -> bytes:
    """Serialize one frame; raises ProtocolError when it exceeds `cap` bytes."""
    body = json.dumps(frame, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    if len(body) > cap:
        raise ProtocolError(f"frame of {len(body)} bytes exceeds the cap of {cap} bytes",
                            size=len(body), cap=cap)
    return _HEADER.pack(len(body)) + body


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks: list[bytes] = []
    remaining = n
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            if chunks:
                raise ProtocolError("channel closed in the middle of a frame")
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, *, cap: int = MAX_FRAME) -> dict[str, Any] | None:
    """Read one frame from `fd`; None at a clean end of stream."""
    header = _read_exact(fd, _HEADER.size)
    if header is None:
        return None
    (length,) = _HEADER.unpack(header)
    if length > cap:
        raise ProtocolError(f"incoming frame of {length} bytes exceeds the cap of {cap} bytes",
                            size=length, cap=cap)
    body = _read_exact(fd, length)
    if body is None:
        raise ProtocolError("channel closed in the middle of a frame")
    try:
        frame = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"frame is not UTF-8 JSON: {exc}") from exc
    if not isinstance(frame, dict):
        raise ProtocolError("a frame is a JSON object")
    return frame


class Channel:
    """One end of the pipe pair: blocking reads, writes serialized by a lock.

    Readers run in a dedicated thread on both sides; writers may be any thread.
    """

    def __init__(self, read_fd: int, write_fd: int, *, cap: int = MAX_FRAME) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.cap = cap
        self._lock = threading.Lock()
        self._closed = False

    def send(self, frame: dict[str, Any]) -> None:
        data = encode(frame, cap=self.cap)
        with self._lock:
            if self._closed:
                raise ProtocolError("channel is closed")
            view = memoryview(data)
            while view:
                written = os.write(self.write_fd, view)
                view = view[written:]

    def receive(self) -> dict[str, Any] | None:
        return read_frame(self.read_fd, cap=self.cap)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for fd in (self.read_fd, self.write_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


def json_size(value: Any) -> int:
    """Bytes of the compact JSON of `value`; raises ValueError for values JSON cannot carry."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode())
