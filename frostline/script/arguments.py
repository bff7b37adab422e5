"""What a helper's parameter can receive: the argument of that parameter at every call.

A script function is a value only as a callee, a ``ctx.pipeline`` stage, a ``ctx.dag`` task,
or a map/filter/key function (R08), so every place that binds its parameters is in the
source. When all of them are plain calls, a parameter's bound is the largest bound of what
the calls pass (or the default when they pass nothing): ``def top(items, k=3)`` called as
``top(scored[:8])`` iterates at most 8 items. A stage, a task or a map/key function gets
its arguments from the host or a builtin, and ``*``/``**`` arguments hide which parameter
receives what; then the parameter has no bound.
"""

from __future__ import annotations

import ast

from frostline.script.scope import FunctionInfo, ModuleInfo

#: (the expression the parameter receives, the function it is evaluated in)
Argument = tuple[ast.expr, FunctionInfo]


class CallIndex:
    """The calls of every script function, gathered once from the walk's call records."""

    def __init__(self, module: ModuleInfo) -> None:
        self.module = module
        self._calls: dict[int, list[tuple[FunctionInfo, ast.AST]]] | None = None

    def _index(self) -> dict[int, list[tuple[FunctionInfo, ast.AST]]]:
        if self._calls is None:
            calls: dict[int, list[tuple[FunctionInfo, ast.AST]]] = {}
            for caller in self.module.all_functions:
                for callee, node in caller.callees:
                    calls.setdefault(id(callee), []).append((caller, node))
            self._calls = calls
        return self._calls

    def arguments(self, target: FunctionInfo, param: str) -> list[Argument] | None:
        """Every expression `param` of `target` receives, or None when one cannot be seen."""
        node = target.node
        if node is None or target is self.module.functions.get("orchestrate"):
            return None  # the host calls orchestrate
        calls = self._index().get(id(target), [])
        if not calls:
            return None
        found: list[Argument] = []
        for caller, call in calls:
            if not isinstance(call, ast.Call):
                return None  # a stage, a task or a map/key function
            got = _argument(call, node.args, param)
            if got is _UNKNOWN:
                return None
            if isinstance(got, ast.expr):
                found.append((got, caller))
            elif got is _DEFAULT:
                default = _default(node.args, param)
                if default is not None:
                    # evaluated where the def stands
                    found.append((default, target.parent or target))
            # _MISSING: the call raises TypeError and binds nothing
        return found or None


_UNKNOWN, _DEFAULT, _MISSING = object(), object(), object()


def _argument(call: ast.Call, spec: ast.arguments, param: str) -> object:
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return _UNKNOWN
    positional = [p.arg for p in [*spec.posonlyargs, *spec.args]]
    if param in positional:
        index = positional.index(param)
        if index < len(call.args):
            return call.args[index]
        by_keyword = index >= len(spec.posonlyargs)
    elif param in [p.arg for p in spec.kwonlyargs]:
        by_keyword = True
    else:
        return _UNKNOWN  # *args or **kwargs
    if by_keyword:
        for kw in call.keywords:
            if kw.arg == param:
                return kw.value
    return _DEFAULT if _default(spec, param) is not None else _MISSING


def _default(spec: ast.arguments, param: str) -> ast.expr | None:
    positional = [p.arg for p in [*spec.posonlyargs, *spec.args]]
    if param in positional:
        offset = positional.index(param) - (len(positional) - len(spec.defaults))
        return spec.defaults[offset] if offset >= 0 else None
    names = [p.arg for p in spec.kwonlyargs]
    if param in names:
        return spec.kw_defaults[names.index(param)]
    return None
