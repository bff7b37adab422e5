"""Whether a tuned graph replaces the declared one: strict domination on the held-out split.

Tuning (frostline.coding.tune) only proposes. The decision is taken from the held-out figures
of `frostline ab`, a blind run the tuner never saw: one results folder with arm 4 on the
declared graph, one with arm 4 on the tuned graph (``frostline ab --arms arm4 --graph FILE``),
same tasks, same fault plan. The rule is §8.3's for a mechanism added to an arm: the tuned graph
is adopted iff it is better beyond noise on at least one of the nine instruments and worse
beyond noise on none (95% paired bootstrap over tasks, `stats.compare`); with fewer than
`MIN_PAIRED` paired tasks nothing is decided and the declared graph stays.

    decision = decide_adoption(read_results(declared_dir), read_results(tuned_dir), tuned)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from frostline.coding.ab.decide import MIN_PAIRED, Decision
from frostline.coding.ab.stats import compare
from frostline.coding.interface import INSTRUMENT_KEYS, Instruments, TaskOutcome
from frostline.errors import ReportInvalid
from frostline.graph.graph import Graph

__all__ = ["HELDOUT", "RULE", "ABResults", "decide_adoption", "read_results"]

HELDOUT = "heldout"
RULE = "8.3 strict domination on held-out tasks: tuned graph vs declared graph"


@dataclass(frozen=True)
class ABResults:
    """One `frostline ab` results folder, read back: its split, fault plan and one arm's
    outcomes."""

    folder: str
    split: str
    faults: Mapping[str, Any]
    outcomes: tuple[TaskOutcome, ...]


def read_results(folder: Path, arm: str = "arm4") -> ABResults:
    """report.json and the `arm` rows of outcomes.jsonl of a `frostline ab` results folder.

    Raises:
        ReportInvalid: a missing or unreadable file, or no outcome of `arm`.
    """
    try:
        report = json.loads((folder / "report.json").read_text("utf-8"))
        rows = [json.loads(line) for line in
                (folder / "outcomes.jsonl").read_text("utf-8").splitlines() if line.strip()]
        run = report["run"]
        outcomes = tuple(_outcome(r) for r in rows if r["arm"] == arm)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ReportInvalid(f"{folder} is not a `frostline ab` results folder (report.json and "
                            f"outcomes.jsonl): {exc}", path=str(folder)) from None
    if not outcomes:
        raise ReportInvalid(f"{folder} has no {arm} outcome; run `frostline ab --arms {arm}`",
                            path=str(folder))
    return ABResults(str(folder), str(run.get("split")), dict(run.get("faults") or {}), outcomes)


def _outcome(row: Mapping[str, Any]) -> TaskOutcome:
    return TaskOutcome(row["task_id"], row["arm"], row["status"], row.get("reason", ""),
                       Instruments(**row["instruments"]), dict(row.get("details") or {}))


def _ran(results: ABResults) -> set[str]:
    return {str(o.details.get("graph", {}).get("digest", "")) for o in results.outcomes}


def decide_adoption(declared: ABResults, tuned: ABResults, graph: Graph) -> Decision:
    """Adopt `graph` (the tuned graph) or keep the declared one, from held-out figures.

    Raises:
        ReportInvalid: a run that is not on the held-out split, runs with different fault
            plans, a tuned run that did not run `graph`, or a declared run that did.
    """
    for name, r in (("declared", declared), ("tuned", tuned)):
        if r.split != HELDOUT:
            raise ReportInvalid(f"the {name} run ({r.folder}) is on the {r.split!r} split; "
                                "adoption is decided on the held-out split only", split=r.split)
    if dict(declared.faults) != dict(tuned.faults):
        raise ReportInvalid(f"the two runs injected different faults ({dict(declared.faults)} "
                            f"vs {dict(tuned.faults)}); run both with the same --faults and "
                            "--fault-seed")
    if _ran(tuned) != {graph.content_digest}:
        raise ReportInvalid(f"the tuned run ({tuned.folder}) did not run {graph.name} "
                            f"(digest {graph.content_digest[:12]}) on every task; run it with "
                            "`frostline ab --arms arm4 --graph FILE`")
    if graph.content_digest in _ran(declared):
        raise ReportInvalid(f"the declared run ({declared.folder}) ran the tuned graph; run it "
                            "without --graph")
    outcomes: dict[str, Sequence[TaskOutcome]] = {"declared": declared.outcomes,
                                                   "tuned": tuned.outcomes}
    paired = len({o.task_id for o in declared.outcomes} & {o.task_id for o in tuned.outcomes})
    if paired < MIN_PAIRED:
        return Decision(RULE, graph.name, "declared", "undecided",
                        f"{paired} paired held-out tasks; at least {MIN_PAIRED} are needed to "
                        "tell noise, so the declared graph stays")
    evidence = [compare("tuned", "declared", outcomes, k) for k in INSTRUMENT_KEYS]
    worse = [c.instrument for c in evidence if c.verdict == "worse"]
    better = [c.instrument for c in evidence if c.verdict == "better"]
    if better and not worse:
        return Decision(RULE, graph.name, "declared", "adopted",
                        f"strictly dominates on {paired} held-out tasks: better on {better}, "
                        "worse on none", evidence)
    why = (f"worse on {worse}" if worse else "better on no instrument beyond noise")
    return Decision(RULE, graph.name, "declared", "rejected",
                    f"does not strictly dominate on {paired} held-out tasks ({why}); the "
                    "declared graph stays", evidence)
