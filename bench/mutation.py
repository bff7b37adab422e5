"""Checker validity by mutation (the paper's P2): how often does the checker get it wrong?

Over the valid corpus, destroying operators make each script violate one rule, and preserving
operators change it without changing what the rules judge (``bench.mutation_ops``,
``bench.mutation_preserving``). Two error rates follow:

- α = destroying mutants the checker accepts / destroying mutants (a false accept),
- β = preserving mutants the checker rejects / preserving mutants (a false reject),

each with a Wilson 95% interval and per-operator denominators, and for destroying mutants
whether the operator's target rule fired. Both rates must be zero. Mutants of one base share
its structure, so the intervals are descriptive, not independent-sample statistics.

Run: ``python -m bench.mutation [--seed 0] [--per-base 2] [--bases N] [--json] [--failures]``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.corpus import CorpusScript, load
from bench.mutation_ops import DESTROYING, Operator
from bench.mutation_preserving import PRESERVING

OPERATORS: tuple[Operator, ...] = DESTROYING + PRESERVING


@dataclass(frozen=True)
class Mutant:
    base: str
    operator: str
    kind: str
    rule: str | None
    where: str
    source: str


@dataclass(frozen=True)
class Outcome:
    mutant: Mutant
    valid: bool
    errors: frozenset[str]

    @property
    def wrong(self) -> bool:
        """A false accept (destroying) or a false reject (preserving)."""
        return self.valid if self.mutant.kind == "destroying" else not self.valid

    @property
    def hit(self) -> bool:
        """For a destroying mutant: did the operator's target rule fire as an error?"""
        return self.mutant.rule in self.errors


@dataclass
class OperatorStats:
    operator: Operator
    applicable: int = 0
    not_applicable: int = 0
    mutants: int = 0
    wrong: int = 0
    hits: int = 0
    also: Counter[str] = field(default_factory=Counter)


