"""The domain model: what a run has done, as frozen records.

A run, its attempts, its committed slots (the frozen prefix), its dispatch records and its audit
events. The contract reasons over these records and the store persists them; both backends of
the store return exactly these shapes, so nothing above the store knows which backend it reads.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar, cast

from frostline.contract.identity import Identity, Path
from frostline.errors import DefinitionError

T = TypeVar("T")


class CallStatus(StrEnum):
    """Lifecycle of one dispatch of one identity (the durable attempt record)."""

    PENDING = "pending"        # written before dispatch; no outcome yet
    FAILED = "failed"          # the provider returned an error; nothing committed
    COMMITTED = "committed"    # the result is in a slot
    ABANDONED = "abandoned"    # an operator gave up on a pending call; one re-execution allowed
    RECONCILED = "reconciled"  # an operator wrote back the known result


# The principal of runs created on this host without one (the command line, the demo).
LOCAL_PRINCIPAL = "local"

# A run's name: one rule for every surface that creates a run (the CLI, the HTTP API, the MCP
# server, the store). It fits in a URL path segment and a file name as it is.
RUN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$"
_RUN_NAME = re.compile(RUN_NAME_PATTERN)


def check_run_name(name: object) -> str:
    """`name` if it is a valid run name, else DefinitionError saying what one looks like."""
    if not isinstance(name, str) or not _RUN_NAME.fullmatch(name):
        shown = repr(name) if not isinstance(name, str) or len(name) <= 60 else \
            f"{name[:40]!r}… ({len(name)} characters)"
        raise DefinitionError(f"run id {shown} is not valid: use 1-128 letters, digits, '.', "
                              "'_' or '-', starting with a letter or digit (e.g. "
                              "'brand-2024-01')", run_id=name if isinstance(name, str) else None)
    return name


def run_key(owner: str | None, name: str) -> str:
    """The store key of the run `name` of `owner`: run names are unique per principal.

    The local principal's runs keep their name as their key (so every store written before
    names were scoped reads the same); another principal's key is ``@owner/name``, which no
    local name can equal (a new name never starts with ``@``, a principal never contains ``/``).
    """
    return name if owner in (None, LOCAL_PRINCIPAL) else f"@{owner}/{name}"


def owner_view(run: RunRecord, payload: T) -> T:
    """`payload` as the owner of `run` sees it: the run's store key (``@owner/name`` for a
    principal's run) is shown as the run's name wherever a `run_id` field holds it."""
    return key_as_name(run.run_id, run.name, payload)


def key_as_name(key: str, name: str, payload: T) -> T:
    """`payload` with every `run_id` field that holds the store key `key` showing `name`."""
    if key == name:
        return payload

    def shown(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (name if k == "run_id" and v == key else shown(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [shown(v) for v in value]
        return value

    return cast(T, shown(payload))


@dataclass(frozen=True)
class RunRecord:
    """A run. `run_id` is the store's key (what every other record refers to); `name` is the
    id its owner gave it, unique among that owner's runs."""

    run_id: str
    envelope: dict[str, Any]
    status: str
    owner: str | None
    kind: str  # "script" or "graph"
    created_at: float
    name: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.run_id)


@dataclass(frozen=True)
class AttemptRecord:
    run_id: str
    number: int  # 1-based, in creation order
    source: str
    source_digest: str
    annotated: str
    report: dict[str, Any]
    status: str  # running | succeeded | failed | diverged | gate_stopped | unresolved | rejected
    gate: dict[str, Any] | None = None
    invoked: tuple[str, ...] = ()  # identity texts in invocation order
    orphans: tuple[str, ...] = ()
    result: Any = None
    error: dict[str, Any] | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    started_at: float = 0.0
    finished_at: float | None = None
    args: Any = None  # the JSON args the attempt ran with (None: unknown or not given)
    catalog_digest: str | None = None  # the catalog it ran under (None: not recorded)


@dataclass(frozen=True)
class SlotRecord:
    """A committed identity: the unit of the frozen prefix. Never deleted, never overwritten."""

    run_id: str
    site: str
    path: Path
    occurrence: int
    capability: str
    digest: str
    result: Any
    usage: dict[str, Any]
    attempt: int
    committed_at: float = 0.0
    # What the store recorded when it committed the slot (None for a slot committed before
    # stores recorded them, or one not read from a store): the SHA-256 of the result's
    # canonical JSON, and of the slot's certificate entry (frostline.contract.certificate).
    # They derive from the fields above, so they take no part in equality.
    result_digest: str | None = field(default=None, compare=False)
    entry_digest: str | None = field(default=None, compare=False)

    @functools.cached_property
    def identity(self) -> Identity:  # cached: a replayed prefix asks for it several times
        return Identity(self.site, self.path, self.occurrence)


@dataclass(frozen=True)
class CallRecord:
    call_id: int
    run_id: str
    site: str
    path: Path
    occurrence: int
    capability: str
    digest: str
    attempt: int
    status: CallStatus
    idempotency_key: str | None = None
    error: dict[str, Any] | None = None
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def identity(self) -> Identity:
        return Identity(self.site, self.path, self.occurrence)


@dataclass(frozen=True)
class Event:
    seq: int
    run_id: str
    ts: float
    kind: str
    data: dict[str, Any]
