"""The A/B report: one JSON object (what `frostline ab --json` prints) and its markdown.

`arms` maps every arm and ablation name to exactly its nine instruments and `tasks` (and
`not_run` with the reason for an arm that did not run, its instruments then null). `decisions`
holds the §8.3 and §8.4 verdicts with their evidence. `details` carries what the nine do not:
median wall time per task, how tasks ended, per-task means with bootstrap intervals, and
`precision` (resolved / accepted, `frostline.coding.ab.precision`). `populations` gives the
resolve rate and the precision of every arm per task population, each named for what it is
(injected mutants, an upper bound; released bugs fixed upstream), side by side.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from frostline.coding.ab.decide import Decision
from frostline.coding.ab.driver import ABRun
from frostline.coding.ab.precision import POPULATION_NOTES, by_population, population_of, precision
from frostline.coding.ab.stats import aggregate, bootstrap_ci, median_wall, per_task
from frostline.coding.arms import ALL_NAMES
from frostline.coding.interface import INSTRUMENT_KEYS

__all__ = ["NOTES", "build_report", "to_markdown", "write_report"]

NOTES = (
    "Precision is resolved / accepted: an accepted patch that fails the hidden tests is a wrong "
    "answer the workflow vouched for. Its interval is the bootstrap over the accepted tasks.",
    "Instruments are counted by the driver and the workflow's counters and ledger, never "
    "reported by a model; wall time is the driver's clock around each task.",
    "Runs against the local fake OpenAI-compatible server (scripted replies) are plumbing "
    "tests and are never reported as results.",
)


def _arm_entry(run: ABRun, name: str) -> dict[str, Any]:
    if name in run.not_run or name not in run.outcomes:
        entry: dict[str, Any] = {"tasks": 0, **dict.fromkeys(INSTRUMENT_KEYS)}
        entry["not_run"] = run.not_run.get(name, "not asked for (--arms)")
        return entry
    return aggregate(run.outcomes[name])


def _details(run: ABRun, name: str) -> dict[str, Any]:
    outcomes = run.outcomes[name]
    means: dict[str, Any] = {}
    for key in INSTRUMENT_KEYS:
        values = [per_task(o.instruments, key) for o in outcomes]
        lo, hi = bootstrap_ci(values)
        means[key] = {"mean": round(sum(values) / len(values), 4),
                      "ci95": [round(lo, 4), round(hi, 4)]}
    ends = Counter(f"{o.status}: {o.reason}" if o.reason else o.status for o in outcomes)
    return {"median_wall_s": median_wall(outcomes), "per_task": means,
            "ended": dict(ends.most_common(12)), "precision": precision(outcomes)}


def build_report(run: ABRun, decisions: Sequence[Decision], *, tasks_dir: str, split: str
                 ) -> dict[str, Any]:
    """The report object; `arms` lists every name of the protocol, in report order."""
    populations = by_population(run.tasks, run.outcomes)
    present = {population_of(t) for t in run.tasks}
    return {
        "arms": {name: _arm_entry(run, name) for name in ALL_NAMES},
        "decisions": [d.to_dict() for d in decisions],
        "details": {name: _details(run, name) for name in run.outcomes if run.outcomes[name]},
        "populations": populations,
        "run": {"tasks_dir": tasks_dir, "split": split, "tasks": len(run.tasks),
                "packages": sorted({t.package for t in run.tasks}), "jobs": run.jobs,
                "faults": {"rate": run.faults.rate, "seed": run.faults.seed,
                           "kinds": list(run.faults.kinds)},
                "model": run.model, "wall_s": run.wall_s, "sessions": run.sessions,
                "resumed_jobs": run.resumed_jobs,
                "load": [round(x, 2) for x in os.getloadavg()]},
        "notes": [POPULATION_NOTES[p] for p in sorted(present) if p in POPULATION_NOTES]
        + list(NOTES),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


def _interval(value: Any, ci: Any) -> str:
    return "–" if value is None else f"{_cell(value)} [{_cell(ci[0])}, {_cell(ci[1])}]"


def _population_lines(report: dict[str, Any]) -> list[str]:
    """Resolve rate and precision per population and arm, with their 95% intervals."""
    lines = ["", "## Resolve rate and precision by population", "",
             "Precision is resolved / accepted; intervals are 95% bootstrap intervals.", "",
             "| population | arm | tasks | resolved | resolve rate [95% CI] | accepted | "
             "precision [95% CI] |", "|---|---|---|---|---|---|---|"]
    for entry in report.get("populations", {}).values():
        for name, p in entry["arms"].items():
            lines.append(f"| {entry['label']} | {name} | {p['tasks']} | {p['resolved']} | "
                         f"{_interval(p['resolve_rate'], p['resolve_ci95'])} | {p['accepted']} | "
                         f"{_interval(p['precision'], p['precision_ci95'])} |")
    return lines


def to_markdown(report: dict[str, Any], figures: Sequence[str] = ()) -> str:
    run = report["run"]
    named = "; ".join(f"{e['label']}: {e['tasks']}" for e in report.get("populations", {})
                      .values())
    lines = [f"# A/B report: {run['tasks']} {run['split']} tasks",
             "", f"Populations: {named or '–'}.", "",
             f"Packages: {', '.join(run['packages']) or '–'}. Fault rate {run['faults']['rate']} "
             f"(seed {run['faults']['seed']}). Model: {run['model'] or 'none (empty L column)'}. "
             f"Wall time {run['wall_s']} s with {run['jobs']} job(s), load {run['load']}."
             + (f" Resumed: {run['sessions']} sessions; the wall time counts each stopped "
                "session up to its last finished job."
                if run.get("sessions", 1) > 1 else ""),
             "", "## Instruments", "",
             "| arm | tasks | " + " | ".join(INSTRUMENT_KEYS[:1]) + " | accepted | precision | "
             + " | ".join(INSTRUMENT_KEYS[1:]) + " | median wall s |",
             "|---" * (len(INSTRUMENT_KEYS) + 5) + "|"]
    for name, entry in report["arms"].items():
        if "not_run" in entry:
            lines.append(f"| {name} | not run: {entry['not_run']} |" + " |" * (len(INSTRUMENT_KEYS) + 3))
            continue
        detail = report["details"].get(name, {})
        prec = detail.get("precision") or {}
        lines.append(f"| {name} | {entry['tasks']} | {_cell(entry[INSTRUMENT_KEYS[0]])} | "
                     f"{_cell(prec.get('accepted'))} | "
                     f"{_interval(prec.get('precision'), prec.get('precision_ci95'))} | "
                     + " | ".join(_cell(entry[k]) for k in INSTRUMENT_KEYS[1:])
                     + f" | {_cell(detail.get('median_wall_s'))} |")
    lines += _population_lines(report)
    lines += ["", "## Decisions (§8.3, §8.4, 95% paired bootstrap over tasks)", ""]
    for d in report["decisions"]:
        lines.append(f"- **{d['subject']}** vs {d['against']} ({d['rule']}): "
                     f"**{d['verdict'].upper()}**: {d['reason']}")
        for c in d["evidence"]:
            if c["verdict"] != "same":
                lines.append(f"  - {c['instrument']}: {c['verdict']} (gain {c['gain']}, "
                             f"CI {c['ci95']}, n={c['n']})")
        if d.get("precision"):
            lines.append("  - precision (reported, not deciding): " + "; ".join(
                f"{arm} {_interval(p['precision'], p['precision_ci95'])} of {p['accepted']} "
                "accepted" for arm, p in d["precision"].items()))
    if figures:
        lines += ["", "## Figures", ""] + [f"![{Path(f).stem}]({Path(f).name})" for f in figures]
    lines += ["", "## Notes", ""] + [f"- {n}" for n in report["notes"]]
    return "\n".join(lines) + "\n"


def write_report(out: Path, report: dict[str, Any], run: ABRun, figures: Sequence[str] = ()
                 ) -> list[Path]:
    """report.json, report.md and outcomes.jsonl (one line per task and arm) under `out`."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.json", out / "report.md", out / "outcomes.jsonl"]
    paths[0].write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    paths[1].write_text(to_markdown(report, figures), encoding="utf-8")
    paths[2].write_text("".join(json.dumps(o.to_dict(), sort_keys=True) + "\n"
                                for name in run.outcomes for o in run.outcomes[name]),
                        encoding="utf-8")
    return paths
