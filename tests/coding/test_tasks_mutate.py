"""Mutation operators: single-site, applicable, compilable, invertible, and equivalence-aware."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.coding.interface import Mutation
from frostline.coding.tasks.mutate import OPERATORS, apply, bytecode_identical, candidates

SOURCE = '''\
def f(a, b, xs):
    total = 0
    for x in xs:
        if x < a and not b:
            total += x * 2
        elif x is None:
            continue
        else:
            break
    while total >= 10 or a in xs:
        total = total // 2 - 1
    return total == 3, True, a << 1, "é" + str(b != a)
'''

# Operators that swap one token for another; applying the inverse restores the line.
INVERSE = {"+": "-", "-": "+", "<": "<=", "<=": "<", ">=": ">", ">": ">=", "==": "!=",
           "!=": "==", "and": "or", "or": "and", "+=": "-=", "-=": "+=", "break": "continue",
           "continue": "break", "True": "False", "False": "True"}


def test_every_operator_fires_on_the_sample() -> None:
    found = candidates(SOURCE, "m.py", range(1, 20))
    assert {m.operator for m in found} == set(OPERATORS)


def test_only_covered_lines_are_mutated() -> None:
    found = candidates(SOURCE, "m.py", [4, 11])
    assert found and {m.line for m in found} == {4, 11}


def test_each_candidate_changes_exactly_one_line_and_compiles() -> None:
    original = SOURCE.split("\n")
    for m in candidates(SOURCE, "m.py", range(1, 20)):
        mutant = apply(SOURCE, m).split("\n")
        changed = [i for i, (a, b) in enumerate(zip(original, mutant, strict=True)) if a != b]
        assert changed == [m.line - 1]
        assert original[m.line - 1] == m.before and mutant[m.line - 1] == m.after
        compile("\n".join(mutant), "m.py", "exec")


def test_byte_offsets_are_respected_on_non_ascii_lines() -> None:
    found = [m for m in candidates(SOURCE, "m.py", [12]) if m.operator == "compare"]
    assert [m.after.strip() for m in found] == [
        'return total != 3, True, a << 1, "é" + str(b != a)',
        'return total == 3, True, a << 1, "é" + str(b == a)']


def test_swapped_tokens_invert() -> None:
    for m in candidates(SOURCE, "m.py", range(1, 20)):
        if m.operator not in ("compare", "boolean", "aug_assign", "loop_control", "arith"):
            continue
        a, b = m.before.split(), m.after.split()
        diffs = [(x, y) for x, y in zip(a, b, strict=False) if x != y]
        if len(a) == len(b) and len(diffs) == 1 and diffs[0][0] in INVERSE:
            assert INVERSE[diffs[0][1]] == diffs[0][0]


def test_apply_refuses_a_line_that_changed() -> None:
    with pytest.raises(ValueError, match="does not read"):
        apply(SOURCE, Mutation("m.py", 2, "number", "    total = 5", "    total = 6"))


def test_bytecode_identical_finds_equivalent_spellings() -> None:
    assert bytecode_identical("x = 1.0\n", "x = 1.00\n")
    assert bytecode_identical("y = (2)\n", "y = 2\n")
    assert not bytecode_identical("x = 1\n", "x = 2\n")
    assert not bytecode_identical("a = b < c\n", "a = b <= c\n")


names = st.sampled_from(["a", "b", "c", "xs"])
ops = st.sampled_from(["+", "-", "*", "//", "<", "<=", "==", "!=", "and", "or", "is", "in"])


@st.composite
def expressions(draw: st.DrawFn) -> str:
    parts = [draw(names)]
    for _ in range(draw(st.integers(1, 4))):
        parts += [draw(ops), draw(st.one_of(names, st.integers(0, 99).map(str)))]
    return " ".join(parts)


@settings(max_examples=150, deadline=None)
@given(st.lists(expressions(), min_size=1, max_size=5))
def test_generated_modules_yield_valid_single_site_mutants(exprs: list[str]) -> None:
    source = "def g(a, b, c, xs):\n" + "".join(f"    v{i} = {e}\n" for i, e in enumerate(exprs))
    source += "    return 0\n"
    lines = source.split("\n")
    for m in candidates(source, "g.py", range(1, len(lines) + 1)):
        mutant = apply(source, m)
        ast.parse(mutant)
        assert sum(x != y for x, y in zip(lines, mutant.split("\n"), strict=True)) == 1
        assert m.before != m.after
