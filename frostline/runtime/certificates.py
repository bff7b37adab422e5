"""Certificates kept in the store: write one after an attempt, read the latest, verify.

The certificate's logic (frostline.contract.certificate and certificate_verify) takes records
and returns records; this module is the side that holds the store.
"""

from __future__ import annotations

from typing import Any

from frostline.contract.certificate import build, check_chain_of, check_shape, with_rebinding
from frostline.contract.certificate_verify import compare
from frostline.errors import RunNotFound
from frostline.store.base import Store


def _known(store: Store, run_id: str) -> None:
    if store.get_run(run_id) is None:
        raise RunNotFound(f"no run {run_id!r} in the store; list runs with `frostline runs`",
                          run_id=run_id)


def current(store: Store, run_id: str, attempt: int) -> dict[str, Any]:
    """The certificate of the run's current slots for `attempt`, not written (see `persist`)."""
    _known(store, run_id)
    return with_rebinding(build(store.list_slot_digests(run_id), run_id, attempt),
                          store.list_rebindings(run_id, attempt))


def persist(store: Store, run_id: str, attempt: int) -> dict[str, Any]:
    """Build the certificate of the run's current slots and write it for `attempt`. Each
    entry carries the digests the store recorded when it committed the slot."""
    cert = current(store, run_id, attempt)
    store.put_certificate(run_id, attempt, cert)
    return cert


def latest(store: Store, run_id: str, *, check_chain: bool = True) -> dict[str, Any] | None:
    """The run's most recent stored certificate (highest attempt, the last written of that
    attempt), or None; fetched alone. With `check_chain` it must match its own entries.
    Raises CertificateCorrupted for a stored certificate that is not one."""
    raw = store.latest_certificate(run_id)
    if raw is None:
        return None
    cert = check_shape(raw, run_id)
    return check_chain_of(cert, run_id) if check_chain else cert


def verify(store: Store, run_id: str, *, deep: bool = False) -> dict[str, Any]:
    """Compare the latest stored certificate with the store (see certificate_verify.compare):
    fast by default, against the digests recorded at commit time; `deep` recomputes every
    digest from the stored results.

    Example: ``verify(store, "r1")["consistent"]``; ``verify(store, "r1", deep=True)``

    Raises RunNotFound for an unknown run and CertificateCorrupted for a stored certificate
    that is not one.
    """
    _known(store, run_id)
    slots = store.list_slots(run_id) if deep else store.list_slot_digests(run_id)
    cert = latest(store, run_id, check_chain=False)
    out = compare(cert, slots, run_id, deep=deep)
    if cert is not None:  # the rebinding it certifies (issue 30) against the store's
        certified = cert.get("rebinding") or []
        if certified or "rebinding_digest" in cert:
            check_chain_of(dict(cert), run_id)  # its rebinding digest must hold
        stored = [{"identity": r["identity"], "bound_to": r["bound_to"]}
                  for r in store.list_rebindings(run_id, cert["attempt"])]
        if sorted(certified, key=str) != sorted(stored, key=str):
            out["differences"] = [*out["differences"], {
                "kind": "rebinding_changed", "attempt": cert["attempt"],
                "certified": certified, "store": stored}]
            out["consistent"] = False
    return out
