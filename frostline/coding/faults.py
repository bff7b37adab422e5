"""Fault injection: tool calls that fail on purpose, the same ones in every arm.

Whether the k-th call of a tool in a task fails is a pure function of (seed, task id, tool, k):
a SHA-256 draw compared with the plan's rate. Every arm therefore meets the same fault at the
same call of the same tool, whatever else it does in between. A fault kind applies only to the
tools that can suffer it:

    test_timeout            the tools that run tests (the run is reported as killed by its clock)
    sandbox_failure         every tool that starts the sandbox
    malformed_model_output  patch.generate with a model (the reply is replaced by garbage)
    provider_error          patch.generate with a model (the endpoint answers an error)

An injected fault raises `InjectedFault` (a RunError, so the state fails and the graph's failure
edges decide what happens next) — except a malformed model output, which the generator sees as
a reply without any SEARCH/REPLACE block.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from frostline.coding.interface import FaultPlan
from frostline.errors import (
    InjectedFault as InjectedFault,
)

TEST_TOOLS = frozenset({"trace.read", "test.run", "regression.check", "repair.iterative",
                        "validate.accept"})
SANDBOX_TOOLS = TEST_TOOLS | {"sandbox.execute", "trace.instrument"}
MODEL_TOOLS = frozenset({"patch.generate"})


def _draw(*parts: object) -> float:
    h = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2.0 ** 64


def applicable(tool: str, kinds: Iterable[str], *, model: bool) -> tuple[str, ...]:
    out = []
    for kind in kinds:
        if (kind == "test_timeout" and tool in TEST_TOOLS) \
                or (kind == "sandbox_failure" and tool in SANDBOX_TOOLS) \
                or (kind in ("malformed_model_output", "provider_error") and tool in MODEL_TOOLS \
                and model):
            out.append(kind)
    return tuple(out)


class FaultInjector:
    """Counts each tool's calls in one task and says which call fails, and how.

    Example: ``FaultInjector(FaultPlan(rate=0.1, seed=7), "task-1").next("test.run")``
    """

    def __init__(self, plan: FaultPlan, task_id: str, *, model: bool = False) -> None:
        self.plan = plan
        self.task_id = task_id
        self.model = model
        self.calls: Counter[str] = Counter()
        self.injected: list[dict[str, object]] = []

    def next(self, tool: str) -> str | None:
        """Count one call of `tool`; the fault kind to inject into it, or None."""
        index = self.calls[tool]
        self.calls[tool] += 1
        if self.plan.rate <= 0:
            return None
        kinds = applicable(tool, self.plan.kinds, model=self.model)
        if not kinds or _draw(self.plan.seed, self.task_id, tool, index) >= self.plan.rate:
            return None
        kind = kinds[int(_draw(self.plan.seed, self.task_id, tool, index, "kind") * len(kinds))]
        self.injected.append({"tool": tool, "call": index, "kind": kind})
        return kind

    def raise_for(self, tool: str, kind: str) -> None:
        """Raise the failure of an injected fault that a tool cannot survive."""
        messages = {"test_timeout": "the test run passed its wall clock and was killed",
                    "sandbox_failure": "the sandbox died before reporting",
                    "provider_error": "the model endpoint answered HTTP 500"}
        raise InjectedFault(f"injected fault ({kind}) in {tool}: {messages.get(kind, kind)}",
                            kind=kind, tool=tool)
