"""A run's workspace: a base snapshot plus the patch currently applied, re-materialisable.

The base snapshot is the task's package tree with its bug injected, copied once and never
written again. The workspace is a copy of it with at most one patch applied; a patch is a list
of SEARCH/REPLACE edits relative to the base (a new candidate replaces the previous one, it does
not stack on it). Applying a patch is therefore idempotent: `materialise(patch)` resets every
file the previous patch touched and applies the new edits, so the same committed patch always
yields the same files. That is what lets a resumed durable run rebuild its workspace from its
committed `edit.apply` calls, whether they were executed or replayed.

`check_patch` refuses, before anything is written, a patch that touches a test file, leaves the
repository, does not match the base, or does not parse.
"""

from __future__ import annotations

import ast
import difflib
import json
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from frostline.coding.interface import Mutation
from frostline.coding.manifest import SKIP_DIRS, is_test_file
from frostline.errors import (
    BadTask as BadTask,
)
from frostline.errors import (
    PatchRefused as PatchRefused,
)


@dataclass(frozen=True)
class Edit:
    """Replace the first occurrence of `search` in `file` (relative to the root) by `replace`."""

    file: str
    search: str
    replace: str

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "search": self.search, "replace": self.replace}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Edit:
        return cls(str(data["file"]), str(data["search"]), str(data["replace"]))


def edits_of(patch: Mapping[str, Any]) -> tuple[Edit, ...]:
    return tuple(Edit.from_dict(e) for e in patch.get("edits", ()))


def _safe_rel(rel: str) -> str:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not rel or rel.startswith("~"):
        raise PatchRefused(f"patch path {rel!r} leaves the repository", file=rel)
    return p.as_posix()


def apply_edits(base: Mapping[str, str], edits: Sequence[Edit]) -> dict[str, str]:
    """New texts of the files the edits touch (pure: `base` maps file -> base text)."""
    out: dict[str, str] = {}
    for e in edits:
        rel = _safe_rel(e.file)
        if rel not in base:
            raise PatchRefused(f"patch edits {rel!r}, which is not a file of the repository",
                               file=rel)
        text = out.get(rel, base[rel])
        if not e.search or e.search not in text:
            raise PatchRefused(f"SEARCH text not found in {rel}: {e.search[:120]!r}", file=rel)
        out[rel] = text.replace(e.search, e.replace, 1)
    return out


def unified_diff(before: Mapping[str, str], after: Mapping[str, str]) -> str:
    parts: list[str] = []
    for rel in sorted(after):
        parts.extend(difflib.unified_diff(before[rel].splitlines(True), after[rel].splitlines(True),
                                          f"a/{rel}", f"b/{rel}"))
    return "".join(parts)


class Workspace:
    """The working tree of one run: ``<dir>/base`` (snapshot) and ``<dir>/tree`` (workspace).

    Example::

        ws = Workspace.create(workdir, Path(task.source_dir), task.mutation)
        ws.materialise({"edits": [...]})
    """

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.base = directory / "base"
        self.tree = directory / "tree"
        self.applied: dict[str, str] = {}  # file -> text of the patch in force

    @classmethod
    def create(cls, directory: Path, source: Path, mutation: Mutation | None) -> Workspace:
        """Snapshot `source` (with `mutation` injected) unless `directory` already holds one,
        then lay the working tree anew from the snapshot."""
        ws = cls(directory)
        marker = ws.base / ".frostline-base"
        # the snapshot of another task (or another bug) is never reused
        identity = json.dumps({"source": str(source.resolve()), "mutation":
                               None if mutation is None else mutation.__dict__}, sort_keys=True)
        if not marker.is_file() or marker.read_text(encoding="utf-8") != identity:
            if not source.is_dir():
                raise BadTask(f"the task's source tree {str(source)!r} does not exist",
                              source=str(source))
            shutil.rmtree(ws.base, ignore_errors=True)
            shutil.copytree(source, ws.base, symlinks=True,
                            ignore=shutil.ignore_patterns(*SKIP_DIRS - {"docs", "doc"}))
            if mutation is not None:
                inject(ws.base, mutation)
            marker.write_text(identity, encoding="utf-8")
        ws.reset()
        return ws

    def reset(self) -> None:
        """Lay the working tree anew from the base snapshot (no patch in force)."""
        shutil.rmtree(self.tree, ignore_errors=True)
        shutil.copytree(self.base, self.tree, symlinks=True,
                        ignore=shutil.ignore_patterns(".frostline-base"))
        self.applied = {}

    def base_texts(self, files: Sequence[str]) -> dict[str, str]:
        out = {}
        for rel in files:
            path = self.base / _safe_rel(rel)
            if path.is_file():
                out[rel] = path.read_text(encoding="utf-8")
        return out

    def check_patch(self, patch: Mapping[str, Any]) -> dict[str, str]:
        """The new file texts of `patch`, or PatchRefused: a test file, a path outside, a
        SEARCH that does not match the base, or a result that does not parse."""
        edits = edits_of(patch)
        if not edits:
            raise PatchRefused("the patch has no edits")
        for e in edits:
            rel = _safe_rel(e.file)
            if is_test_file(rel):
                raise PatchRefused(f"the patch touches the test file {rel}; tests are the "
                                   "specification and are never edited", file=rel)
            if not rel.endswith(".py"):
                raise PatchRefused(f"the patch touches {rel}, which is not a Python source",
                                   file=rel)
        new = apply_edits(self.base_texts([e.file for e in edits]), edits)
        for rel, text in new.items():
            try:
                ast.parse(text, filename=rel)
            except SyntaxError as exc:
                raise PatchRefused(f"the patched {rel} does not parse: {exc.msg} (line "
                                   f"{exc.lineno})", file=rel, line=exc.lineno) from None
        return new

    def materialise(self, patch: Mapping[str, Any] | None) -> dict[str, str]:
        """Make the tree the base plus `patch` (None: the base). Idempotent."""
        new = self.check_patch(patch) if patch is not None else {}
        if new == self.applied:
            return new
        for rel in set(self.applied) - set(new):
            shutil.copy2(self.base / rel, self.tree / rel)
        for rel, text in new.items():
            (self.tree / rel).write_text(text, encoding="utf-8")
        self.applied = dict(new)
        return new

    def diff(self, patch: Mapping[str, Any]) -> str:
        new = self.check_patch(patch)
        return unified_diff(self.base_texts(list(new)), new)


def inject(root: Path, mutation: Mutation) -> None:
    """Write the task's bug into the snapshot: line `mutation.line` must read `before`."""
    path = root / _safe_rel(mutation.file)
    if not path.is_file():
        raise BadTask(f"the mutation's file {mutation.file!r} is not in the source tree",
                      file=mutation.file)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    i = mutation.line - 1
    if not 0 <= i < len(lines) or lines[i].rstrip("\r\n") != mutation.before.rstrip("\r\n"):
        raise BadTask(f"{mutation.file}:{mutation.line} does not read {mutation.before!r}; the "
                      "task does not match its source tree", file=mutation.file,
                      line=mutation.line)
    ending = lines[i][len(lines[i].rstrip("\r\n")):]
    lines[i] = mutation.after.rstrip("\r\n") + ending
    path.write_text("".join(lines), encoding="utf-8")
