"""The prefix certificate: a hash chain that says exactly what a run has committed.

After each attempt the host writes a certificate: the frozen-site map (site → capability), a
hash chain over every committed slot, and the entry count. Verification recomputes the chain
from the slots in the store *now* and names every entry that changed, disappeared or appeared
since the latest certificate, so the certificate is a consistency manifest against the store
(a slot edited behind the store's back shows up as a `changed` entry).

The chain, over the slots sorted by (σ, π, ω)::

    h0 = SHA-256(DOMAIN)
    hi = SHA-256(h(i-1) || canonical JSON of {attempt, capability, digest, occurrence, path,
                                              result_digest, site})

where `h(i-1)` is the 32 raw bytes of the previous link and the canonical JSON is RFC 8785
(every field is a string, an integer or a list of integers, for which Python's sorted, compact
JSON is byte-identical to RFC 8785; a test pins this). `result_digest` is the SHA-256 of the
stored result's sorted-key, compact UTF-8 JSON: results come back from the store as decoded
JSON on both backends, so the same stored result always gives the same bytes.

The certificate also keeps each entry's fields (identity → capability, digests, attempt), so a
difference can name the identity and the field, and a certificate whose own chain does not match
its entries is reported as corrupted rather than trusted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any

from frostline.errors import FrostlineError

if TYPE_CHECKING:
    from frostline.contract.records import SlotRecord

VERSION = 1
DOMAIN = b"frostline/prefix-certificate/v1"
_H0 = hashlib.sha256(DOMAIN).digest()
_FIELDS = ("capability", "digest", "result_digest", "attempt")
_REQUIRED = ("version", "run_id", "attempt", "frozen_sites", "chain_digest", "entries", "items")

# The canonical encoders are built once: constructing an encoder per call costs more than
# encoding a small result. `_result_json` is the C encoder with sorted keys, compact separators
# and raw UTF-8; it has no circular-reference check because stored results are decoded JSON.
# (CPython always has the C encoder; json.JSONEncoder.iterencode builds the same one per call.)
_result_json = c_make_encoder(
    None, lambda o: _not_json(o), encode_basestring, None, ":", ",", True, False, False)
# An entry is always these seven fields of these types, so its RFC 8785 form is written
# directly (keys in sorted order); a test pins the equality with an RFC 8785 library.
_ENTRY = ('{"attempt":%d,"capability":%s,"digest":%s,"occurrence":%d,"path":[%s],'
          '"result_digest":%s,"site":%s}')


class CertificateCorrupted(FrostlineError):
    """A stored certificate is not a certificate: wrong type, missing fields, broken chain."""

    code = "certificate_corrupted"


def _not_json(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is not JSON")


def _canonical(value: Any) -> bytes:
    """Sorted-key, compact UTF-8 JSON (RFC 8785 for strings, integers, lists and objects)."""
    return "".join(_result_json(value, 0)).encode("utf-8", "surrogatepass")


def result_digest(result: Any) -> str:
    """SHA-256 (hex) of a stored result's sorted-key, compact JSON."""
    try:
        return hashlib.sha256(_canonical(result)).hexdigest()
    except (TypeError, ValueError, RecursionError) as exc:
        raise CertificateCorrupted(f"a stored result is not JSON: {exc}") from exc


def _entry_bytes(site: str, path: tuple[int, ...] | list[int], occurrence: int,
                 capability: str, digest: str, rdigest: str, attempt: int) -> bytes:
    # One combined type test on the hot path; the detailed message only when it fails.
    if not (type(occurrence) is int and type(attempt) is int and type(site) is str
            and type(capability) is str and type(digest) is str and type(rdigest) is str
            and _all_int(path)):
        raise _entry_type_error(site, path, occurrence, capability, digest, rdigest, attempt)
    text = _ENTRY % (attempt, encode_basestring(capability), encode_basestring(digest),
                     occurrence, ",".join(map(str, path)), encode_basestring(rdigest),
                     encode_basestring(site))
    return text.encode("utf-8", "surrogatepass")


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
    """The chained fields of one slot, as a dict (its canonical JSON is the chained bytes)."""
    return {"site": slot.site, "path": list(slot.path), "occurrence": slot.occurrence,
            "capability": slot.capability, "digest": slot.digest,
            "result_digest": result_digest(slot.result), "attempt": slot.attempt}


def chain_digest(entries: Iterable[Mapping[str, Any]]) -> str:
    """Fold entries (already in (σ, π, ω) order) into the chain; returns the last link in hex."""
    return _fold(_entry_bytes(e["site"], e["path"], e["occurrence"], e["capability"],
                              e["digest"], e["result_digest"], e["attempt"]) for e in entries)


def _fold(lines: Iterable[bytes]) -> str:
    h = _H0
    sha = hashlib.sha256
    for line in lines:
        h = sha(h + line).digest()
    return h.hex()


_SLOT_KEY = attrgetter("site", "path", "occurrence")
_ENTRY_KEY = itemgetter(0, 1, 2)


