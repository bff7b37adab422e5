"""The mutation study (bench.mutation): the checker makes no error in either direction.

The full study also runs as ``python -m bench.mutation``; here it runs once per session with its
default seed, and a hypothesis property re-runs it on small hash-selected subsets with other
seeds.
"""

from __future__ import annotations

import ast
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import mutation
from bench.corpus import load
from bench.mutation import OPERATORS
from bench.mutation_ops import DESTROYING
from bench.mutation_preserving import PRESERVING
from frostline.script import check, sites

RULES = {f"R{i:02d}" for i in range(13)}


@pytest.fixture(scope="module")
def study() -> mutation.Study:
    return mutation.run(seed=0, per_base=2)


@pytest.fixture(scope="module")
def preserving() -> list[mutation.Mutant]:
    return mutation.generate(load("valid"), operators=PRESERVING)[0]


def test_alpha_and_beta_are_zero(study: mutation.Study) -> None:
    wrong = [(o.mutant.operator, o.mutant.base, o.mutant.where, sorted(o.errors))
             for o in study.failures]
    assert wrong == []
    assert study.alpha[0] == 0 and study.beta[0] == 0


def test_every_destroying_mutant_hits_its_target_rule(study: mutation.Study) -> None:
    assert [(o.mutant.operator, o.mutant.base, sorted(o.errors)) for o in study.misses] == []


def test_study_size_and_coverage(study: mutation.Study) -> None:
    destroying, preserving = study.alpha[1], study.beta[1]
    assert destroying + preserving >= 400
    assert destroying >= 200 and preserving >= 100
    # one operator or more for every rule, and every operator applies somewhere
    assert {op.rule for op in DESTROYING} == RULES
    assert all(s.mutants > 0 for s in study.stats.values())
    # denominators: each operator is either applicable or not applicable to every base
    assert all(s.applicable + s.not_applicable == len(study.bases) for s in study.stats.values())


def test_generation_is_deterministic() -> None:
    bases = load("valid")[:6]
    first, _ = mutation.generate(bases, seed=3)
    again, _ = mutation.generate(bases, seed=3)
    other, _ = mutation.generate(bases, seed=4)
    assert [m.source for m in first] == [m.source for m in again]
    assert [m.source for m in first] != [m.source for m in other]


def test_not_applicable_is_counted() -> None:
    # A script without any for loop, container or try gives those operators no place.
    base = next(b for b in load("valid") if b.name == "echo_smoke")
    _, stats = mutation.generate([base])
    for name in ("unslice_for", "for_to_while", "set_iteration", "widen_fanout",
                 "unguard_fanout", "bare_except"):
        assert (stats[name].applicable, stats[name].not_applicable, stats[name].mutants) == (0, 1, 0)


def _calls(source: str) -> list[str]:
    tree = ast.parse(source)
    return sorted(ast.unparse(n.args[0]) for n in ast.walk(tree)
                  if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                  and n.func.attr == "run")


def _simple(source: str) -> list[str]:
    return sorted(ast.dump(s) for s in ast.walk(ast.parse(source))
                  if isinstance(s, ast.stmt) and not hasattr(s, "body"))


def test_preserving_operators_preserve_what_they_claim(preserving: list[mutation.Mutant]) -> None:
    bases = {b.name: b.source for b in load("valid")}
    mutants = preserving
    assert mutants
    for m in mutants:
        base = bases[m.base]
        assert m.source != base
        if m.operator in ("reformat", "add_comments"):
            # layout and comments only: the AST is identical
            assert ast.dump(ast.parse(m.source)) == ast.dump(ast.parse(base)), m
        elif m.operator == "reorder_independent":
            # the same simple statements, in another order
            assert _simple(m.source) == _simple(base), m
            assert ast.dump(ast.parse(m.source)) != ast.dump(ast.parse(base))
        # every preserving edit keeps the capability calls and their literal names
        assert _calls(m.source) == _calls(base), m


def test_destroying_mutants_differ_and_parse_except_r00() -> None:
    bases = {b.name: b.source for b in load("valid")}
    mutants, _ = mutation.generate(load("valid")[:10], operators=DESTROYING)
    for m in mutants:
        assert m.source != bases[m.base]
        if m.rule == "R00":
            with pytest.raises(SyntaxError):
                ast.parse(m.source)
        else:
            ast.parse(m.source)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=1, max_value=2**31))
def test_property_no_error_under_other_seeds(seed: int) -> None:
    small = mutation.run(seed=seed, per_base=1, bases=6, check=check)
    assert small.failures == [] and small.misses == []


def test_wilson_matches_the_paper() -> None:
    # P2 reports α = 0/269 with [0.0, 1.4]% and β = 0/142 with [0.0, 2.6]%.
    assert mutation.wilson(0, 269)[1] == pytest.approx(0.014, abs=5e-4)
    assert mutation.wilson(0, 142)[1] == pytest.approx(0.026, abs=5e-4)
    lo, hi = mutation.wilson(5, 10)
    assert lo < 0.5 < hi and lo == pytest.approx(1 - hi)
    assert mutation.wilson(0, 0) == (0.0, 0.0)


def test_cli_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert mutation.main(["--bases", "4", "--per-base", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["bases"] == 4
    assert data["alpha"]["wrong"] == 0 and data["beta"]["wrong"] == 0
    assert {o["operator"] for o in data["operators"]} == {op.name for op in OPERATORS}


def test_cli_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert mutation.main(["--bases", "3", "--per-base", "1"]) == 0
    out = capsys.readouterr().out
    assert "α = 0/" in out and "β = 0/" in out and "unguard_fanout" in out


# Lemma 1 on the preserving mutants: what σ and the fingerprint may and may not see.
SAME_SITES = {"reformat", "add_comments", "add_docstring", "reorder_independent",
              "rename_locals", "split_expression", "inline_constant"}
SAME_FINGERPRINTS = {"reformat", "add_comments", "add_docstring", "reorder_independent"}


def test_preserving_mutants_keep_callsites(preserving: list[mutation.Mutant]) -> None:
    bases = {b.name: b.source for b in load("valid")}
    mutants = preserving
    checked = {name: 0 for name in SAME_SITES}
    for m in mutants:
        if m.operator not in SAME_SITES:
            continue
        before, after = sites(bases[m.base]), sites(m.source)
        assert [(s.site, s.capability) for s in after] == \
            [(s.site, s.capability) for s in before], (m.operator, m.base, m.where)
        if m.operator in SAME_FINGERPRINTS:
            assert [s.fingerprint for s in after] == [s.fingerprint for s in before], m
        checked[m.operator] += 1
    assert all(checked.values()), checked


def test_wrapping_a_call_in_a_new_block_moves_its_site(preserving: list[mutation.Mutant]) -> None:
    bases = {b.name: b.source for b in load("valid")}
    mutants = [m for m in preserving if m.operator == "wrap_try"]
    moved = 0
    for m in mutants:
        line = bases[m.base].splitlines()[int(m.where.split()[1]) - 1]
        if "ctx.run(" not in line:
            continue  # a wrapped container or helper call has no site of its own
        assert [s.site for s in sites(m.source)] != [s.site for s in sites(bases[m.base])], m
        moved += 1
    assert moved >= 20
