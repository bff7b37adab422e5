"""The symbol tables the checker builds while it walks a script.

One ``FunctionInfo`` per ``def``/``async def`` (qualified like σ: ``orchestrate.gen``), with
what later phases need: bindings of every local name (to decide whether a name is "bound once
to a bounded value"), mutations (to count how a list grows), names that escape (aliasing makes
growth invisible, so an escaped list is unbounded), names that are awaited or handed to a
container (R12), and the loads to resolve once the function's locals are all known (Python
decides locality over the whole function body, so free-name resolution is deferred).

``LoopRec`` is a loop, comprehension generator or container width whose bound is computed
after the walk, when every binding and mutation is known.

``ModuleInfo.untracked`` holds the places where a container grows through something other
than a name (``d["k"].append(x)``, ``list.append`` handed to ``map``): growth the bound
analysis cannot attribute to a name (frostline.script.growth decides what it means).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

Cost = tuple[Any, ...]  # built by frostline.script.costs, evaluated by frostline.script.spend


@dataclass(eq=False)
class LoopRec:
    """A loop (``for``, ``while``, comprehension generator) or a container width."""

    kind: str  # "for" | "while" | "comprehension" | "parallel" | "race" | "pipeline" | "dag"
    expr: ast.expr | None  # the iterable (None for while)
    func: FunctionInfo
    outer: tuple[LoopRec, ...]  # enclosing loops in the same function, outermost first
    line: int
    col: int
    nondeterministic: bool = False


@dataclass(eq=False)
class Binding:
    kind: str  # param | assign | aug | for | with | except | walrus | comp | def | match | del | unpack | lambda
    value: ast.expr | None
    loops: tuple[LoopRec, ...]


@dataclass(eq=False)
class Mutation:
    method: str  # append | insert | extend | update | setdefault | store | augadd | shrink | unknown
    arg: ast.expr | None
    loops: tuple[LoopRec, ...]
    func: FunctionInfo


@dataclass(eq=False)
class FunctionInfo:
    qual: str
    node: ast.FunctionDef | ast.AsyncFunctionDef | None  # None for the module scope
    parent: FunctionInfo | None
    params: list[str] = field(default_factory=list)
    is_async: bool = False
    children: dict[str, FunctionInfo] = field(default_factory=dict)
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    mutations: dict[str, list[Mutation]] = field(default_factory=dict)
    escapes: set[str] = field(default_factory=set)
    consumed: set[str] = field(default_factory=set)
    # Deferred references, resolved after the walk: (name, node, how it is used).
    loads: list[tuple[str, ast.Name, str]] = field(default_factory=list)
    mutation_refs: list[tuple[str, Mutation]] = field(default_factory=list)
    escape_refs: list[str] = field(default_factory=list)
    return_refs: list[str] = field(default_factory=list)  # names in the value of a `return`
    alias_refs: list[str] = field(default_factory=list)  # names bound to a second name
    aliased: set[str] = field(default_factory=set)
    aug_refs: list[str] = field(default_factory=list)  # names grown in place by `x += ...`
    consumed_refs: list[str] = field(default_factory=list)
    pending: list[tuple[str, ast.AST, str]] = field(default_factory=list)  # (name, awaitable, what)
    sinks: list[ast.expr] = field(default_factory=list)  # values turned into text (str(), f"")
    callees: list[tuple[FunctionInfo, ast.AST]] = field(default_factory=list)
    cost: Cost | None = None

    @property
    def has_ctx(self) -> bool:
        return "ctx" in self.params

    def bind(self, name: str, kind: str, value: ast.expr | None, loops: tuple[LoopRec, ...]) -> None:
        self.bindings.setdefault(name, []).append(Binding(kind, value, loops))

    def lookup_function(self, name: str, module: ModuleInfo) -> FunctionInfo | None:
        """The script function `name` resolves to lexically from here, if any."""
        scope: FunctionInfo | None = self
        while scope is not None:
            if name in scope.bindings and name not in scope.children:
                return None  # a local variable shadows any outer function
            if name in scope.children:
                return scope.children[name]
            scope = scope.parent
        if name in module.functions:
            return module.functions[name]
        return None

    def defining_scope(self, name: str) -> FunctionInfo | None:
        scope: FunctionInfo | None = self
        while scope is not None:
            if name in scope.bindings:
                return scope
            scope = scope.parent
        return None


@dataclass(eq=False)
class ModuleInfo:
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    constants: dict[str, ast.expr] = field(default_factory=dict)
    escaped: set[str] = field(default_factory=set)  # mutable constants that escape somewhere
    aliased: set[str] = field(default_factory=set)  # constants bound to a second name
    untracked: list[ast.AST] = field(default_factory=list)  # growth not through a name
    hidden_growth: bool = False  # decided after the walk (frostline.script.growth)
    # Parameter defaults that name a module constant.
    constant_defaults: list[ast.Name] = field(default_factory=list)
    all_functions: list[FunctionInfo] = field(default_factory=list)
    loops: list[LoopRec] = field(default_factory=list)
