"""The package's shape, checked: import direction, no cycles, no private imports, module size.

The layer contracts themselves are import-linter's (pyproject.toml, `lint-imports`); this file
runs them and adds what import-linter does not say: a cycle between any two modules (imports
inside functions and under TYPE_CHECKING included), a module importing another module's
underscore name, and modules or functions past the size where they usually hold two concepts.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "frostline"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 60
# Modules that are data, not logic: tables and declarations whose length is their content.
DATA_MODULES = frozenset({
    "frostline.graph.shipped",
    "frostline.capabilities.catalog",
})
# Modules past the cap that are one concept read top to bottom; each says why, and none may
# pass the point where a second concept is worth looking for (shared/STYLE.md: about 800).
COHESIVE_MODULES = {
    "frostline.errors": "the one error tree (issue 28): every class frostline raises, each a "
                        "few lines under the tree its docstring draws, and the registry that "
                        "rebuilds them",
    "frostline.runtime.execute": "one attempt, from its admission to its record: each step "
                                 "hands the next what it decided, and splitting them hides "
                                 "the order the fail-closed rules depend on",
}
COHESIVE_CAP = 800


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, tuple[Path, ast.Module]]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "scripts" in path.relative_to(PACKAGE).parts:  # sample scripts, not package code
            continue
        found[module_name(path)] = (path, ast.parse(path.read_text(encoding="utf-8")))
    return found


MODULES = modules()


def imports(name: str, path: Path, tree: ast.Module) -> Iterator[tuple[str, str, int]]:
    """(target module, imported name or '', line) for every frostline import in the module,
    wherever it stands (function bodies and TYPE_CHECKING blocks included)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("frostline"):
                    yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("frostline"):
                for alias in node.names:
                    yield target, alias.name, node.lineno


def edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, (path, tree) in MODULES.items():
        for target, imported, _ in imports(name, path, tree):
            submodule = f"{target}.{imported}"
            dest = submodule if submodule in MODULES else target
            if dest in MODULES and dest != name:
                graph[name].add(dest)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle_between_modules() -> None:
    assert cycles(edges()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_a_private_name_of_another() -> None:
    offenders = []
    for name, (path, tree) in MODULES.items():
        for target, imported, line in imports(name, path, tree):
            private = any(_private(part) for part in [*target.split("."), imported])
            if private and target != name:
                offenders.append(f"{name}:{line} imports {target}.{imported}")
        offenders.extend(private_attribute_uses(name, path, tree))
    assert offenders == []


def test_no_product_module_imports_frostline_testing() -> None:
    """The test doubles (frostline.testing) serve tests and benchmarks only (issue 28 §4)."""
    offenders = [f"{name}:{line} imports {target}.{imported}"
                 for name, (path, tree) in MODULES.items()
                 if not _in_testing(name)
                 for target, imported, line in imports(name, path, tree)
                 if _in_testing(target) or _in_testing(f"{target}.{imported}")]
    assert not offenders, offenders


def test_one_model_client_protocol() -> None:
    """Every model frostline consults is frostline.capabilities.model.ModelClient (issue 28
    §4): no other Protocol declares a `complete` method; callers name a parametrization."""
    declared = [f"{name}.{node.name}"
                for name, (_path, tree) in MODULES.items()
                for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef)
                and any(isinstance(b, ast.Name | ast.Subscript) and "Protocol" in ast.unparse(b)
                        for b in node.bases)
                and any(isinstance(f, ast.FunctionDef) and f.name == "complete"
                        for f in node.body)]
    assert declared == ["frostline.capabilities.model.ModelClient"]


def _in_testing(module: str) -> bool:
    return module == "frostline.testing" or module.startswith("frostline.testing.")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_attribute_uses(name: str, path: Path, tree: ast.Module) -> list[str]:
    """`mod._name` where `mod` is a frostline module this module imported."""
    aliases = {}
    for target, imported, _ in imports(name, path, tree):
        if imported and f"{target}.{imported}" in MODULES:
            aliases[imported] = f"{target}.{imported}"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                if alias.asname and alias.asname != alias.name:
                    full = (f"{node.module}.{alias.name}" if isinstance(node, ast.ImportFrom)
                            else alias.name)
                    if full in MODULES:
                        aliases[alias.asname] = full
    return [f"{name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in aliases and node.attr.startswith("_")
            and not node.attr.startswith("__")]


def test_modules_hold_one_concept() -> None:
    long_modules = [f"{name}: {len(path.read_text(encoding='utf-8').splitlines())} lines"
                    for name, (path, _) in MODULES.items()
                    if name not in DATA_MODULES
                    and len(path.read_text(encoding="utf-8").splitlines())
                    > (COHESIVE_CAP if name in COHESIVE_MODULES else MAX_MODULE_LINES)]
    assert long_modules == [], f"split these modules (>{MAX_MODULE_LINES} lines)"
    assert set(COHESIVE_MODULES) <= set(MODULES), "a named exception names no module"


def test_functions_stay_short() -> None:
    long_functions = []
    for name, (_, tree) in MODULES.items():
        if name in DATA_MODULES:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long_functions.append(f"{name}.{node.name}:{node.lineno} ({length} lines)")
    assert long_functions == [], f"split these functions (>{MAX_FUNCTION_LINES} lines)"


@pytest.mark.skipif(shutil.which("lint-imports") is None,
                    reason="import-linter is not installed (pip install -e '.[dev]')")
def test_layer_contracts_hold() -> None:
    done = subprocess.run([shutil.which("lint-imports") or "lint-imports", "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


if __name__ == "__main__":  # a quick listing while refactoring
    sys.exit(pytest.main([__file__, "-q"]))