@dataclass
class Study:
    """Everything one run of the study measured."""

    seed: int
    per_base: int
    bases: list[str]
    outcomes: list[Outcome]
    stats: dict[str, OperatorStats]

    def _rate(self, kind: str) -> tuple[int, int]:
        rows = [o for o in self.outcomes if o.mutant.kind == kind]
        return sum(o.wrong for o in rows), len(rows)

    @property
    def alpha(self) -> tuple[int, int]:
        """(destroying accepted, destroying total)."""
        return self._rate("destroying")

    @property
    def beta(self) -> tuple[int, int]:
        """(preserving rejected, preserving total)."""
        return self._rate("preserving")

    @property
    def misses(self) -> list[Outcome]:
        """Destroying mutants that were rejected, but not by their target rule."""
        return [o for o in self.outcomes if o.mutant.kind == "destroying" and not o.hit]

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.wrong]

    def to_dict(self) -> dict[str, Any]:
        def rate(pair: tuple[int, int]) -> dict[str, Any]:
            lo, hi = wilson(*pair)
            return {"wrong": pair[0], "total": pair[1], "wilson95": [lo, hi]}

        return {
            "seed": self.seed, "per_base": self.per_base, "bases": len(self.bases),
            "mutants": len(self.outcomes), "alpha": rate(self.alpha), "beta": rate(self.beta),
            "operators": [{
                "operator": s.operator.name, "kind": s.operator.kind, "rule": s.operator.rule,
                "applicable": s.applicable, "not_applicable": s.not_applicable,
                "mutants": s.mutants, "wrong": s.wrong,
                "target_fired": s.hits if s.operator.kind == "destroying" else None,
                "also_fired": dict(sorted(s.also.items())),
            } for s in self.stats.values()],
            "failures": [{"base": o.mutant.base, "operator": o.mutant.operator,
                          "where": o.mutant.where, "errors": sorted(o.errors)}
                         for o in self.failures],
            "misses": [{"base": o.mutant.base, "operator": o.mutant.operator,
                        "where": o.mutant.where, "errors": sorted(o.errors)}
                       for o in self.misses],
        }


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for k successes out of n (0, 0 when n is 0)."""
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def select_bases(scripts: Sequence[CorpusScript], count: int | None, seed: int) -> list[CorpusScript]:
    """A deterministic hash-selected subset of the bases (all of them when count is None)."""
    if count is None or count >= len(scripts):
        return list(scripts)
    ranked = sorted(scripts, key=lambda s: hashlib.sha256(f"{seed}:{s.name}".encode()).hexdigest())
    return sorted(ranked[:count], key=lambda s: s.name)


def generate(bases: Sequence[CorpusScript], *, seed: int = 0, per_base: int = 2,
             operators: Sequence[Operator] = OPERATORS) -> tuple[list[Mutant], dict[str, OperatorStats]]:
    """Apply every operator to every base; keep up to ``per_base`` mutants per pair.

    The choice among an operator's places is made by a generator seeded with
    (seed, base, operator), so the corpus is the same on every run and machine.
    """
    stats = {op.name: OperatorStats(op) for op in operators}
    mutants: list[Mutant] = []
    for base in bases:
        tree = ast.parse(base.source)
        for op in operators:
            rng = random.Random(f"{seed}:{base.name}:{op.name}")
            edits, seen = [], {base.source}
            for source, where in op.apply(base.source, tree, rng):
                if source not in seen:
                    seen.add(source)
                    edits.append((source, where))
            if not edits:
                stats[op.name].not_applicable += 1
                continue
            stats[op.name].applicable += 1
            picked = sorted(rng.sample(range(len(edits)), min(per_base, len(edits))))
            for i in picked:
                source, where = edits[i]
                if op.rule != "R00":
                    _must_parse(source, base.name, op.name, where)
                mutants.append(Mutant(base.name, op.name, op.kind, op.rule, where, source))
                stats[op.name].mutants += 1
    return mutants, stats


def _must_parse(source: str, base: str, op: str, where: str) -> None:
    try:
        ast.parse(source)
    except SyntaxError as exc:  # a harness bug, not a finding about the checker
        raise RuntimeError(f"operator {op} produced unparseable source for {base} ({where}): {exc}") from exc


def run(*, seed: int = 0, per_base: int = 2, bases: int | None = None,
        check: Callable[..., Any] | None = None) -> Study:
    """Generate the mutants and judge each with the checker (default envelope, all rules)."""
    if check is None:
        from frostline.script import check as check_fn
        check = check_fn
    chosen = select_bases(load("valid"), bases, seed)
    mutants, stats = generate(chosen, seed=seed, per_base=per_base)
    outcomes = []
    for m in mutants:
        report = check(m.source)
        errors = frozenset(v.rule for v in report.violations if v.severity == "error")
        outcome = Outcome(m, bool(report.valid), errors)
        outcomes.append(outcome)
        s = stats[m.operator]
        s.wrong += outcome.wrong
        if m.kind == "destroying":
            s.hits += outcome.hit
            s.also.update(errors - {m.rule})
        else:
            s.also.update(errors)
    return Study(seed, per_base, [b.name for b in chosen], outcomes, stats)


# --- output ----------------------------------------------------------------------------------


def _rows(study: Study) -> list[list[str]]:
    rows = []
    for s in study.stats.values():
        op = s.operator
        destroying = op.kind == "destroying"
        rows.append([
            op.name, op.kind, op.rule or "-", f"{s.applicable}/{s.applicable + s.not_applicable}",
            str(s.mutants),
            f"{s.wrong}/{s.mutants}",
            f"{s.hits}/{s.mutants}" if destroying else "-",
            ", ".join(f"{r}×{n}" for r, n in sorted(s.also.items())) or "-",
        ])
    return rows


HEADERS = ["operator", "kind", "target", "applies", "mutants", "wrong", "target fired", "also fired"]
# "wrong" is accepted for a destroying operator and rejected for a preserving one.


def summary(study: Study) -> str:
    (a, na), (b, nb) = study.alpha, study.beta
    alo, ahi = wilson(a, na)
    blo, bhi = wilson(b, nb)
    return (f"{len(study.outcomes)} mutants over {len(study.bases)} bases (seed {study.seed}, "
            f"≤{study.per_base} per base and operator)\n"
            f"α = {a}/{na} = {a / max(na, 1):.3f}  Wilson 95% [{alo:.3f}, {ahi:.3f}]   "
            f"(destroying mutants accepted)\n"
            f"β = {b}/{nb} = {b / max(nb, 1):.3f}  Wilson 95% [{blo:.3f}, {bhi:.3f}]   "
            f"(preserving mutants rejected)\n"
            f"target rule fired on {sum(o.hit for o in study.outcomes if o.mutant.kind == 'destroying')}"
            f"/{na} destroying mutants")


def render(study: Study, *, failures: bool = False) -> None:
    """Print the per-operator table and the summary (rich when available)."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text keeps the study runnable without rich
        widths = [max(len(h), *(len(r[i]) for r in _rows(study))) for i, h in enumerate(HEADERS)]
        print("  ".join(h.ljust(w) for h, w in zip(HEADERS, widths, strict=True)))
        for row in _rows(study):
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        print(summary(study))
    else:
        table = Table(title="Checker validity by mutation (P2); wrong = destroying accepted or "
                            "preserving rejected")
        for h in HEADERS:
            table.add_column(h, overflow="fold")
        for row in _rows(study):
            table.add_row(*row)
        console = Console(width=max(Console().width, 132))
        console.print(table)
        console.print(summary(study))
    if failures:
        for o in study.failures + study.misses:
            print(f"\n--- {o.mutant.operator} on {o.mutant.base} ({o.mutant.where}); "
                  f"valid={o.valid} errors={sorted(o.errors)}\n{o.mutant.source}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.mutation", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-base", type=int, default=2, help="mutants per base and operator")
    parser.add_argument("--bases", type=int, default=None, help="hash-selected subset of bases")
    parser.add_argument("--json", action="store_true", help="print the study as JSON")
    parser.add_argument("--failures", action="store_true", help="print every wrong or missed mutant")
    ns = parser.parse_args(argv)
    study = run(seed=ns.seed, per_base=ns.per_base, bases=ns.bases)
    if ns.json:
        print(json.dumps(study.to_dict(), indent=2))
    else:
        render(study, failures=ns.failures)
    return 0 if not study.failures and not study.misses else 1


if __name__ == "__main__":
    sys.exit(main())
