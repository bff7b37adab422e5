"""The A/B figures (matplotlib, the optional extra `ab`): resolve rate against tokens and
against wall time per arm, the instruments per ablation beside arm 4, and resolve rate beside
precision (resolved / accepted) per arm and population. Every figure names the populations its
tasks come from (injected mutants are an upper bound).

matplotlib is imported only here and only when figures are drawn; `require_matplotlib` lets a
command fail before it runs anything when the extra is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from frostline.coding.interface import ABLATION_NAMES, INSTRUMENT_KEYS
from frostline.errors import (
    MissingExtra as MissingExtra,
)

__all__ = ["FIGURES", "MissingExtra", "draw", "require_matplotlib"]

FIGURES = ("resolve_vs_tokens.png", "resolve_vs_wall.png", "ablations.png", "precision.png")


def require_matplotlib() -> Any:
    """The pyplot module on the non-interactive backend, or MissingExtra saying how to get it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtra("the A/B figures need matplotlib, which is not installed: pip "
                           "install 'frostline[ab]' (or pass --no-figures)",
                           extra="ab") from exc
    return plt


def _populations(report: dict[str, Any]) -> str:
    """The populations of the report's tasks, as its figures' subtitle."""
    return "; ".join(f"{e['label']}, {e['tasks']} tasks"
                     for e in report.get("populations", {}).values()) or "no tasks"


def _scatter(plt: Any, report: dict[str, Any], x_key: str, label: str, path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 4.5))
    for name, entry in report["arms"].items():
        if "not_run" in entry or not entry["tasks"]:
            continue
        per = report["details"][name]["per_task"]
        x, y = per[x_key]["mean"], per["resolve_rate"]["mean"]
        lo, hi = per["resolve_rate"]["ci95"]
        ax.errorbar([x], [y], yerr=[[y - lo], [hi - y]], fmt="o", capsize=3, label=name)
        ax.annotate(name, (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.set_xlabel(label)
    ax.set_ylabel("resolve rate (95% bootstrap CI)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(f"resolve rate vs {label}\n{_populations(report)}", fontsize=9)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ablations(plt: Any, report: dict[str, Any], path: Path) -> None:
    names = ["arm4", *ABLATION_NAMES]
    fig, axes = plt.subplots(3, 3, figsize=(11, 8))
    for ax, key in zip(axes.flat, INSTRUMENT_KEYS, strict=True):
        values, colors = [], []
        for name in names:
            per = report["details"].get(name, {}).get("per_task", {})
            values.append(per[key]["mean"] if key in per else 0.0)
            colors.append("tab:blue" if key in per else "lightgrey")
        ax.bar(range(len(names)), values, color=colors)
        ax.set_xticks(range(len(names)), [n.removeprefix("no_") for n in names], rotation=35,
                      fontsize=7, ha="right")
        ax.set_title(f"{key} (mean per task)", fontsize=9)
    fig.suptitle(f"instruments per ablation (grey: not run); {_populations(report)}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _precision(plt: Any, report: dict[str, Any], path: Path) -> None:
    """Resolve rate and precision per arm, one panel per population, 95% bootstrap bars."""
    pops = list(report.get("populations", {}).values()) or [{"label": "no tasks", "arms": {}}]
    fig, axes = plt.subplots(1, len(pops), figsize=(6 * len(pops), 4.5), squeeze=False)
    for ax, pop in zip(axes[0], pops, strict=True):
        names = list(pop["arms"])
        for offset, (key, ci, color) in enumerate((
                ("resolve_rate", "resolve_ci95", "tab:blue"),
                ("precision", "precision_ci95", "tab:orange"))):
            xs, ys, lo, hi = [], [], [], []
            for i, name in enumerate(names):
                entry = pop["arms"][name]
                if entry[key] is None:
                    continue
                xs.append(i + (offset - 0.5) * 0.35)
                ys.append(entry[key])
                lo.append(entry[key] - entry[ci][0])
                hi.append(entry[ci][1] - entry[key])
            ax.bar(xs, ys, width=0.35, color=color, yerr=[lo, hi], capsize=3,
                   label="precision (resolved / accepted)" if offset else "resolve rate")
        ax.set_xticks(range(len(names)), names, rotation=35, fontsize=7, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"{pop['label']} ({pop.get('tasks', 0)} tasks)", fontsize=9)
        ax.legend(fontsize=7, loc="lower left")
    fig.suptitle("resolve rate and precision per arm (95% bootstrap CI)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def draw(report: dict[str, Any], out: Path) -> list[str]:
    """Write the figures of FIGURES under `out`; returns their paths."""
    plt = require_matplotlib()
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f for f in FIGURES]
    _scatter(plt, report, "tokens", "tokens per task", paths[0])
    _scatter(plt, report, "wall_s", "wall seconds per task", paths[1])
    _ablations(plt, report, paths[2])
    _precision(plt, report, paths[3])
    return [str(p) for p in paths]
