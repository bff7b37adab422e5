"""The prefix certificate: a hash chain that says exactly what a run has committed.

After each attempt the host writes a certificate: the frozen-site map (site → capability), a
hash chain over every committed slot, and the entry count. Verification compares it with the
slots in the store *now* and names every entry that changed, disappeared or appeared since
(frostline.contract.certificate_verify), so the certificate is a consistency manifest against
the store.

Each slot is one **entry**, the RFC 8785 canonical JSON of::

    {attempt, capability, digest, occurrence, path, result_digest, site}

(every field is a string, an integer or a list of integers, for which Python's sorted, compact
JSON is byte-identical to RFC 8785; a test pins this). `result_digest` is the SHA-256 of the
stored result's sorted-key, compact UTF-8 JSON: results come back from the store as decoded
JSON on both backends, so the same stored result always gives the same bytes. The entry's own
SHA-256 is its **link digest**, and the chain digest, over the slots sorted by (σ, π, ω), is::

    chain = SHA-256(SHA-256(DOMAIN) || link 1 || link 2 || ... || link n)   (32 raw bytes each)

SHA-256 itself chains the 64-byte blocks of its input (each compression takes the previous
chaining value), so this is a hash chain over the links, two to a block, taken in one call: a
link changed, dropped, added or moved changes it, and fixed-width links cannot be re-parsed
into another sequence. Version 1 made one SHA-256 call per link instead (h_i = SHA-256(h_{i-1}
|| entry)); at 200 slots those calls alone cost more than the whole fast check does now.

The store records a slot's result digest and link digest when it commits the slot. That makes
two checks of different cost: the **fast** one folds the recorded link digests and compares
every entry with what the store recorded (no result is read or hashed); the **deep** one
recomputes every result digest and link digest from the stored results as well, which is what
a periodic audit runs.

The certificate keeps each entry's fields and link digest (identity → capability, digests,
attempt), so a difference can name the identity and the field, and a certificate whose chain or
link digests do not match its own entries is reported as corrupted rather than trusted.
Version 1 certificates (written before link digests, chained over the entries' bytes directly)
are still read and checked by their own definition.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from frostline.errors import (
    CertificateCorrupted as CertificateCorrupted,
)

if TYPE_CHECKING:
    from frostline.contract.records import SlotRecord

VERSION = 2
VERSIONS = (1, 2)
DOMAIN = b"frostline/prefix-certificate/v2"
DOMAIN_V1 = b"frostline/prefix-certificate/v1"
_H0 = hashlib.sha256(DOMAIN).digest()
_H0_V1 = hashlib.sha256(DOMAIN_V1).digest()
FIELDS = ("capability", "digest", "result_digest", "attempt", "entry_digest")
FIELDS_V1 = FIELDS[:4]
_REQUIRED = ("version", "run_id", "attempt", "frozen_sites", "chain_digest", "entries", "items")

# The canonical encoders are built once: constructing an encoder per call costs more than
# encoding a small result. `_result_json` is the C encoder with sorted keys, compact separators
# and raw UTF-8; it has no circular-reference check because stored results are decoded JSON.
# (CPython always has the C encoder; json.JSONEncoder.iterencode builds the same one per call.)
_result_json = c_make_encoder(
    None, lambda o: _not_json(o), encode_basestring, None, ":", ",", True, False, False)


def _not_json(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def canonical(value: Any) -> bytes:
    """Sorted-key, compact UTF-8 JSON (RFC 8785 for strings, integers, lists and objects)."""
    return "".join(_result_json(value, 0)).encode("utf-8", "surrogatepass")


def result_digest(result: Any) -> str:
    """SHA-256 (hex) of a stored result's sorted-key, compact JSON."""
    try:
        return hashlib.sha256(canonical(result)).hexdigest()
    except (TypeError, ValueError, RecursionError) as exc:
        raise CertificateCorrupted(f"a stored result is not JSON: {exc}") from exc


def entry_bytes(site: str, path: tuple[int, ...] | list[int], occurrence: int,
                capability: str, digest: str, rdigest: str, attempt: int) -> bytes:
    """The canonical JSON of one entry; CertificateCorrupted when a field has the wrong type."""
    # One combined type test on the hot path; the detailed message only when it fails.
    if not (type(occurrence) is int and type(attempt) is int and type(site) is str
            and type(capability) is str and type(digest) is str and type(rdigest) is str
            and _all_int(path)):
        raise _entry_type_error(site, path, occurrence, capability, digest, rdigest, attempt)
    steps = ",".join(map(str, path)) if path else ""
    return (f'{{"attempt":{attempt},"capability":{encode_basestring(capability)},'
            f'"digest":{encode_basestring(digest)},"occurrence":{occurrence},"path":[{steps}],'
            f'"result_digest":{encode_basestring(rdigest)},"site":{encode_basestring(site)}}}'
            ).encode("utf-8", "surrogatepass")


