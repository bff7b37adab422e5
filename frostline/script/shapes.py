"""Shapes of script nodes that several phases of the checker ask about.

The walk (R02, R12), the resolution phase and σ assignment must agree on what a capability
call is, what counts as a use of ``ctx``, which values are literals and which names are
dunders; one definition here keeps them from drifting apart.
"""

from __future__ import annotations

import ast
from typing import TypeGuard


def is_ctx(node: ast.AST) -> TypeGuard[ast.Name]:
    """The name ``ctx`` itself (as a value, an argument or a receiver)."""
    return isinstance(node, ast.Name) and node.id == "ctx"


def is_ctx_attribute(node: ast.AST) -> TypeGuard[ast.Attribute]:
    """``ctx.<attr>``: a primitive or an attribute the ctx API does not have."""
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
        and node.value.id == "ctx"


def is_capability_call(node: ast.AST) -> TypeGuard[ast.Call]:
    """True for ``ctx.run(...)``: the only expression that can reach a provider."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "run" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "ctx")


def is_literal(node: ast.AST) -> bool:
    """A module-level constant value: numbers, strings, and displays of literals."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, int | float)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(is_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and is_literal(k) for k in node.keys) and all(
            is_literal(v) for v in node.values)
    return False


def is_dunder(name: str) -> bool:
    """``__name__``-style names, which reach interpreter internals (R07)."""
    return name.startswith("__") and name.endswith("__") and len(name) > 4
