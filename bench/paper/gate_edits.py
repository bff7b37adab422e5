"""Table VII: what the gate admits — seven deterministic edits applied to committed prefixes.

Each valid corpus script is first run to completion through the production runtime, so its
maximal prefix (every capability call it made) is committed and frozen. Seven edits are then
applied to its source and the candidate is handed to the production gate
(`frostline.runtime.gate_check.gate_source` against `frozen_map` of the committed slots):

- literal in payload — a string or number literal inside a frozen call's payload changes;
- computed payload — the payload expression ``P`` becomes ``{**P}`` (same value, new AST);
- statement outside — a non-call statement's value ``X`` becomes ``[X][0]``;
- insert a non-call statement — a new first statement in ``orchestrate``;
- wrap in a new block — the statement holding the last frozen call moves under ``if True:``;
- delete a call — the statement holding the last frozen call is replaced by ``pass``;
- append a new call — a new ``ctx.run`` after every committed call.

A wrap or a delete takes the call's ordinal out of its block, so a later call of the same block
that never committed (a branch the run did not take) moves onto the frozen site; when that call
names another capability the gate reports ``capability_changed`` instead of ``removed``. Either
way the candidate stops before anything is spent.

The paper's split: payload edits stop with ``call_changed``, wrap and delete stop with
``removed``, the other three are accepted. Run: ``python -m bench.paper.gate_edits [--scripts N]``.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.corpus import CorpusScript, load
from bench.paper.common import Lab, table
from frostline.contract.gate import FrozenSite, frozen_map
from frostline.runtime.gate_check import gate_source
from frostline.script import sites

EDITS = ("literal in payload", "computed payload", "statement outside",
         "insert a non-call statement", "wrap in a new block", "delete a call",
         "append a new call")
EXPECTED = {"literal in payload": "call_changed", "computed payload": "call_changed",
            "statement outside": "accepted", "insert a non-call statement": "accepted",
            "wrap in a new block": "removed", "delete a call": "removed",
            "append a new call": "accepted"}


@dataclass(frozen=True)
class Verdict:
    """The gate's answer for one (script, edit) pair; `verdict` is None when not applicable."""

    script: str
    edit: str
    verdict: str | None
    kinds: tuple[str, ...] = ()