def entry_digest(site: str, path: tuple[int, ...] | list[int], occurrence: int,
                 capability: str, digest: str, rdigest: str, attempt: int) -> str:
    """The link digest of one entry: SHA-256 (hex) of its canonical JSON."""
    return hashlib.sha256(entry_bytes(site, path, occurrence, capability, digest, rdigest,
                                      attempt)).hexdigest()


def slot_digests(slot: SlotRecord, *, deep: bool = False) -> tuple[str, str]:
    """(result digest, link digest) of a slot: those the store recorded at commit time, or,
    with `deep` (or when it recorded none), recomputed from the stored result."""
    if not deep and slot.entry_digest is not None and slot.result_digest is not None:
        return slot.result_digest, slot.entry_digest
    rdigest = result_digest(slot.result)
    return rdigest, entry_digest(slot.site, slot.path, slot.occurrence, slot.capability,
                                 slot.digest, rdigest, slot.attempt)


def _entry_type_error(site: Any, path: Any, occurrence: Any, capability: Any, digest: Any,
                      rdigest: Any, attempt: Any) -> CertificateCorrupted:
    for name, value in (("occurrence", occurrence), ("attempt", attempt)):
        if type(value) is not int:
            return CertificateCorrupted(f"entry {site}: {name} must be an integer, got {value!r}")
    for name, value in (("site", site), ("capability", capability), ("digest", digest),
                        ("result_digest", rdigest)):
        if type(value) is not str:
            return CertificateCorrupted(f"entry {site}: {name} must be a string, got {value!r}")
    return CertificateCorrupted(f"entry {site}: path must be integers, got {path!r}")


def entry(slot: SlotRecord) -> dict[str, Any]:
    """The chained fields of one slot, as a dict (its canonical JSON is the entry's bytes)."""
    return {"site": slot.site, "path": list(slot.path), "occurrence": slot.occurrence,
            "capability": slot.capability, "digest": slot.digest,
            "result_digest": result_digest(slot.result), "attempt": slot.attempt}


def link(digest_hex: Any) -> bytes:
    """The 32 raw bytes a link digest contributes to the chain. A value that is not a SHA-256
    hex digest (a store or certificate edited behind frostline's back) contributes the hash of
    its text instead, so the chain is still defined and cannot match an honest one."""
    if type(digest_hex) is str and len(digest_hex) == 64:
        try:
            return bytes.fromhex(digest_hex)
        except ValueError:
            pass
    return hashlib.sha256(repr(digest_hex).encode("utf-8", "surrogatepass")).digest()


def fold(links: Iterable[Any]) -> str:
    """The chain digest (hex) over link digests (hex) already in (σ, π, ω) order."""
    return hashlib.sha256(_H0 + b"".join(map(link, links))).hexdigest()


def chain_digest(entries: Iterable[Mapping[str, Any]]) -> str:
    """The chain over entries (dicts of `entry`'s shape) already in (σ, π, ω) order."""
    return fold(entry_digest(e["site"], e["path"], e["occurrence"], e["capability"],
                             e["digest"], e["result_digest"], e["attempt"]) for e in entries)


SLOT_KEY = attrgetter("site", "path", "occurrence")
_ROW_KEY = itemgetter(0, 1, 2)


def identity_text(site: str, path: tuple[int, ...], occurrence: int) -> str:
    """`str(Identity(site, path, occurrence))` without building an Identity."""
    return f"{site}@{'.'.join(map(str, path))}:{occurrence}"


