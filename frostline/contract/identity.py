"""Call identity ι = (σ, π, ω) and the payload digest h.

σ is the structural callsite (see frostline.script.sites), π the fanout path pushed by
container primitives, ω the zero-based occurrence of (σ, π) within one attempt. The payload
digest is SHA-256 over the RFC 8785 canonical JSON of the payload, so key order and number
spelling never change it.

Text form of an identity: ``<site>@<path>:<occurrence>`` with the path dot-joined, e.g.
``orchestrate/#1@:0`` (sequential) or ``orchestrate.gen/#0@2:0`` (branch 2).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import rfc8785

from frostline.errors import PayloadInvalid

Path = tuple[int, ...]


@dataclass(frozen=True, order=True)
class Identity:
    site: str
    path: Path
    occurrence: int

    def __str__(self) -> str:
        return f"{self.site}@{'.'.join(str(i) for i in self.path)}:{self.occurrence}"

    @property
    def key(self) -> tuple[str, Path, int]:
        return (self.site, self.path, self.occurrence)

    @classmethod
    def parse(cls, text: str) -> Identity:
        """Parse the text form; raises ValueError with a hint on a malformed identity."""
        try:
            rest, occ = text.rsplit(":", 1)
            site, path = rest.rsplit("@", 1)
            steps = tuple(int(p) for p in path.split(".")) if path else ()
            occurrence = int(occ)
        except ValueError:
            raise ValueError(
                f"malformed identity {text!r}; expected SITE@PATH:OCCURRENCE, e.g. orchestrate/#0@:0"
            ) from None
        if not site or occurrence < 0 or any(s < 0 for s in steps):
            raise ValueError(f"malformed identity {text!r}")
        return cls(site, steps, occurrence)


def path_text(path: Path) -> str:
    return ".".join(str(i) for i in path)


def parse_path(text: str) -> Path:
    return tuple(int(p) for p in text.split(".")) if text else ()


# Plain payloads — strings, booleans, null, integers within ±(2**53 - 1), and lists and
# objects of them with ASCII keys — have one RFC 8785 form that the C JSON encoder writes with
# sorted keys (ASCII keys sort alike by code point and by UTF-16 unit, and both escape the same
# characters), at a fraction of the library's cost; a test pins the two equal. Anything else
# (floats, big integers, non-ASCII keys, other types) goes to the library.
_sorted_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False, sort_keys=True,
                                separators=(",", ":")).encode
_SAFE_INT = 2**53 - 1
_PLAIN_DEPTH = 32


def _plain(value: Any, depth: int) -> bool:
    kind = type(value)
    if kind is str or kind is bool or value is None:
        return True
    if kind is int:
        return bool(-_SAFE_INT <= value <= _SAFE_INT)
    if depth >= _PLAIN_DEPTH:
        return False
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or not key.isascii() or not _plain(item, depth + 1):
                return False
        return True
    if kind is list:
        return all(_plain(item, depth + 1) for item in value)
    return False


def canonical(payload: Any) -> bytes:
    """RFC 8785 canonical JSON bytes; raises PayloadInvalid for values JSON cannot carry."""
    if _plain(payload, 0):
        try:
            return _sorted_json(payload).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: let the library give its verdict
            pass
    try:
        return bytes(rfc8785.dumps(payload))
    except Exception as exc:  # rfc8785 raises several types (domain, type, float errors)
        raise PayloadInvalid(f"payload is not canonical JSON: {exc}") from exc


def digest(payload: Any) -> str:
    """SHA-256 (hex) of the canonical JSON of `payload`."""
    return hashlib.sha256(canonical(payload)).hexdigest()


def program_order(identities: Iterable[str], first_seen: Mapping[str, int]) -> list[str]:
    """Identities in the program's order, the one `frostline show`, the run view and the UI's
    timeline all use: sites in the order the run first reached any of their identities
    (`first_seen`, smaller is earlier), and within a site by path and occurrence, numerically.
    Parallel branches finish in any order; their rows read @0, @1, @2, @3 all the same, and
    branch 10 follows branch 9. A text that does not parse keeps its own first-seen place."""
    parsed: dict[str, Identity | None] = {}
    site_seen: dict[str, int] = {}
    for ident in identities:
        try:
            parsed[ident] = found = Identity.parse(ident)
        except ValueError:
            parsed[ident] = None
            continue
        seen = first_seen.get(ident, 1 << 62)
        site_seen[found.site] = min(seen, site_seen.get(found.site, seen))

    def order(ident: str) -> tuple[int, str, tuple[int, ...], int]:
        i = parsed[ident]
        if i is None:
            return (first_seen.get(ident, 1 << 62), ident, (), 0)
        return (site_seen[i.site], i.site, i.path, i.occurrence)

    return sorted(parsed, key=order)
