"""Stored model replies, replayed in order: tests, demos and offline repairs.

A replay file is read only through a `ReplayPolicy`, which is what keeps a file name from
becoming a way into the host: the file must resolve (symlinks followed) inside an allowlisted
directory, must be a regular file (never a FIFO, a device or a /proc entry, which could block a
thread or stream forever), must not be one of the run store's own files (opening and closing
a SQLite database outside SQLite drops the process's locks on it), and is read up to a size cap.
The HTTP API and the MCP server have no policy at all: they accept only configured endpoints.

A file says where its replies came from::

    {"source": "scripted", "note": "written by hand for the demo",
     "responses": [{"content": "...", "usage": {"prompt_tokens": 1, ...}},
                   {"error": {"kind": "rate_limited", "message": "..."}}]}

`source` is "scripted" (written by hand) or "recorded" (produced by a model; then `model` and
`recorded_at` say which model and when). An ``error`` entry replays a model failure as
ModelError; asking for more replies than the file holds raises ModelError(kind="exhausted").
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frostline.errors import DefinitionError
from frostline.repair.completion import (
    Accounting,
    Completion,
    ModelError,
    Usage,
    check_messages,
    parse_usage,
)

REPLAY_KINDS = ("replay", "recorded")  # spec prefixes; "recorded:" is the older spelling
ENV_DIRS = "FROSTLINE_REPLAY_DIRS"
MAX_REPLAY_BYTES = 4 * 1024 * 1024
SOURCES = ("scripted", "recorded")
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class ReplayPolicy:
    """Where replay files may come from, how large they may be, and which files are never
    opened (the run store's).

    Example: ``ReplayPolicy.for_cli(store_files=store.local_files())``
    """

    dirs: tuple[Path, ...]
    max_bytes: int = MAX_REPLAY_BYTES
    never: tuple[Path, ...] = field(default=())

    @classmethod
    def for_cli(cls, *, cwd: Path | None = None, store_files: Iterable[Path] = (),
                also: Iterable[Path] = ()) -> ReplayPolicy:
        """The working directory, $FROSTLINE_REPLAY_DIRS (os.pathsep-separated) and `also`
        (e.g. a package's shipped replies)."""
        extra = [Path(d) for d in os.environ.get(ENV_DIRS, "").split(os.pathsep) if d]
        return cls(dirs=(cwd or Path.cwd(), *extra, *also), never=tuple(store_files))

    def read(self, path: str | os.PathLike[str]) -> bytes:
        """The bytes of an allowed replay file; DefinitionError naming the reason otherwise."""
        real = Path(os.path.realpath(path))
        if not any(real.is_relative_to(os.path.realpath(d)) for d in self.dirs):
            raise DefinitionError(
                f"replay file {str(path)!r} is outside the directories replies may be read from "
                f"({', '.join(str(d) for d in self.dirs)}); move it there or add its directory "
                f"to ${ENV_DIRS}", field="model")
        if self._is_store_file(real):
            raise DefinitionError(f"replay file {str(path)!r} is a file of the run store; "
                                  "name a JSON file of stored replies", field="model")
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except FileNotFoundError:
            raise DefinitionError(f"replay file {str(path)!r} does not exist",
                                  field="model") from None
        except OSError as exc:
            raise DefinitionError(f"replay file {str(path)!r} cannot be opened: "
                                  f"{exc.strerror}", field="model") from None
        try:
            return self._read_regular(fd, path)
        finally:
            os.close(fd)

    def _is_store_file(self, real: Path) -> bool:
        try:
            st = real.stat()
        except OSError:
            return False
        for f in self.never:
            try:
                other = f.stat()
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (other.st_dev, other.st_ino):
                return True
            if stat.S_ISDIR(other.st_mode) and real.is_relative_to(os.path.realpath(f)):
                return True
        return False

    def _read_regular(self, fd: int, path: str | os.PathLike[str]) -> bytes:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DefinitionError(f"replay file {str(path)!r} is not a regular file",
                                  field="model")
        if st.st_size > self.max_bytes:
            raise DefinitionError(f"replay file {str(path)!r} is {st.st_size} bytes; the cap "
                                  f"is {self.max_bytes}", field="model")
        chunks, total = [], 0
        while chunk := os.read(fd, 65536):
            total += len(chunk)
            if total > self.max_bytes:  # grew while being read
                raise DefinitionError(f"replay file {str(path)!r} is over the {self.max_bytes}"
                                      "-byte cap", field="model")
            chunks.append(chunk)
        return b"".join(chunks)


class ReplayClient:
    """Replays stored replies in order (see the module docstring for the file shape).
    `requests` keeps every message list it was given."""

    def __init__(self, path: str | os.PathLike[str], *, policy: ReplayPolicy) -> None:
        self.path = Path(path)
        try:
            data = json.loads(policy.read(self.path))
        except ValueError as exc:
            raise DefinitionError(f"replay file {self.path} is not JSON: {exc}") from exc
        self._responses = _validated(self.path, data)
        self.source = str(data.get("source") or "scripted")
        self.model = str(data.get("model") or self.source)
        self.note = str(data.get("note") or "")
        self._next = 0
        self._lock = threading.Lock()
        self._accounting = Accounting()
        self.requests: list[list[dict[str, Any]]] = []

    @property
    def usage(self) -> Usage:
        return self._accounting.usage

    @property
    def calls(self) -> int:
        return self._accounting.calls

    @property
    def remaining(self) -> int:
        return len(self._responses) - self._next

    def complete(self, messages: list[dict[str, Any]]) -> Completion:
        msgs = check_messages(messages)
        with self._lock:
            index = self._next
            if index >= len(self._responses):
                raise ModelError(
                    f"replay {self.path}: all {len(self._responses)} stored replies were used "
                    f"and reply {index + 1} was requested; add replies to the file or lower "
                    "the number of model calls (e.g. max_rewrites)",
                    kind="exhausted", model=self.model, path=str(self.path))
            self._next += 1
            self.requests.append(msgs)
        entry = self._responses[index]
        if "error" in entry:
            err = entry["error"]
            raise ModelError(f"replayed model error #{index}: {err.get('message', 'error')}",
                             kind=str(err.get("kind", "server_error")), model=self.model,
                             status=err.get("status"))
        usage = parse_usage(entry.get("usage"))
        self._accounting.add(usage)
        return Completion(entry["content"], usage, self.model, dict(entry))


def _validated(path: Path, data: Any) -> list[dict[str, Any]]:
    if not isinstance(data, dict) or not isinstance(data.get("responses"), list):
        raise DefinitionError(f"{path}: expected an object with a 'responses' list, "
                              'e.g. {"source": "scripted", "responses": [{"content": "..."}]}')
    source = data.get("source", "scripted")
    if source not in SOURCES:
        raise DefinitionError(f"{path}: 'source' is 'scripted' (written by hand) or 'recorded' "
                              f"(produced by a model), not {source!r}")
    if source == "recorded" and not (isinstance(data.get("model"), str)
                                     and isinstance(data.get("recorded_at"), str)):
        raise DefinitionError(f"{path}: recorded replies name the 'model' that produced them "
                              "and when ('recorded_at'); replies written by hand are 'scripted'")
    for i, r in enumerate(data["responses"]):
        ok = isinstance(r, dict) and (isinstance(r.get("content"), str)
                                      or isinstance(r.get("error"), dict))
        if not ok or ("usage" in r and not isinstance(r["usage"], dict)):
            raise DefinitionError(f"{path}: responses[{i}] needs a string 'content' "
                                  "(and an optional 'usage' object) or an 'error' object")
    return list(data["responses"])