def build(slots: Iterable[SlotRecord], run_id: str, attempt: int) -> dict[str, Any]:
    """The certificate of a set of slots; the order in which they are given does not matter.

    Example: ``build(store.list_slots(run_id), run_id, attempt=2)["chain_digest"]``
    """
    # This loop is the certificate's hot path (every persist and every verify runs it), so
    # it is written as one pass with local names: each slot's result is encoded and hashed
    # once, its entry line is formatted once and folded straight into the chain. The bytes
    # are those of `entry` + `chain_digest` (a property test holds the two equal).
    ordered = sorted(slots, key=_SLOT_KEY)
    frozen: dict[str, str] = {}
    items: dict[str, dict[str, Any]] = {}
    quoted: dict[str, str] = {}  # sites and capabilities repeat: quote each distinct one once
    sha, encode, dump = hashlib.sha256, encode_basestring, _result_json
    h = _H0
    for s in ordered:
        site, path, occurrence, capability, dig, att = (
            s.site, s.path, s.occurrence, s.capability, s.digest, s.attempt)
        if not (type(occurrence) is int and type(att) is int and type(site) is str
                and type(capability) is str and type(dig) is str and _all_int(path)):
            raise _entry_type_error(site, path, occurrence, capability, dig, "", att)
        try:
            rdigest = sha("".join(dump(s.result, 0)).encode("utf-8", "surrogatepass")).hexdigest()
        except (TypeError, ValueError, RecursionError) as exc:
            raise CertificateCorrupted(f"a stored result is not JSON: {exc}") from exc
        qsite = quoted.get(site)
        if qsite is None:
            qsite = quoted[site] = encode(site)
        qcap = quoted.get(capability)
        if qcap is None:
            qcap = quoted[capability] = encode(capability)
        steps = ",".join(map(str, path)) if path else ""
        # _ENTRY written as an f-string (keys in RFC 8785 order); rdigest is hex, so its
        # quoted form needs no escaping.
        line = (f'{{"attempt":{att},"capability":{qcap},"digest":{encode(dig)},'
                f'"occurrence":{occurrence},"path":[{steps}],"result_digest":"{rdigest}",'
                f'"site":{qsite}}}')
        h = sha(h + line.encode("utf-8", "surrogatepass")).digest()
        if site not in frozen:
            frozen[site] = capability
        items[f"{site}@{steps.replace(',', '.')}:{occurrence}"] = {
            "capability": capability, "digest": dig, "result_digest": rdigest, "attempt": att}
    return {
        "version": VERSION,
        "run_id": run_id,
        "attempt": attempt,
        "frozen_sites": frozen,
        "chain_digest": h.hex(),
        "entries": len(ordered),
        "items": items,
    }


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
        cert = _check_shape(raw, run_id)
        if best is None or cert["attempt"] >= best["attempt"]:
            best = cert
    if best is not None and check_chain:
        _check_chain(best, run_id)
    return best


def validate(cert: Any, run_id: str | None = None) -> dict[str, Any]:
    """Check that `cert` is a well-formed certificate whose chain matches its own entries.

    Raises CertificateCorrupted naming what is wrong; returns the certificate.
    """
    return _check_chain(_check_shape(cert, run_id), run_id)


def _corrupted(run_id: str | None, why: str) -> CertificateCorrupted:
    return CertificateCorrupted(
        f"the stored certificate of run {run_id!r} is corrupted: {why}; recompute it with "
        "`frostline cert RUN_ID` and compare against the slots before trusting this run",
        run_id=run_id)


def _check_shape(cert: Any, run_id: str | None) -> dict[str, Any]:
    """The cheap checks: type, fields, version, owner."""
    if not isinstance(cert, Mapping):
        raise _corrupted(run_id, f"expected a JSON object, found {type(cert).__name__}")
    missing = [k for k in _REQUIRED if k not in cert]
    if missing:
        raise _corrupted(run_id, f"missing field(s) {', '.join(missing)}")
    if cert["version"] != VERSION:
        raise _corrupted(run_id, f"unknown version {cert['version']!r}")
    if run_id is not None and cert["run_id"] != run_id:
        raise _corrupted(run_id, f"it belongs to run {cert['run_id']!r}")
    if not isinstance(cert["items"], Mapping) or type(cert["entries"]) is not int:
        raise _corrupted(run_id, "'items' must be an object and 'entries' an integer")
    if type(cert["attempt"]) is not int or not isinstance(cert["frozen_sites"], Mapping):
        raise _corrupted(run_id, "'attempt' must be an integer and 'frozen_sites' an object")
    return dict(cert)


def _check_chain(cert: dict[str, Any], run_id: str | None) -> dict[str, Any]:
    """The full check: the entries rebuild the chain digest, the count and the site map."""
    try:
        rows = _rows_from_items(cert["items"])
        chain = _fold_rows(rows)
    except (TypeError, ValueError, KeyError, CertificateCorrupted) as exc:
        raise _corrupted(run_id, f"malformed entry ({exc})") from None
    if len(rows) != cert["entries"]:
        raise _corrupted(run_id, f"it counts {cert['entries']} entries but lists {len(rows)}")
    if chain != cert["chain_digest"]:
        raise _corrupted(run_id, "its chain digest does not match its own entries")
    frozen: dict[str, str] = {}
    for row in rows:
        frozen.setdefault(row[0], row[3])
    if frozen != dict(cert["frozen_sites"]):
        raise _corrupted(run_id, "its frozen-site map does not match its own entries")
    return cert


