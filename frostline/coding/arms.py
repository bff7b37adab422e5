"""The arms of Build Spec 23 §8.1 and the ablations of §8.4: the one table every consumer reads
(the workflow's `solve`, the A/B driver, its rules and its report).

Each entry is an `Arm` of `frostline.coding.interface`. The four arms are each a strict superset
of the one before, in the order §8.1 gives them; an ablation is arm 4 with one mechanism off.

| name             | what it is                                                    | model |
|------------------|---------------------------------------------------------------|-------|
| free_agent       | ReAct loop: the model sees every tool, picks the next one,    | yes   |
|                  | decides when it is done (step limit)                          |       |
| arm1             | fixed pipeline: the declared states in order, no gates, no    | no    |
|                  | allowlists, no failure edges, no lattice, the static plan     |       |
|                  | (any failure reruns everything)                               |       |
| arm2             | arm1 + gates + allowlists + retry/rollback/termination edges  | no    |
| arm3             | arm2 + the adaptive plan DAG (re-planned inside PLAN when an  | no    |
|                  | edit diverges from the plan's assumption)                     |       |
| arm4             | arm3 + freshness lattice and partial retry: the full graph    | no    |
| no_gates         | arm4, transitions fire unconditionally                        | no    |
| no_allowlists    | arm4, any tool callable from any state                        | no    |
| no_lattice       | arm4 without the lattice: the same configuration as arm3      | no    |
|                  | (both are run so each table is complete)                      |       |
| no_failure_edges | arm4 without retry/rollback edges: a failure terminates       | no    |
| no_single_l      | arm4, the model owns next step, tool choice and termination   | yes   |

With no model configured, the arms that need one are reported as not run with the reason;
the others run with the empty L column (the template generator), a permitted, correct state.

Example: ``solve(task, arm("arm4"), FaultPlan(), workdir=tmp)``.
"""

from __future__ import annotations

from dataclasses import replace

from frostline.coding.interface import ABLATION_NAMES, ARM_NAMES, Arm
from frostline.errors import DefinitionError

_ARM2 = Arm("arm2", lattice=False, adaptive_plan=False)
_ARM3 = replace(_ARM2, name="arm3", adaptive_plan=True)
_ARM4 = replace(_ARM3, name="arm4", lattice=True)

ARMS: dict[str, Arm] = {
    "free_agent": Arm("free_agent", free_agent=True, gates=False, allowlists=False,
                      lattice=False, failure_edges=False, single_l=False, adaptive_plan=False,
                      needs_model=True),
    "arm1": replace(_ARM2, name="arm1", gates=False, allowlists=False, failure_edges=False),
    "arm2": _ARM2,
    "arm3": _ARM3,
    "arm4": _ARM4,
    "no_gates": replace(_ARM4, name="no_gates", gates=False),
    "no_allowlists": replace(_ARM4, name="no_allowlists", allowlists=False),
    "no_lattice": replace(_ARM4, name="no_lattice", lattice=False),
    "no_failure_edges": replace(_ARM4, name="no_failure_edges", failure_edges=False),
    "no_single_l": replace(_ARM4, name="no_single_l", single_l=False, needs_model=True),
}
#: Every arm and ablation, in report order.
ALL_NAMES: tuple[str, ...] = (*ARM_NAMES, *ABLATION_NAMES)

def arm(name: str) -> Arm:
    """The Arm called `name` (one of ALL_NAMES).

    Raises:
        DefinitionError: an unknown name.
    """
    if name in ARMS:
        return ARMS[name]
    raise DefinitionError(f"unknown arm {name!r}; arms are {list(ALL_NAMES)}", arm=name)


def baseline_of(name: str, ran: set[str]) -> str:
    """The arm an arm is compared with under §8.3: the one before it (arm 4 after arm 3 when
    arm 3 ran, else after arm 2; arm 1 after the free agent)."""
    if name == "arm4":
        return "arm3" if "arm3" in ran else "arm2"
    index = ARM_NAMES.index(name)
    return ARM_NAMES[index - 1]


def parse_names(values: tuple[str, ...] | list[str]) -> tuple[list[str], list[str]]:
    """(known names in report order, unknown names) from `--arms` values (comma lists); no
    value means every arm and ablation."""
    asked = [n.strip() for v in values for n in v.split(",") if n.strip()]
    if not asked:
        return list(ALL_NAMES), []
    unknown = [n for n in asked if n not in ARMS]
    return [n for n in ALL_NAMES if n in set(asked)], unknown