def build(slots: Iterable[SlotRecord], run_id: str, attempt: int, *,
          deep: bool = False) -> dict[str, Any]:
    """The certificate of a set of slots; the order in which they are given does not matter.

    Each slot's digests are the ones the store recorded at commit time (`slot_digests`), or
    with `deep` recomputed from its result. Example:
    ``build(store.list_slots(run_id), run_id, attempt=2)["chain_digest"]``
    """
    ordered = sorted(slots, key=SLOT_KEY)
    frozen: dict[str, str] = {}
    items: dict[str, dict[str, Any]] = {}
    links: list[bytes] = []
    for s in ordered:
        if not (type(s.occurrence) is int and type(s.attempt) is int and type(s.site) is str
                and type(s.capability) is str and type(s.digest) is str and _all_int(s.path)):
            raise _entry_type_error(s.site, s.path, s.occurrence, s.capability, s.digest, "",
                                    s.attempt)
        rdigest, edigest = slot_digests(s, deep=deep)
        links.append(link(edigest))
        frozen.setdefault(s.site, s.capability)
        items[identity_text(s.site, s.path, s.occurrence)] = {
            "capability": s.capability, "digest": s.digest, "result_digest": rdigest,
            "attempt": s.attempt, "entry_digest": edigest}
    return {"version": VERSION, "run_id": run_id, "attempt": attempt, "frozen_sites": frozen,
            "chain_digest": hashlib.sha256(_H0 + b"".join(links)).hexdigest(),
            "entries": len(ordered), "items": items}


REBINDING_DOMAIN = b"frostline/rebinding/v1"


def rebinding_digest(chain_digest: str, rows: Iterable[Mapping[str, Any]]) -> str:
    """The digest that binds an attempt's rebinding (rows of {identity, bound_to}, issue 30)
    to the chain it was certified with: SHA-256 over a domain, the chain digest and the rows'
    canonical JSON in identity order."""
    body = [{"bound_to": r["bound_to"], "identity": r["identity"]}
            for r in sorted(rows, key=itemgetter("identity"))]
    return hashlib.sha256(REBINDING_DOMAIN + chain_digest.encode("ascii")
                          + canonical(body)).hexdigest()


