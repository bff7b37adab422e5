"""The arms of §8.1 and the ablations of §8.4, by name.

    free_agent        the ReAct baseline: the model sees every tool, picks the next one and
                      decides when it is done (needs a model)
    arm1              fixed pipeline: the declared states in order, no gates, no allowlists,
                      no failure edges, no lattice; any failure reruns everything
    arm2              state machine: + gates, allowlists, retry/rollback/termination edges
    arm3              + adaptive plan DAG: not built (Build Spec 23 §2 row 10 is deferred)
    arm4              + freshness lattice and partial retry: the full canonical graph
    no_gates, no_allowlists, no_lattice, no_failure_edges, no_single_l
                      arm 4 with that one mechanism off; no_lattice is the same configuration
                      as arm 2 (both are run so each table is complete); no_single_l hands the
                      next step, the tool and termination to the model (needs a model)

Example: ``solve(task, arm("arm4"), FaultPlan(), workdir=tmp)``.
"""

from __future__ import annotations

from frostline.coding.interface import ABLATION_NAMES, ARM_NAMES, Arm
from frostline.errors import DefinitionError

ARMS: dict[str, Arm] = {
    "free_agent": Arm("free_agent", free_agent=True, gates=False, allowlists=False,
                      lattice=False, failure_edges=False, single_l=False, needs_model=True),
    "arm1": Arm("arm1", gates=False, allowlists=False, lattice=False, failure_edges=False),
    "arm2": Arm("arm2", lattice=False),
    "arm4": Arm("arm4"),
    "no_gates": Arm("no_gates", gates=False),
    "no_allowlists": Arm("no_allowlists", allowlists=False),
    "no_lattice": Arm("no_lattice", lattice=False),
    "no_failure_edges": Arm("no_failure_edges", failure_edges=False),
    "no_single_l": Arm("no_single_l", single_l=False, needs_model=True),
}

#: Arms that exist in the protocol but are not built, with the reason the report prints.
NOT_BUILT = {"arm3": "the adaptive plan DAG (Build Spec 23 §2 row 10) is deferred; "
                     "arm 3 is not built"}


def arm(name: str) -> Arm:
    """The Arm called `name` (one of ARM_NAMES + ABLATION_NAMES, except the unbuilt arm3).

    Raises:
        DefinitionError: an unknown name, or arm3.
    """
    if name in ARMS:
        return ARMS[name]
    if name in NOT_BUILT:
        raise DefinitionError(NOT_BUILT[name], arm=name)
    raise DefinitionError(f"unknown arm {name!r}; arms are {[*ARM_NAMES, *ABLATION_NAMES]}",
                          arm=name)
