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

from frostline.coding.tasks.errors import TaskSetError
from frostline.coding.tasks.split import digest

__all__ = ["HELDOUT", "HELDOUT_SHA256", "RULE", "sealed_heldout"]

HELDOUT: tuple[str, ...] = ("asttokens", "decorator", "mccabe", "more-itertools", "pyflakes",
                            "xmltodict")
RULE = ("the packages of frostline.coding.tasks.heldout.HELDOUT, pinned as held out and sealed "
        "by their hash before any task of them was built")
HELDOUT_SHA256 = "e5cb21d78493a0fca30fe28f568a65ef3a13477dda3a3133f040c9adaec6d9e3"


def sealed_heldout() -> tuple[str, ...]:
    """`HELDOUT`, after checking it still hashes to `HELDOUT_SHA256`.

    Raises:
        TaskSetError: the list was edited after it was sealed.
    """
    got = digest(list(HELDOUT))
    if got != HELDOUT_SHA256:
        raise TaskSetError(f"the held-out packages {list(HELDOUT)} hash to {got}, not the sealed "
                           f"{HELDOUT_SHA256}: the sealed split was edited; restore "
                           "frostline/coding/tasks/heldout.py", expected=HELDOUT_SHA256, got=got)
    return HELDOUT
