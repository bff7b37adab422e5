"""What the broker's parts share has one writer each, checked over the package's source.

A call's outcome is written only by `Call` (frostline.runtime.call), through the transition
check of `Call.conclude`; each `BrokerStats` field only by the part its docstring names. A
new writer elsewhere would bypass the check or blur who decides what, so these scans fail.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "frostline"

#: BrokerStats field → the modules that may change it.
STATS_WRITERS = {
    "calls": {"runtime/broker.py", "runtime/dry_replay.py"},
    "rejected_frames": {"runtime/broker.py", "runtime/dry_replay.py"},
    "divergences": {"runtime/rule.py"},
    "semantic_repeats": {"runtime/rule.py"},
    "denials": {"runtime/rule.py"},
    "provider_calls": {"runtime/dispatch.py"},
    "spend_usd": {"runtime/dispatch.py"},
    "executed": set(),  # counted from the rows' outcomes
    "replayed": set(),
}
_MUTATORS = {"append", "extend", "insert", "pop", "remove", "clear", "setdefault", "update"}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        yield (str(path.relative_to(PACKAGE)),
               ast.parse(path.read_text(encoding="utf-8")))


def _written(tree: ast.Module) -> Iterator[tuple[ast.expr, int]]:
    """Every expression the module assigns to, augments or calls a mutating method on."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                yield target, node.lineno
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            yield node.target, node.lineno
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in _MUTATORS):
            yield node.func.value, node.lineno


def _is_outcome(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value == "outcome"


def test_only_the_call_writes_an_outcome() -> None:
    writers = []
    for name, tree in _modules():
        for target, line in _written(tree):
            if isinstance(target, ast.Subscript) and _is_outcome(target.slice):
                writers.append(f"{name}:{line}")
        for node in ast.walk(tree):  # row.setdefault("outcome", ...), row.update(outcome=...)
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _MUTATORS
                    and (any(_is_outcome(a) for a in node.args[:1])
                         or any(k.arg == "outcome" for k in node.keywords))):
                writers.append(f"{name}:{node.lineno}")
    assert {w.split(":")[0] for w in writers} <= {"runtime/call.py"}, writers


def test_each_stats_field_has_the_writers_its_docstring_names() -> None:
    found: dict[str, set[str]] = {field: set() for field in STATS_WRITERS}
    for name, tree in _modules():
        for target, _ in _written(tree):
            if (isinstance(target, ast.Attribute) and target.attr in STATS_WRITERS
                    and _is_stats(target.value)):
                found[target.attr].add(name)
    assert found == STATS_WRITERS


def _is_stats(node: ast.expr) -> bool:
    """`stats`, `self.stats`, `self._stats` (the names the runtime gives a BrokerStats)."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in ("stats", "_stats")
