"""The verdict on one model reply: what the loop returns per rewrite and what the next prompt
quotes back to the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Token counts of one reply as the model client reported them (prompt, completion, total).
Usage = dict[str, Any]


@dataclass(frozen=True)
class RewriteFeedback:
    """The verdict on one model reply."""

    n: int
    ok: bool
    reason: str
    violations: list[dict[str, Any]] = field(default_factory=list)
    counterexamples: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=dict)
    candidate: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "ok": self.ok, "reason": self.reason,
                "violations": list(self.violations), "counterexamples": list(self.counterexamples),
                "usage": dict(self.usage), "candidate": self.candidate}
