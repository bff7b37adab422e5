"""What the task builder, the coding graph and the A/B driver agree on.

A `Task` is one injected single-site bug in a pinned package; an `Arm` is one configuration of
the workflow (an arm of §8.1 or an ablation of §8.4); a `FaultPlan` says which tool calls fail,
seeded so every arm sees the same faults; `Instruments` are the nine measures of §8.2, counted
from counters and the ledger, never from a self-report; `TaskOutcome` is one task under one arm.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

#: The names `frostline ab --arms` and the JSON report use, in report order.
ARM_NAMES = ("free_agent", "arm1", "arm2", "arm3", "arm4")
ABLATION_NAMES = ("no_gates", "no_allowlists", "no_lattice", "no_failure_edges", "no_single_l")
INSTRUMENT_KEYS = ("resolve_rate", "tokens", "wall_s", "llm_calls", "illegal_actions",
                   "redundant_actions", "repeated_work", "regressions", "stale_context")


@dataclass(frozen=True)
class Mutation:
    """A single-site edit that injects the bug: `file` relative to the package root, the
    1-based `line`, the operator's name, and the line's text before and after."""

    file: str
    line: int
    operator: str
    before: str
    after: str


@dataclass(frozen=True)
class Task:
    """One row of tasks.jsonl. `source_dir` is the unpacked, green package tree (a cache path,
    never in git); `test_args` are extra pytest arguments the package needs (`--ignore`,
    `-o addopts=`); `visible_failing` are the failing tests the workflow is shown, `hidden` the
    ones that decide resolution and are never shown to it. To run the suite: `import_root`
    (relative to `source_dir`) and `dep_paths` (unpacked test dependencies, cache paths) go
    first on `sys.path`, and pytest collects `test_paths` with `test_args`."""

    task_id: str
    package: str
    version: str
    sha256: str
    source_dir: str
    mutation: Mutation
    visible_failing: tuple[str, ...]
    hidden: tuple[str, ...]
    test_args: tuple[str, ...] = ()
    split: str = "tuning"
    test_paths: tuple[str, ...] = ()
    import_root: str = "."
    dep_paths: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Task:
        d = dict(data)
        d["mutation"] = Mutation(**d["mutation"])
        for key in ("visible_failing", "hidden", "test_args", "test_paths", "dep_paths"):
            d[key] = tuple(d.get(key, ()))
        return cls(**d)


@dataclass(frozen=True)
class Arm:
    """One workflow configuration. `free_agent` is the ReAct baseline; the other flags switch
    one mechanism each, so an ablation is arm 4 with one of them off."""

    name: str
    free_agent: bool = False
    gates: bool = True
    allowlists: bool = True
    lattice: bool = True
    failure_edges: bool = True
    single_l: bool = True
    #: the plan is the adaptive, dependency-aware DAG of edit obligations (arm 3 and after);
    #: off, PLAN emits the static ranked list of sites
    adaptive_plan: bool = True
    needs_model: bool = False


@dataclass(frozen=True)
class FaultPlan:
    """Tool faults injected at `rate` (0..1), decided by (seed, task, tool, call index) so every
    arm meets the same faults at the same calls. `kinds` is drawn from: test_timeout,
    sandbox_failure, malformed_model_output, provider_error."""

    rate: float = 0.0
    seed: int = 0
    kinds: tuple[str, ...] = ("test_timeout", "sandbox_failure", "malformed_model_output",
                              "provider_error")


@dataclass
class Instruments:
    """The nine instruments of §8.2 for one task (resolved is 0 or 1; the driver averages)."""

    resolved: int = 0
    tokens: int = 0
    wall_s: float = 0.0
    llm_calls: int = 0
    illegal_actions: int = 0
    redundant_actions: int = 0
    repeated_work: int = 0
    regressions: int = 0
    stale_context: int = 0


@dataclass
class TaskOutcome:
    """One task under one arm: how it ended (ACCEPT, TERMINAL_REJECT with its reason, or
    not_run with the reason) and its instruments."""

    task_id: str
    arm: str
    status: str
    reason: str = ""
    instruments: Instruments = field(default_factory=Instruments)
    #: How the run went, for reports and the UI: path, visits, injected faults, and so on.
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
