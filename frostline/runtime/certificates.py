"""Certificates kept in the store: write one after an attempt, read the latest, verify.

The certificate's logic (frostline.contract.certificate) takes records and returns records; this
module is the side that holds the store.
"""

from __future__ import annotations

from typing import Any

from frostline.contract.certificate import build, compare, latest_of
from frostline.errors import RunNotFound
from frostline.store.base import Store


def _known(store: Store, run_id: str) -> None:
    if store.get_run(run_id) is None:
        raise RunNotFound(f"no run {run_id!r} in the store; list runs with `frostline runs`",
                          run_id=run_id)


def current(store: Store, run_id: str, attempt: int) -> dict[str, Any]:
    """The certificate of the run's current slots for `attempt`, not written (see `persist`)."""
    _known(store, run_id)
    return build(store.list_slots(run_id), run_id, attempt)


def persist(store: Store, run_id: str, attempt: int) -> dict[str, Any]:
    """Build the certificate of the run's current slots and write it for `attempt`."""
    cert = current(store, run_id, attempt)
    store.put_certificate(run_id, attempt, cert)
    return cert


def latest(store: Store, run_id: str, *, check_chain: bool = True) -> dict[str, Any] | None:
    """The run's most recent stored certificate, or None (see `latest_of`)."""
    return latest_of(store.list_certificates(run_id), run_id, check_chain=check_chain)


def verify(store: Store, run_id: str) -> dict[str, Any]:
    """Recompute the certificate from the store and compare it with the latest stored one.

    Example: ``verify(store, "r1")["consistent"]``

    Raises RunNotFound for an unknown run and CertificateCorrupted for a stored certificate
    that is not one.
    """
    _known(store, run_id)
    return compare(latest(store, run_id, check_chain=False), store.list_slots(run_id), run_id)
