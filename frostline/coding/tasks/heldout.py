"""The sealed held-out packages: pinned by name, sealed by hash, before any task of them existed.

These packages were never pinned before, and no task of either population (injected mutants,
released bugs) had been built from them when this list and its hash were committed. Every other
pinned package is tuning: the packages of the earlier held-out split (cachetools, humanize,
semver, tabulate) have been read for failures, so they joined the tuning split.

`HELDOUT_SHA256` is the SHA-256 of the canonical JSON of `HELDOUT` (see `split.digest`); the
build refuses a list that no longer hashes to it, so the split cannot be edited after tasks
from it have been seen without the change showing.
"""

from __future__ import annotations

__all__ = ["HELDOUT", "HELDOUT_SHA256"]

HELDOUT: tuple[str, ...] = ("asttokens", "decorator", "mccabe", "more-itertools", "pyflakes",
                            "xmltodict")
HELDOUT_SHA256 = "e5cb21d78493a0fca30fe28f568a65ef3a13477dda3a3133f040c9adaec6d9e3"
