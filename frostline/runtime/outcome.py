"""What one attempt did (`AttemptOutcome`), and the exit code each outcome has on the command
line: the record `execute` returns and every surface (CLI, HTTP API, repair loop) prints.

`frostline.runtime.execute` re-exports `AttemptOutcome`, where callers have always found it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from frostline.contract import status as _status
from frostline.contract.status import FAILURE_EXIT_CODES as FAILURE_EXIT_CODES
from frostline.contract.verdict import GateVerdict

# attempt status -> exit code, from the one table (frostline.contract.status)
EXIT_CODES: dict[str, int] = {
    str(status): _status.EXIT_CODES[row][0] for status, row in _status.ATTEMPT_EXIT.items()}


def exit_code_of(status: str, error: dict[str, Any] | None) -> int:
    """The command line's exit code of an attempt that ended with `status` and `error`."""
    return _status.exit_of_attempt(status, error)


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
    gate: GateVerdict | None = None
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
                "result": self.result, "error": self.error,
                "gate": self.gate.to_dict() if self.gate is not None else None,
                "calls": self.calls, "denials": self.denials}