def _fold_rows(rows: Iterable[tuple[Any, ...]]) -> str:
    """`chain_digest` of (σ, π, ω, capability, digest, result_digest, attempt) rows, inlined.

    Same bytes as `_entry_bytes` per row (a property test holds them equal); every field comes
    from the certificate under check, so every string is escaped and every type is checked.
    """
    sha, encode = hashlib.sha256, encode_basestring
    h = _H0
    for site, path, occurrence, capability, dig, rdigest, att in rows:
        if not (type(occurrence) is int and type(att) is int and type(site) is str
                and type(capability) is str and type(dig) is str and type(rdigest) is str
                and _all_int(path)):
            raise _entry_type_error(site, path, occurrence, capability, dig, rdigest, att)
        steps = ",".join(map(str, path)) if path else ""
        line = (f'{{"attempt":{att},"capability":{encode(capability)},"digest":{encode(dig)},'
                f'"occurrence":{occurrence},"path":[{steps}],'
                f'"result_digest":{encode(rdigest)},"site":{encode(site)}}}')
        h = sha(h + line.encode("utf-8", "surrogatepass")).digest()
    return h.hex()


def _rows_from_items(items: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """(σ, π, ω, capability, digest, result_digest, attempt) of each item, in (σ, π, ω) order."""
    rows = []
    for text, fields in items.items():
        site, path, occurrence = _parse_identity(text)
        if not isinstance(fields, Mapping):
            raise TypeError(f"entry {text} is not an object")
        rows.append((site, path, occurrence, fields["capability"], fields["digest"],
                     fields["result_digest"], fields["attempt"]))
    rows.sort(key=_ENTRY_KEY)  # stable, on (σ, π, ω) only, as the chain is defined
    return rows


def _parse_identity(text: str) -> tuple[str, tuple[int, ...], int]:
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


def differences(certified: Mapping[str, Any], current: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Entries that differ between a persisted certificate and a freshly built one.

    Each difference is ``{"kind": "changed" | "missing" | "extra", "identity": …}``; a changed
    entry also lists ``fields`` as ``{name: {"certified": …, "store": …}}``. `missing` means
    certified but no longer in the store; `extra` means in the store but not certified (for
    example committed by an attempt that stopped before certifying).
    """
    old: Mapping[str, Mapping[str, Any]] = certified["items"]
    new: Mapping[str, Mapping[str, Any]] = current["items"]
    out: list[dict[str, Any]] = []
    for ident in sorted(set(old) | set(new), key=_order_key):
        a, b = old.get(ident), new.get(ident)
        if a is None:
            out.append({"kind": "extra", "identity": ident, **_brief(b)})
        elif b is None:
            out.append({"kind": "missing", "identity": ident, **_brief(a)})
        else:
            changed = {k: {"certified": a.get(k), "store": b.get(k)}
                       for k in _FIELDS if a.get(k) != b.get(k)}
            if changed:
                out.append({"kind": "changed", "identity": ident, "fields": changed})
    return out


def _brief(fields: Mapping[str, Any] | None) -> dict[str, Any]:
    fields = fields or {}
    return {"capability": fields.get("capability"), "attempt": fields.get("attempt")}


def _order_key(text: str) -> tuple[str, tuple[int, ...], int]:
    return _parse_identity(text)


def compare(certified: Mapping[str, Any] | None, slots: Iterable[SlotRecord],
            run_id: str) -> dict[str, Any]:
    """Recompute the certificate from `slots` and compare it with `certified`, the run's latest
    stored certificate (None when it has none, in which case every slot is an `extra`).

    Returns ``{"consistent", "differences", "entries", "chain_digest", "frozen_sites",
    "certificate"}``. Raises CertificateCorrupted for a stored certificate that is not one.
    """
    attempt = certified["attempt"] if certified is not None else 0
    current = build(slots, run_id, attempt)
    if certified is None:
        diffs = differences({"items": {}}, current)
    elif (certified["items"] == current["items"] and certified["entries"] == current["entries"]
          and certified["chain_digest"] == current["chain_digest"]
          and certified["frozen_sites"] == current["frozen_sites"]):
        # Equal entries and an equal chain: the certificate matches its own entries too (the
        # chain is a function of the entries), so the full chain check would only repeat this.
        diffs = []
    else:
        _check_chain(dict(certified), run_id)  # a corrupted certificate is an error, not a diff
        diffs = differences(certified, current)
    consistent = not diffs and (certified is None
                                or certified["chain_digest"] == current["chain_digest"])
    return {
        "consistent": consistent,
        "differences": diffs,
        "entries": current["entries"],
        "chain_digest": current["chain_digest"],
        "frozen_sites": current["frozen_sites"],
        "certificate": certified,
    }


__all__ = ["DOMAIN", "CertificateCorrupted", "build", "chain_digest", "compare", "differences",
           "entry", "latest_of", "result_digest", "validate"]
