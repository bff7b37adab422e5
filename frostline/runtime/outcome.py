"""What one attempt did (`AttemptOutcome`), and the exit code each outcome has on the command
line: the record `execute` returns and every surface (CLI, HTTP API, repair loop) prints.

`frostline.runtime.execute` re-exports `AttemptOutcome`, where callers have always found it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXIT_CODES = {"succeeded": 0, "failed": 1, "gate_stopped": 3, "diverged": 4, "unresolved": 5,
              "rejected": 6, "waiting": 10}
# A failed attempt whose error has a row of its own in the command line's exit-code table.
FAILURE_EXIT_CODES = {"store_unavailable": 7, "sandbox_unavailable": 8}


def exit_code_of(status: str, error: dict[str, Any] | None) -> int:
    """The command line's exit code of an attempt that ended with `status` and `error`."""
    if status == "failed" and error is not None:
        own = FAILURE_EXIT_CODES.get(str(error.get("code")))
        if own is not None:
            return own
    return EXIT_CODES.get(status, 1)


@dataclass(frozen=True)
class AttemptOutcome:
    """What one attempt did. `to_dict()` is the JSON of ``frostline run --json``."""

    run_id: str
    attempt: int | None
    status: str
    executed: int = 0
    replayed: int = 0
    provider_calls: int = 0
    spend_usd: float = 0.0
    divergences: list[dict[str, Any]] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    semantic_repeats: list[dict[str, Any]] = field(default_factory=list)
    result: Any = None
    error: dict[str, Any] | None = None
    gate: dict[str, Any] | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    denials: list[dict[str, Any]] = field(default_factory=list)
    logs: str = ""

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.status, self.error)

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "attempt": self.attempt, "status": self.status,
                "exit_code": self.exit_code, "executed": self.executed,
                "replayed": self.replayed, "provider_calls": self.provider_calls,
                "spend_usd": round(self.spend_usd, 6), "divergences": self.divergences,
                "orphans": self.orphans, "semantic_repeats": self.semantic_repeats,
                "result": self.result, "error": self.error, "gate": self.gate,
                "calls": self.calls, "denials": self.denials}