# --- source surgery --------------------------------------------------------------------------
class _Src:
    """A script's lines with AST positions (UTF-8 byte columns) turned into text edits."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        self.lines = source.splitlines(keepends=True)

    def _offset(self, line: int, col: int) -> int:
        before = sum(len(s) for s in self.lines[:line - 1])
        return before + len(self.lines[line - 1].encode()[:col].decode())

    def replace(self, node: ast.AST, text: str) -> str:
        start = self._offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end = self._offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
        return self.source[:start] + text + self.source[end:]

    def segment(self, node: ast.AST) -> str:
        return ast.get_source_segment(self.source, node) or ""

    def statement_lines(self, stmt: ast.stmt) -> tuple[int, int, str]:
        first = self.lines[stmt.lineno - 1]
        indent = first[:len(first) - len(first.lstrip())]
        return stmt.lineno, stmt.end_lineno or stmt.lineno, indent


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _stmt_of(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> ast.stmt:
    while not isinstance(node, ast.stmt):
        node = parents[node]
    return node


def _has_run(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
               and n.func.attr == "run" for n in ast.walk(node))


def _frozen_calls(src: _Src, frozen: dict[str, FrozenSite]) -> list[ast.Call]:
    """The ctx.run calls of the source whose sites are frozen, in source order."""
    at = {(s.line, s.col - 1): s.site for s in sites(src.source)}  # col is 1-based
    calls = [n for n in ast.walk(src.tree) if isinstance(n, ast.Call)
             and at.get((n.lineno, n.col_offset)) in frozen]
    return sorted(calls, key=lambda c: (c.lineno, c.col_offset))


def _entry(src: _Src) -> ast.AsyncFunctionDef:
    return next(n for n in src.tree.body
                if isinstance(n, ast.AsyncFunctionDef) and n.name == "orchestrate")


def edit_literal(src: _Src, calls: list[ast.Call]) -> str | None:
    for call in calls:
        if len(call.args) < 2:
            continue
        for node in ast.walk(call.args[1]):
            if isinstance(node, ast.Constant) and not isinstance(node.value, bool):
                if isinstance(node.value, str):
                    return src.replace(node, repr(node.value + " (revised)"))
                if isinstance(node.value, int | float):
                    return src.replace(node, repr(node.value + 1))
    return None


def edit_computed(src: _Src, calls: list[ast.Call]) -> str | None:
    for call in calls:
        if len(call.args) >= 2:
            return src.replace(call.args[1], "{**" + src.segment(call.args[1]) + "}")
    return None


def edit_outside(src: _Src, calls: list[ast.Call]) -> str | None:
    for node in ast.walk(src.tree):
        if (isinstance(node, ast.Return | ast.Assign) and node.value is not None
                and not _has_run(node)):
            return src.replace(node.value, "[" + src.segment(node.value) + "][0]")
    return None


def edit_insert(src: _Src, calls: list[ast.Call]) -> str | None:
    first = _entry(src).body[0]
    line, _, indent = src.statement_lines(first)
    lines = list(src.lines)
    lines.insert(line - 1, f'{indent}repair_note = "inserted before the committed calls"\n')
    return "".join(lines)


def edit_wrap(src: _Src, calls: list[ast.Call]) -> str | None:
    if not calls:
        return None
    stmt = _stmt_of(calls[-1], _parents(src.tree))
    start, end, indent = src.statement_lines(stmt)
    lines = list(src.lines)
    body = ["    " + s if s.strip() else s for s in lines[start - 1:end]]
    lines[start - 1:end] = [f"{indent}if True:\n", *body]
    return "".join(lines)


def edit_delete(src: _Src, calls: list[ast.Call]) -> str | None:
    if not calls:
        return None
    stmt = _stmt_of(calls[-1], _parents(src.tree))
    start, end, indent = src.statement_lines(stmt)
    lines = list(src.lines)
    lines[start - 1:end] = [f"{indent}pass\n"]
    return "".join(lines)


def edit_append(src: _Src, calls: list[ast.Call]) -> str | None:
    body = _entry(src).body
    last = body[-1]
    new = 'appended = await ctx.run("text.generate", {"prompt": "a closing note"})\n'
    if isinstance(last, ast.Return):
        if _has_run(last):
            return None  # nothing can follow the call that the return makes
        line, _, indent = src.statement_lines(last)
        lines = list(src.lines)
        lines.insert(line - 1, indent + new)
        return "".join(lines)
    _, end, indent = src.statement_lines(last)
    lines = list(src.lines)
    lines.insert(end, indent + new)
    return "".join(lines)


EDIT_FUNCS: dict[str, Callable[[_Src, list[ast.Call]], str | None]] = dict(zip(EDITS, (
    edit_literal, edit_computed, edit_outside, edit_insert, edit_wrap, edit_delete, edit_append),
    strict=True))


# --- the study -------------------------------------------------------------------------------
def apply_edits(script: str, source: str, frozen: dict[str, FrozenSite]) -> list[Verdict]:
    """Apply the seven edits to `source` and ask the gate about each candidate."""
    out = []
    for edit in EDITS:
        src = _Src(source)
        candidate = EDIT_FUNCS[edit](src, _frozen_calls(src, frozen))
        if candidate is None or candidate == source:
            out.append(Verdict(script, edit, None))
            continue
        result = gate_source(frozen, candidate)
        kinds = tuple(sorted({c.kind for c in result.counterexamples}))
        verdict = "accepted" if result.accepted else ("removed" if "removed" in kinds
                                                      else kinds[0])
        out.append(Verdict(script, edit, verdict, kinds))
    return out


def choose(count: int) -> list[CorpusScript]:
    """The first `count` valid corpus scripts by name (deterministic)."""
    return sorted(load("valid"), key=lambda s: s.name)[:count]


def study(scripts: Sequence[CorpusScript], lab: Lab) -> list[Verdict]:
    """Run each script to completion (maximal prefix), then gate the seven edits."""
    verdicts: list[Verdict] = []
    for script in scripts:
        run_id = lab.fresh_id(f"edits-{script.name}")
        outcome = lab.run(run_id, script.source, args=script.args)
        if outcome.status != "succeeded":
            raise RuntimeError(f"{script.name} did not complete: {outcome.status} "
                               f"{outcome.error}")
        slots = lab.store.list_slots(run_id)
        frozen = frozen_map(slots, lab.store.list_attempts(run_id))
        if len(slots) != outcome.executed:
            raise RuntimeError(f"{script.name}: {len(slots)} slots for {outcome.executed} calls")
        verdicts += apply_edits(script.name, script.source, frozen)
    return verdicts


def summary(verdicts: Sequence[Verdict]) -> dict[str, Counter[str]]:
    """edit → Counter of verdicts (None = not applicable)."""
    out: dict[str, Counter[str]] = {e: Counter() for e in EDITS}
    for v in verdicts:
        out[v.edit][v.verdict or "n/a"] += 1
    return out


def render(verdicts: Sequence[Verdict], n_scripts: int) -> str:
    by_edit = summary(verdicts)
    rows: list[list[Any]] = []
    for edit in EDITS:
        c = by_edit[edit]
        rows.append([edit, sum(v for k, v in c.items() if k != "n/a"), c["accepted"], c["call_changed"], c["removed"],
                     c["capability_changed"], c["n/a"], EXPECTED[edit]])
    applied = [v for v in verdicts if v.verdict is not None]
    accepted = sum(1 for v in applied if v.verdict == "accepted")
    rows.append(["total", len(applied), accepted,
                 sum(1 for v in applied if v.verdict == "call_changed"),
                 sum(1 for v in applied if v.verdict == "removed"),
                 sum(1 for v in applied if v.verdict == "capability_changed"),
                 len(verdicts) - len(applied), ""])
    return table(["edit", "applied", "accepted", "call_changed", "removed", "cap_changed", "n/a",
                  "expected"],
                 rows, f"Table VII: seven edits on {n_scripts} committed prefixes "
                 f"({len(verdicts)} pairs, {len(applied)} apply, {accepted} accepted, "
                 f"{len(applied) - accepted} stopped)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripts", type=int, default=20)
    opts = parser.parse_args(argv)
    with Lab() as lab:
        scripts = choose(opts.scripts)
        verdicts = study(scripts, lab)
    print(render(verdicts, len(scripts)))
    off = [v for v in verdicts if v.verdict is not None and v.verdict != EXPECTED[v.edit]]
    for v in off:
        print(f"  off the expected split: {v.script} / {v.edit}: {v.verdict} {v.kinds}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