def with_rebinding(cert: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """`cert` covering the rebinding its attempt ran with (unchanged when there is none)."""
    if not rows:
        return cert
    body = [{"identity": r["identity"], "bound_to": r["bound_to"]}
            for r in sorted(rows, key=itemgetter("identity"))]
    return {**cert, "rebinding": body,
            "rebinding_digest": rebinding_digest(cert["chain_digest"], body)}


def _check_rebinding(cert: Mapping[str, Any], run_id: str | None) -> None:
    """A certified rebinding must match its digest and point only at certified entries."""
    rows = cert.get("rebinding")
    if not isinstance(rows, list):
        raise corrupted(run_id, "its rebinding is not a list")
    try:
        ok = rebinding_digest(cert["chain_digest"], rows) == cert.get("rebinding_digest")
        targets = {r["bound_to"] for r in rows}
    except (TypeError, KeyError, AttributeError, UnicodeEncodeError):
        raise corrupted(run_id, "its rebinding is malformed") from None
    if not ok:
        raise corrupted(run_id, "its rebinding digest does not match its rebinding")
    unknown = sorted(targets - set(cert["items"]))
    if unknown:
        raise corrupted(run_id, f"its rebinding points at {unknown[0]}, which it does not "
                        "certify as committed")


def _all_int(path: Iterable[Any]) -> bool:
    for i in path:  # noqa: SIM110 -- a plain loop is cheaper than all() over a generator
        if type(i) is not int:
            return False
    return True


def latest_of(stored: Iterable[Any], run_id: str, *,
              check_chain: bool = True) -> dict[str, Any] | None:
    """The most recent of a run's stored certificates (highest attempt), or None.

    Every stored certificate must be well formed; with `check_chain` the chosen one must also
    match its own entries. Raises CertificateCorrupted otherwise.
    """
    best: dict[str, Any] | None = None
    for raw in stored:
        cert = check_shape(raw, run_id)
        if best is None or cert["attempt"] >= best["attempt"]:
            best = cert
    if best is not None and check_chain:
        check_chain_of(best, run_id)
    return best


def validate(cert: Any, run_id: str | None = None) -> dict[str, Any]:
    """Check that `cert` is a well-formed certificate whose chain matches its own entries.

    Raises CertificateCorrupted naming what is wrong; returns the certificate.
    """
    return check_chain_of(check_shape(cert, run_id), run_id)


def corrupted(run_id: str | None, why: str) -> CertificateCorrupted:
    return CertificateCorrupted(
        f"the stored certificate of run {run_id!r} is corrupted: {why}; recompute it with "
        "`frostline cert RUN_ID --deep` and compare against the slots before trusting this run",
        run_id=run_id)


def check_shape(cert: Any, run_id: str | None) -> dict[str, Any]:
    """The cheap checks: type, fields, version, owner."""
    if not isinstance(cert, Mapping):
        raise corrupted(run_id, f"expected a JSON object, found {type(cert).__name__}")
    missing = [k for k in _REQUIRED if k not in cert]
    if missing:
        raise corrupted(run_id, f"missing field(s) {', '.join(missing)}")
    if cert["version"] not in VERSIONS or type(cert["version"]) is not int:
        raise corrupted(run_id, f"unknown version {cert['version']!r}")
    if run_id is not None and cert["run_id"] != run_id:
        raise corrupted(run_id, f"it belongs to run {cert['run_id']!r}")
    if not isinstance(cert["items"], Mapping) or type(cert["entries"]) is not int:
        raise corrupted(run_id, "'items' must be an object and 'entries' an integer")
    if type(cert["attempt"]) is not int or not isinstance(cert["frozen_sites"], Mapping):
        raise corrupted(run_id, "'attempt' must be an integer and 'frozen_sites' an object")
    return dict(cert)


def check_chain_of(cert: dict[str, Any], run_id: str | None) -> dict[str, Any]:
    """The full check: every entry's link digest matches its fields (version 2), the entries
    rebuild the chain digest, the count and the site map."""
    try:
        rows = _rows_from_items(cert["items"], cert["version"])
        if cert["version"] == 1:
            chain = _fold_rows_v1(rows)
        else:
            unlinked = [r for r in rows if entry_digest(*r[:7]) != r[7]]
            chain = fold(row[7] for row in rows)
    except (TypeError, ValueError, KeyError, CertificateCorrupted) as exc:
        raise corrupted(run_id, f"malformed entry ({exc})") from None
    if cert["version"] != 1 and unlinked:
        raise corrupted(run_id, f"the link digest of entry {identity_text(*unlinked[0][:3])} "
                        "does not match its own fields")
    if len(rows) != cert["entries"]:
        raise corrupted(run_id, f"it counts {cert['entries']} entries but lists {len(rows)}")
    if chain != cert["chain_digest"]:
        raise corrupted(run_id, "its chain digest does not match its own entries")
    frozen: dict[str, str] = {}
    for row in rows:
        frozen.setdefault(row[0], row[3])
    if frozen != dict(cert["frozen_sites"]):
        raise corrupted(run_id, "its frozen-site map does not match its own entries")
    if "rebinding" in cert or "rebinding_digest" in cert:
        _check_rebinding(cert, run_id)
    return cert


def _fold_rows_v1(rows: Iterable[tuple[Any, ...]]) -> str:
    """A version 1 chain: each link hashes the previous one and the entry's bytes."""
    sha = hashlib.sha256
    h = _H0_V1
    for row in rows:
        h = sha(h + entry_bytes(*row[:7])).digest()
    return h.hex()


def _rows_from_items(items: Mapping[str, Any], version: int) -> list[tuple[Any, ...]]:
    """(σ, π, ω, capability, digest, result_digest, attempt[, entry_digest]) of each item, in
    (σ, π, ω) order."""
    rows = []
    for text, fields in items.items():
        site, path, occurrence = parse_identity(text)
        if not isinstance(fields, Mapping):
            raise TypeError(f"entry {text} is not an object")
        row = (site, path, occurrence, fields["capability"], fields["digest"],
               fields["result_digest"], fields["attempt"])
        rows.append(row if version == 1 else (*row, fields["entry_digest"]))
    rows.sort(key=_ROW_KEY)  # stable, on (σ, π, ω) only, as the chain is defined
    return rows


def parse_identity(text: str) -> tuple[str, tuple[int, ...], int]:
    """`Identity.parse(text).key` without building an Identity (same checks, same errors)."""
    try:
        rest, occ = text.rsplit(":", 1)
        site, path = rest.rsplit("@", 1)
        steps = tuple(map(int, path.split("."))) if path else ()
        occurrence = int(occ)
    except ValueError:
        raise ValueError(
            f"malformed identity {text!r}; expected SITE@PATH:OCCURRENCE, e.g. orchestrate/#0@:0"
        ) from None
    if not site or occurrence < 0 or (steps and min(steps) < 0):
        raise ValueError(f"malformed identity {text!r}")
    return site, steps, occurrence


__all__ = ["DOMAIN", "DOMAIN_V1", "FIELDS", "FIELDS_V1", "SLOT_KEY", "VERSION", "VERSIONS",
           "CertificateCorrupted", "build", "canonical", "chain_digest", "check_chain_of",
           "check_shape", "corrupted", "entry", "entry_bytes", "entry_digest", "fold",
           "identity_text", "latest_of", "link", "parse_identity", "result_digest",
           "slot_digests", "validate"]
