"""What one task's run is made of: its settings, workspace, tools, bodies and observer, and the
hidden-test verdict on the tree it submitted (shared by `solve`, `solve_durable` and the free
agent)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from frostline.coding.faults import FaultInjector
from frostline.coding.generate import Generator, ModelGenerator, TemplateGenerator
from frostline.coding.instruments import CountingChat, Observer
from frostline.coding.interface import Arm, FaultPlan, Task
from frostline.coding.testrun import (
    SandboxSettings,
    TestsDidNotRun,
    run_pytest,
    task_args,
)
from frostline.coding.tools import CodingTools, ToolSettings
from frostline.coding.variants import canonical, graph_for
from frostline.coding.workflow import CodingBodies
from frostline.coding.workspace import Workspace
from frostline.errors import FrostlineError
from frostline.graph.graph import Graph
from frostline.repair.completion import ChatClient

ACCEPT, REJECT, NOT_RUN = "ACCEPT", "TERMINAL_REJECT", "not_run"


@dataclass(frozen=True)
class SolveSettings:
    """Limits of one task's run."""

    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    screen_limit: int = 48
    samples: int = 3
    max_steps: int = 200
    agent_steps: int = 30
    model_review: bool = False  # REVIEW also asks the model, when there is one (notes only)
    guards: bool = True  # the overfit guards (frostline.coding.guards); off: the graph before them

    def tools(self) -> ToolSettings:
        return ToolSettings(self.sandbox, self.screen_limit, self.samples)

    def with_graph(self, graph: Graph) -> SolveSettings:
        """These settings with the ones `graph` carries (`samples`, `screen_limit`,
        `test_timeout`) in force: a tuned graph is one file, its settings included."""
        s = graph.settings
        return replace(self, samples=int(s.get("samples", self.samples)),
                       screen_limit=int(s.get("screen_limit", self.screen_limit)),
                       sandbox=replace(self.sandbox, test_timeout=float(
                           s.get("test_timeout", self.sandbox.test_timeout))))


@dataclass
class Setup:
    """Everything one run is made of (shared by `solve` and `solve_durable`)."""

    task: Task
    arm: Arm
    workspace: Workspace
    tools: CodingTools
    bodies: CodingBodies
    observer: Observer
    chat: CountingChat | None
    faults: FaultInjector


def prepare(task: Task, arm: Arm, faults: FaultPlan, model: ChatClient | None, workdir: Path,
            settings: SolveSettings) -> Setup:
    """Lay the workspace and build the tools, bodies and observer of one run."""
    workspace = Workspace.create(workdir / "workspace", Path(task.source_dir), task.mutation)
    chat = CountingChat(model) if model is not None else None
    generators: dict[str, Generator] = {"template": TemplateGenerator()}
    if chat is not None:
        generators["model"] = ModelGenerator(chat)
    injector = FaultInjector(faults, task.task_id, model=chat is not None)
    tools = CodingTools(task, workspace, generators, settings.tools(), injector,
                        workdir / "memory.json")
    graph = graph_for(arm, settings.guards) if not arm.free_agent else canonical()
    observer = Observer(canonical().lattice, canonical())
    bodies = CodingBodies(task, generator="model" if chat is not None else "template",
                          lattice=bool(graph.lattice), samples=settings.samples,
                          valid=observer.valid,
                          model_review=settings.model_review and chat is not None,
                          guards=settings.guards and not arm.free_agent,
                          adaptive=arm.adaptive_plan and not arm.free_agent)
    return Setup(task, arm, workspace, tools, bodies, observer, chat, injector)


def final_check(setup: Setup, submitted: bool, baseline_failing: list[str],
                settings: SolveSettings) -> tuple[int, int, str]:
    """(resolved, regressions that slipped through, note) from the hidden tests: the whole
    suite, hidden tests included, on the submitted tree."""
    if not submitted:
        return 0, 0, ""
    task = setup.task
    try:
        report = run_pytest(setup.workspace.tree, settings.sandbox, extra_args=task_args(task),
                            paths=task.test_paths)
    except (TestsDidNotRun, FrostlineError) as exc:
        return 0, 0, f"the hidden check could not run: {exc}"
    decisive = set(task.hidden) or set(task.visible_failing)
    resolved = int(bool(decisive) and all(report.outcomes.get(t) == "passed" for t in decisive))
    expected = decisive | set(task.visible_failing) | set(baseline_failing)
    slipped = [t for t in report.failed if t not in expected]
    return resolved, len(slipped), ""


