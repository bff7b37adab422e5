"""Verifying a certificate against the slots a store holds now: fast by default, deep on demand.

**Fast** (the default): the chain over the link digests the store recorded when it committed
each slot must equal the certificate's chain digest, and every entry of the certificate must
equal what the store recorded for that identity (capability, payload digest, attempt, result
digest, link digest), with nothing missing and nothing extra. No stored result is read or
hashed, so the check costs one SHA-256 of 64 bytes per slot.

**Deep**: every result digest and link digest is recomputed from the stored results and the
certificate is compared with those. A result edited behind the store's back is only visible
here; this is what a periodic audit runs.

A certificate that does not match its own entries is an error (CertificateCorrupted), not a
difference. Version 1 certificates, which carry no link digests, are compared on their four
fields and checked against their own chain.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from frostline.contract.certificate import (
    DOMAIN,
    FIELDS,
    FIELDS_V1,
    SLOT_KEY,
    VERSION,
    build,
    check_chain_of,
    parse_identity,
)

if TYPE_CHECKING:
    from frostline.contract.records import SlotRecord

_H0 = hashlib.sha256(DOMAIN).digest()


def fast_match(certified: Mapping[str, Any], slots: Sequence[SlotRecord]) -> dict[str, str] | None:
    """The frozen-site map when `certified` (version 2) matches the recorded digests and
    fields of `slots` (in (σ, π, ω) order) exactly, else None (then compare in full).

    The hot path of a verify: one pass, local names, no dict built per slot, and the chain
    digest in one SHA-256 call over the joined link digests.
    """
    items = certified["items"]
    n = len(slots)
    if certified["entries"] != n or len(items) != n:
        return None
    frozen: dict[str, str] = {}
    steps_of: dict[tuple[int, ...], str] = {}
    links: list[str] = []
    add, get = links.append, items.get
    try:
        for s in slots:
            edigest = s.entry_digest
            path = s.path
            steps = steps_of.get(path)
            if steps is None:
                steps = steps_of[path] = ".".join(map(str, path))
            c = get(f"{s.site}@{steps}:{s.occurrence}")
            if (c is None or edigest is None or c.get("entry_digest") != edigest
                    or c.get("result_digest") != s.result_digest or c.get("digest") != s.digest
                    or c.get("capability") != s.capability or c.get("attempt") != s.attempt):
                return None
            add(edigest)
            if s.site not in frozen:
                frozen[s.site] = s.capability
        # a link that is not 64 hex digits fails here or shifts the joined bytes' length
        joined = bytes.fromhex("".join(links))
    except (ValueError, TypeError, AttributeError):  # not digests, not objects: the full path
        return None
    if (len(joined) != 32 * n or hashlib.sha256(_H0 + joined).hexdigest()
            != certified["chain_digest"] or frozen != certified["frozen_sites"]):
        return None
    return frozen


def differences(certified: Mapping[str, Any], current: Mapping[str, Any],
                fields: Sequence[str] = FIELDS) -> list[dict[str, Any]]:
    """Entries that differ between a persisted certificate and a freshly built one.

    Each difference is ``{"kind": "changed" | "missing" | "extra", "identity": …}``; a changed
    entry also lists ``fields`` as ``{name: {"certified": …, "store": …}}``. `missing` means
    certified but no longer in the store; `extra` means in the store but not certified (for
    example committed by an attempt that stopped before certifying).
    """
    old: Mapping[str, Mapping[str, Any]] = certified["items"]
    new: Mapping[str, Mapping[str, Any]] = current["items"]
    out: list[dict[str, Any]] = []
    for ident in sorted(set(old) | set(new), key=parse_identity):
        a, b = old.get(ident), new.get(ident)
        if a is None:
            out.append({"kind": "extra", "identity": ident, **_brief(b)})
        elif b is None:
            out.append({"kind": "missing", "identity": ident, **_brief(a)})
        else:
            changed = {k: {"certified": a.get(k), "store": b.get(k)}
                       for k in fields if a.get(k) != b.get(k)}
            if changed:
                out.append({"kind": "changed", "identity": ident, "fields": changed})
    return out


def _brief(fields: Mapping[str, Any] | None) -> dict[str, Any]:
    fields = fields or {}
    return {"capability": fields.get("capability"), "attempt": fields.get("attempt")}


def compare(certified: Mapping[str, Any] | None, slots: Iterable[SlotRecord], run_id: str, *,
            deep: bool = False) -> dict[str, Any]:
    """Compare `certified`, the run's latest stored certificate (None when it has none, in
    which case every slot is an `extra`), with `slots` as the store holds them now.

    Fast by default (the recorded digests); `deep` recomputes every digest from the stored
    results. Returns ``{"consistent", "differences", "entries", "chain_digest",
    "frozen_sites", "certificate", "deep"}``; raises CertificateCorrupted for a stored
    certificate that is not one.
    """
    given = list(slots)
    if certified is not None and not deep and certified["version"] == VERSION:
        # Stores list slots in (σ, π, ω) order already; slots in another order give another
        # chain here and take the full path below, which sorts them.
        frozen = fast_match(certified, given)
        if frozen is not None:
            return {"consistent": True, "differences": [], "entries": len(given),
                    "chain_digest": certified["chain_digest"], "frozen_sites": frozen,
                    "certificate": certified, "deep": False}
    ordered = sorted(given, key=SLOT_KEY)
    attempt = certified["attempt"] if certified is not None else 0
    current = build(ordered, run_id, attempt, deep=deep)
    if certified is None:
        diffs = differences({"items": {}}, current)
    else:
        check_chain_of(dict(certified), run_id)  # a corrupted certificate is an error
        diffs = differences(certified, current,
                            FIELDS if certified["version"] == VERSION else FIELDS_V1)
    return {"consistent": not diffs, "differences": diffs, "entries": current["entries"],
            "chain_digest": current["chain_digest"], "frozen_sites": current["frozen_sites"],
            "certificate": certified, "deep": deep}


__all__ = ["compare", "differences", "fast_match"]
