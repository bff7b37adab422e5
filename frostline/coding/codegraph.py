"""RECONNAISSANCE, second half: an `ast` code graph of the repository's source.

Definitions (functions, methods, classes with their qualified names and line spans), calls
(which definition calls which name) and imports (which module imports which). It is built from
the source text alone; nothing is imported. LOCALIZE uses it to name the function around a
suspicious line, IMPACT to find the callers of the suspicious functions.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from frostline.coding.manifest import module_name


@dataclass(frozen=True)
class Definition:
    qualname: str  # module.Class.method
    kind: str  # function | class
    file: str
    line: int
    end_line: int

    def to_dict(self) -> dict[str, Any]:
        return {"qualname": self.qualname, "kind": self.kind, "file": self.file,
                "line": self.line, "end_line": self.end_line}


@dataclass
class CodeGraph:
    """Definitions, call edges (caller qualname -> called simple names) and import edges."""

    definitions: list[Definition] = field(default_factory=list)
    calls: dict[str, set[str]] = field(default_factory=dict)
    imports: dict[str, set[str]] = field(default_factory=dict)
    unparsed: list[str] = field(default_factory=list)

    def enclosing(self, file: str, line: int) -> Definition | None:
        """The innermost definition of `file` whose span holds `line`."""
        best: Definition | None = None
        for d in self.definitions:
            if d.file == file and d.line <= line <= d.end_line \
                    and (best is None or d.line >= best.line):
                best = d
        return best

    def callers(self, names: Iterable[str]) -> list[str]:
        """Qualnames of the definitions that call any of `names` (by their last component)."""
        wanted = {n.rsplit(".", 1)[-1] for n in names}
        return sorted(q for q, called in self.calls.items() if called & wanted)

    def to_dict(self) -> dict[str, Any]:
        return {"definitions": [d.to_dict() for d in self.definitions],
                "calls": {k: sorted(v) for k, v in sorted(self.calls.items())},
                "imports": {k: sorted(v) for k, v in sorted(self.imports.items())},
                "unparsed": list(self.unparsed),
                "definition_count": len(self.definitions),
                "call_edges": sum(len(v) for v in self.calls.values())}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CodeGraph:
        return cls([Definition(**d) for d in data.get("definitions", ())],
                   {k: set(v) for k, v in dict(data.get("calls", {})).items()},
                   {k: set(v) for k, v in dict(data.get("imports", {})).items()},
                   list(data.get("unparsed", ())))


def _called_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


class _Visitor(ast.NodeVisitor):
    def __init__(self, graph: CodeGraph, file: str, module: str) -> None:
        self.graph, self.file, self.module = graph, file, module
        self.scope: list[str] = [module]

    def _define(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
                kind: str) -> None:
        qual = ".".join([*self.scope, node.name])
        end = getattr(node, "end_lineno", None) or node.lineno
        self.graph.definitions.append(Definition(qual, kind, self.file, node.lineno, end))
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._define(node, "function")

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._define(node, "function")

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._define(node, "class")

    def visit_Call(self, node: ast.Call) -> None:
        name = _called_name(node)
        if name is not None:
            self.graph.calls.setdefault(".".join(self.scope), set()).add(name)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.graph.imports.setdefault(self.module, set()).add(alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            pkg = self.module.split(".")
            keep = pkg[: max(len(pkg) - node.level + (1 if self.file.endswith("__init__.py")
                                                       else 0), 0)]
            base = ".".join([*keep, base] if base else keep)
        if base:
            self.graph.imports.setdefault(self.module, set()).add(base)


def build_code_graph(root: Path, files: Iterable[str]) -> CodeGraph:
    """Parse each file (relative to `root`) into one graph; a file that does not parse is
    listed in `unparsed` instead of failing the whole graph."""
    graph = CodeGraph()
    for rel in files:
        try:
            tree = ast.parse((root / rel).read_text(encoding="utf-8"), filename=rel)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            graph.unparsed.append(rel)
            continue
        _Visitor(graph, rel, module_name(rel) or Path(rel).stem).visit(tree)
    return graph
