"""Load the checker's corpora (tests/corpus) with their headers.

The corpora are plain files so that a failing case names a script a reader can open. This module
reads them once for the tests, the mutation study and the latency benchmark, and parses the
header comments: ``# expect:`` (escapes), ``# envelope:`` (escapes), ``# args:`` (valid scripts)
and ``# caught-by:`` (runtime-only cases).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

CORPUS_DIR = Path(__file__).resolve().parent.parent / "tests" / "corpus"
Kind = Literal["escapes", "valid", "runtime_only", "realistic"]
RULE_IDS = frozenset(f"R{i:02d}" for i in range(13))


class CorpusError(ValueError):
    """A corpus file has a malformed header; the message names the file and the fix."""


@dataclass(frozen=True)
class CorpusScript:
    """One corpus file and what its header says about it.

    ``expect`` is a tuple of alternatives groups: every group must be matched by at least one
    of its rules (``# expect: R03 R05`` gives two groups, ``# expect: R02|R07`` one group).
    """

    kind: Kind
    name: str
    path: Path
    source: str
    expect: tuple[frozenset[str], ...] = ()
    envelope: dict[str, Any] | None = None
    args: dict[str, Any] | None = None
    caught_by: str | None = None

    def missing(self, fired: set[str]) -> list[str]:
        """The expectation groups that none of ``fired`` satisfies, spelled as in the header."""
        return ["|".join(sorted(group)) for group in self.expect if not group & fired]


def _headers(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        key, sep, value = line[1:].strip().partition(":")
        if sep and key.strip() in {"expect", "envelope", "args", "caught-by"}:
            out[key.strip()] = value.strip()
    return out


def _json(path: Path, key: str, value: str) -> dict[str, Any]:
    try:
        data = json.loads(value)
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path.name}: the '# {key}:' header is not JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise CorpusError(f"{path.name}: the '# {key}:' header must be a JSON object")
    return data


def _expect(path: Path, value: str) -> tuple[frozenset[str], ...]:
    groups = []
    for token in value.split():
        group = frozenset(token.split("|"))
        unknown = group - RULE_IDS
        if unknown:
            raise CorpusError(f"{path.name}: unknown rule id(s) {sorted(unknown)} in '# expect:'; "
                              "use R00..R12")
        groups.append(group)
    if not groups:
        raise CorpusError(f"{path.name}: '# expect:' names no rule")
    return tuple(groups)


def load(kind: Kind, root: Path = CORPUS_DIR) -> list[CorpusScript]:
    """Every ``*.py`` file of one corpus folder, sorted by name."""
    folder = root / kind
    scripts = []
    for path in sorted(folder.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        head = _headers(source)
        expect: tuple[frozenset[str], ...] = ()
        if kind == "escapes":
            if "expect" not in head:
                raise CorpusError(f"{path.name}: an escape needs a '# expect: Rxx' header")
            expect = _expect(path, head["expect"])
        if kind == "runtime_only" and "caught-by" not in head:
            raise CorpusError(f"{path.name}: a runtime-only case needs a '# caught-by:' header")
        scripts.append(CorpusScript(
            kind=kind, name=path.stem, path=path, source=source, expect=expect,
            envelope=_json(path, "envelope", head["envelope"]) if "envelope" in head else None,
            args=_json(path, "args", head["args"]) if "args" in head else None,
            caught_by=head.get("caught-by"),
        ))
    return scripts
