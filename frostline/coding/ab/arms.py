"""The arms of Build Spec 23 §8.1 and the ablations of §8.4, as one table.

Each entry is an `Arm` of `frostline.coding.interface`: the baseline, the four arms (each
a strict superset of the one before), and arm 4 with one mechanism removed at a time.

| name             | what it is                                                   | model |
|------------------|--------------------------------------------------------------|-------|
| free_agent       | ReAct loop: the model sees every tool, picks the next one,   | yes   |
|                  | decides when it is done (step limit)                         |       |
| arm1             | fixed pipeline: declared states, no gates, no allowlists, no | no    |
|                  | failure edges, no lattice (any failure reruns everything)    |       |
| arm2             | arm1 + gates + allowlists + failure edges (no lattice)       | no    |
| arm3             | arm2 + adaptive plan DAG: deferred (row 10 is not built)     |       |
| arm4             | arm2 + freshness lattice, partial retry: the full component  | no    |
| no_gates         | arm4, transitions fire unconditionally                       | no    |
| no_allowlists    | arm4, any tool callable from any state                       | no    |
| no_lattice       | arm4, rerun everything on any failure                        | no    |
| no_failure_edges | arm4 without retry/rollback/termination edges (what a failure | no    |
|                  | leads to is up to the workflow's fallback, see its `solve`)  |       |
| no_single_l      | arm4, the model owns next step, tool choice and termination  | yes   |

With no model configured, the arms that need one are reported as not run with the reason;
the others run with the empty L column (the template generator), a permitted, correct state.
The flags are the ones the coding workflow's own table (`frostline.coding.arms`) uses;
a test holds the two equal wherever both are installed.
"""

from __future__ import annotations

from dataclasses import replace

from frostline.coding.interface import ABLATION_NAMES, ARM_NAMES, Arm

__all__ = ["ALL_NAMES", "ARMS", "DEFERRED", "arm", "baseline_of", "parse_names"]

_ARM4 = Arm("arm4")
ARMS: dict[str, Arm] = {
    "free_agent": Arm("free_agent", free_agent=True, gates=False, allowlists=False,
                      lattice=False, failure_edges=False, single_l=False, needs_model=True),
    "arm1": Arm("arm1", gates=False, allowlists=False, lattice=False, failure_edges=False),
    "arm2": Arm("arm2", lattice=False),
    "arm3": Arm("arm3", lattice=False),
    "arm4": _ARM4,
    "no_gates": replace(_ARM4, name="no_gates", gates=False),
    "no_allowlists": replace(_ARM4, name="no_allowlists", allowlists=False),
    "no_lattice": replace(_ARM4, name="no_lattice", lattice=False),
    "no_failure_edges": replace(_ARM4, name="no_failure_edges", failure_edges=False),
    "no_single_l": replace(_ARM4, name="no_single_l", single_l=False, needs_model=True),
}
ALL_NAMES: tuple[str, ...] = (*ARM_NAMES, *ABLATION_NAMES)

#: Arms that are part of the protocol but not built, with the reason the report prints.
DEFERRED: dict[str, str] = {
    "arm3": "deferred: the adaptive plan DAG (Build Spec 23 §2 row 10) is not built; arm 4 builds "
            "on arm 2",
}


def arm(name: str) -> Arm:
    return ARMS[name]


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
