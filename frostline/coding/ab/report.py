"""The A/B report: one JSON object (what `frostline ab --json` prints) and its markdown.

`arms` maps every arm and ablation name to exactly its nine instruments and `tasks` (and
`not_run` with the reason for an arm that did not run, its instruments then null). `decisions`
holds the §8.3 and §8.4 verdicts with their evidence. `details` carries what the nine do not:
median wall time per task, how tasks ended, and per-task means with bootstrap intervals.
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
from frostline.coding.ab.stats import aggregate, bootstrap_ci, median_wall, per_task
from frostline.coding.arms import ALL_NAMES
from frostline.coding.interface import INSTRUMENT_KEYS

__all__ = ["NOTES", "build_report", "to_markdown", "write_report"]

NOTES = (
    "Tasks are single-site mutants injected by a known operator set into pinned packages; a "
    "template generator whose operators invert them meets each bug in its own search space, so "
    "resolve rates on these tasks are an upper bound for such a generator, not a measure of "
    "bugs in the wild.",
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
            "ended": dict(ends.most_common(12))}


def build_report(run: ABRun, decisions: Sequence[Decision], *, tasks_dir: str, split: str
                 ) -> dict[str, Any]:
    """The report object; `arms` lists every name of the protocol, in report order."""
    return {
        "arms": {name: _arm_entry(run, name) for name in ALL_NAMES},
        "decisions": [d.to_dict() for d in decisions],
        "details": {name: _details(run, name) for name in run.outcomes if run.outcomes[name]},
        "run": {"tasks_dir": tasks_dir, "split": split, "tasks": len(run.tasks),
                "packages": sorted({t.package for t in run.tasks}), "jobs": run.jobs,
                "faults": {"rate": run.faults.rate, "seed": run.faults.seed,
                           "kinds": list(run.faults.kinds)},
                "model": run.model, "wall_s": run.wall_s,
                "load": [round(x, 2) for x in os.getloadavg()]},
        "notes": list(NOTES),
    }


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"
    return str(value)


def to_markdown(report: dict[str, Any], figures: Sequence[str] = ()) -> str:
    run = report["run"]
    lines = [f"# A/B report: {run['tasks']} {run['split']} tasks",
             "",
             f"Packages: {', '.join(run['packages']) or '–'}. Fault rate {run['faults']['rate']} "
             f"(seed {run['faults']['seed']}). Model: {run['model'] or 'none (empty L column)'}. "
             f"Wall time {run['wall_s']} s with {run['jobs']} job(s), load {run['load']}.",
             "", "## Instruments", "",
             "| arm | tasks | " + " | ".join(INSTRUMENT_KEYS) + " | median wall s |",
             "|---" * (len(INSTRUMENT_KEYS) + 3) + "|"]
    for name, entry in report["arms"].items():
        if "not_run" in entry:
            lines.append(f"| {name} | not run: {entry['not_run']} |" + " |" * (len(INSTRUMENT_KEYS) + 1))
            continue
        median = report["details"].get(name, {}).get("median_wall_s")
        lines.append(f"| {name} | {entry['tasks']} | "
                     + " | ".join(_cell(entry[k]) for k in INSTRUMENT_KEYS)
                     + f" | {_cell(median)} |")
    lines += ["", "## Decisions (§8.3, §8.4, 95% paired bootstrap over tasks)", ""]
    for d in report["decisions"]:
        lines.append(f"- **{d['subject']}** vs {d['against']} ({d['rule']}): "
                     f"**{d['verdict'].upper()}**: {d['reason']}")
        for c in d["evidence"]:
            if c["verdict"] != "same":
                lines.append(f"  - {c['instrument']}: {c['verdict']} (gain {c['gain']}, "
                             f"CI {c['ci95']}, n={c['n']})")
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
