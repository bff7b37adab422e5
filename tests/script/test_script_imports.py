"""frostline.script imports strictly downward and never reaches into another module's privates.

Every import counts, including the deferred ones inside functions and the ones guarded by
``TYPE_CHECKING``: a cycle hidden in a function body is still a cycle of the design.
"""

from __future__ import annotations

import ast
from pathlib import Path

import frostline.script

PACKAGE = "frostline.script"
ROOT = Path(frostline.script.__file__).parent


def _modules() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for path in sorted(ROOT.glob("*.py"))}


def _imports(tree: ast.Module) -> list[tuple[str, list[str], int]]:
    """(imported module, imported names, line) for every import statement anywhere."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((alias.name, [], node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"line {node.lineno}: relative import"
            out.append((node.module or "", [alias.name for alias in node.names], node.lineno))
    return out


def _edges(modules: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Intra-package import graph; ``__init__`` stands for ``frostline.script`` itself."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, tree in modules.items():
        for module, imported, _ in _imports(tree):
            if module == PACKAGE:
                graph[name].add("__init__")
                graph[name].update(n for n in imported if n in modules)
            elif module.startswith(PACKAGE + "."):
                graph[name].add(module[len(PACKAGE) + 1:].split(".")[0])
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if not state.get(nxt):
                found = visit(nxt, path)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if not state.get(start):
            found = visit(start, [])
            if found:
                return found
    return None


def test_the_graph_finder_sees_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_deferred_imports_count() -> None:
    tree = ast.parse("def f():\n    from frostline.script.checker import check\n")
    assert _edges({"sites": tree, "checker": ast.parse("")}) == {"sites": {"checker"},
                                                                "checker": set()}


def test_import_graph_is_acyclic() -> None:
    graph = _edges(_modules())
    assert len(graph) > 5
    assert _cycle(graph) is None, "import cycle: " + " -> ".join(_cycle(graph) or [])


def test_no_private_names_cross_modules() -> None:
    offenders = []
    for name, tree in _modules().items():
        for module, imported, line in _imports(tree):
            if module.split(".")[0] != "frostline":
                continue
            offenders.extend(f"{name}.py:{line}: from {module} import {n}"
                             for n in imported if n.startswith("_"))
    assert offenders == []
