"""The decision rule of Build Spec 23 §8.3 and the ablation rule of §8.4, applied mechanically.

"Beyond noise" means the 95% paired bootstrap interval of the per-task difference excludes 0
(`stats.Comparison.verdict`). Fewer than `MIN_PAIRED` paired tasks decide nothing.

§8.3, the state machine: kept iff arm 4 strictly dominates the free agent on the instruments
that matter (resolve rate, repeated work, illegal actions, stale-context mistakes: none worse,
at least one better) at no worse tokens and wall time. If arm 4 is indistinguishable from the
free agent on all of them, the escape hatch fires: the empty L column, pare the machinery back.

§8.3, each intermediate arm (1, 2, 3, and 4 after 2 or 3) against the arm before it: kept iff
it is better on at least one instrument and worse on none; worse on any is a demonstrated harm,
removed outright; neither is no gain, removed.

§8.4, each ablation against arm 4: the mechanism is kept iff removing it degrades at least one
instrument beyond noise, and DELETED otherwise. The signature §8.4 predicts for each removal
is printed beside what was observed.

Each decision also carries the precision (resolved / accepted, with its interval) of both arms
over their paired tasks: reported beside the verdict, it decides nothing (the rules name their
instruments).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from frostline.coding.ab.precision import precision
from frostline.coding.ab.stats import Comparison, compare
from frostline.coding.arms import baseline_of
from frostline.coding.interface import ABLATION_NAMES, INSTRUMENT_KEYS, TaskOutcome

__all__ = ["MATTERS", "MIN_PAIRED", "SIGNATURES", "Decision", "decide_all", "paired_precision"]

MIN_PAIRED = 5
MATTERS = ("resolve_rate", "repeated_work", "illegal_actions", "stale_context")
COST = ("tokens", "wall_s")
#: What §8.4 says removing each mechanism must show (instruments that get worse).
SIGNATURES: dict[str, tuple[str, ...]] = {
    "no_gates": ("illegal_actions", "redundant_actions", "stale_context"),
    "no_allowlists": ("redundant_actions", "repeated_work"),
    "no_lattice": ("repeated_work", "tokens", "wall_s"),
    "no_failure_edges": ("stale_context",),
    "no_single_l": ("tokens", "wall_s", "illegal_actions", "redundant_actions", "resolve_rate"),
}


@dataclass
class Decision:
    """One mechanical verdict: `subject` against `against`, the rule applied, the verdict
    (kept / removed / deleted / undecided), why, and the comparisons it rests on."""

    rule: str
    subject: str
    against: str
    verdict: str
    reason: str
    evidence: list[Comparison] = field(default_factory=list)
    #: arm name -> its precision over the paired tasks (reported, not deciding)
    precision: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "subject": self.subject, "against": self.against,
                "verdict": self.verdict, "reason": self.reason,
                "evidence": [c.to_dict() for c in self.evidence],
                "precision": dict(self.precision)}


def paired_precision(a: str, b: str, outcomes: Mapping[str, Sequence[TaskOutcome]]
                     ) -> dict[str, Any]:
    """The precision of arms `a` and `b`, each over the tasks both ran."""
    if a not in outcomes or b not in outcomes:
        return {}
    both = {o.task_id for o in outcomes[a]} & {o.task_id for o in outcomes[b]}
    return {name: precision(o for o in outcomes[name] if o.task_id in both) for name in (a, b)}


def _names(cs: Sequence[Comparison], verdict: str) -> list[str]:
    return [c.instrument for c in cs if c.verdict == verdict]


def _missing(rule: str, a: str, b: str, outcomes: Mapping[str, Sequence[TaskOutcome]],
             not_run: Mapping[str, str]) -> Decision | None:
    for name in (a, b):
        if name not in outcomes:
            why = not_run.get(name, "not asked for")
            return Decision(rule, a, b, "undecided", f"{name} did not run: {why}")
    paired = len({o.task_id for o in outcomes[a]} & {o.task_id for o in outcomes[b]})
    if paired < MIN_PAIRED:
        return Decision(rule, a, b, "undecided",
                        f"{paired} paired tasks; at least {MIN_PAIRED} are needed to tell noise")
    return None


def state_machine(outcomes: Mapping[str, Sequence[TaskOutcome]], not_run: Mapping[str, str]
                  ) -> Decision:
    rule = "8.3 state machine: arm4 vs free_agent"
    missing = _missing(rule, "arm4", "free_agent", outcomes, not_run)
    if missing is not None:
        return missing
    matters = [compare("arm4", "free_agent", outcomes, k) for k in MATTERS]
    cost = [compare("arm4", "free_agent", outcomes, k) for k in COST]
    evidence = matters + cost
    worse, better, pricier = _names(matters, "worse"), _names(matters, "better"), _names(cost, "worse")
    if not better and not worse:
        return Decision(rule, "arm4", "free_agent", "removed",
                        "indistinguishable from the free agent on every instrument that matters: "
                        "the escape hatch fires (an empty L column is a permitted, correct "
                        "state); pare the machinery back", evidence)
    if worse or pricier:
        return Decision(rule, "arm4", "free_agent", "removed",
                        f"does not strictly dominate: worse on {worse + pricier}", evidence)
    return Decision(rule, "arm4", "free_agent", "kept",
                    f"strictly dominates: better on {better}, worse on none, no costlier",
                    evidence)


def intermediate(name: str, before: str, outcomes: Mapping[str, Sequence[TaskOutcome]],
                 not_run: Mapping[str, str]) -> Decision:
    rule = f"8.3 intermediate: {name} vs {before}"
    missing = _missing(rule, name, before, outcomes, not_run)
    if missing is not None:
        return missing
    evidence = [compare(name, before, outcomes, k) for k in INSTRUMENT_KEYS]
    worse, better = _names(evidence, "worse"), _names(evidence, "better")
    if worse:
        return Decision(rule, name, before, "removed",
                        f"demonstrated harm: worse on {worse}", evidence)
    if better:
        return Decision(rule, name, before, "kept", f"better on {better}, worse on none",
                        evidence)
    return Decision(rule, name, before, "removed", "no instrument better beyond noise", evidence)


def ablation(name: str, outcomes: Mapping[str, Sequence[TaskOutcome]],
             not_run: Mapping[str, str]) -> Decision:
    rule = f"8.4 ablation: {name} vs arm4"
    mechanism = name.removeprefix("no_")
    missing = _missing(rule, name, "arm4", outcomes, not_run)
    if missing is not None:
        return missing
    # Oriented as arm 4 against the ablation: "better" means removing the mechanism hurt.
    evidence = [compare("arm4", name, outcomes, k) for k in INSTRUMENT_KEYS]
    degraded = _names(evidence, "better")
    expected = SIGNATURES[name]
    seen = [k for k in expected if k in degraded]
    signature = f"§8.4 expects {list(expected)} to degrade; observed {seen or 'none of them'}"
    if degraded:
        return Decision(rule, mechanism, "arm4", "kept",
                        f"removing it degrades {degraded}; {signature}", evidence)
    return Decision(rule, mechanism, "arm4", "deleted",
                    f"removing it degrades nothing beyond noise; {signature}", evidence)


def decide_all(outcomes: Mapping[str, Sequence[TaskOutcome]], not_run: Mapping[str, str],
               asked: Sequence[str]) -> list[Decision]:
    """Every decision the asked-for arms allow, in the order the report prints them."""
    ran = set(outcomes)
    decisions = [state_machine(outcomes, not_run)]
    decisions[0].precision = paired_precision("arm4", "free_agent", outcomes)
    for name in ("arm1", "arm2", "arm3", "arm4"):
        if name in asked:
            before = baseline_of(name, ran)
            decisions.append(intermediate(name, before, outcomes, not_run))
            decisions[-1].precision = paired_precision(name, before, outcomes)
    for name in ABLATION_NAMES:
        if name in asked:
            decisions.append(ablation(name, outcomes, not_run))
            decisions[-1].precision = paired_precision("arm4", name, outcomes)
    return decisions
