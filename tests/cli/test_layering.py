"""The command line sits on top: only frostline.cli imports click and rich, and no library module
imports frostline.cli, not even inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "frostline"
PRESENTATION = ("click", "rich")
# `python -m frostline` needs an entry point in the package root; it only calls the CLI's main.
ENTRY_POINT = PACKAGE / "__main__.py"


def imports_of(source: str, package: str) -> set[str]:
    """Every module an import statement anywhere in `source` names, made absolute against
    `package`; `from X import a` counts X and X.a (a may be a module)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def forbidden(module: str) -> bool:
    return (module.split(".")[0] in PRESENTATION or module == "frostline.cli"
            or module.startswith("frostline.cli."))


def library_modules() -> list[Path]:
    cli = PACKAGE / "cli"
    return sorted(p for p in PACKAGE.rglob("*.py") if cli not in p.parents and p != ENTRY_POINT)


def test_the_walk_sees_the_library_and_not_the_cli() -> None:
    names = {p.relative_to(PACKAGE).as_posix() for p in library_modules()}
    assert {"errors.py", "store/__init__.py", "runtime/execute.py"} <= names
    assert not any(n.startswith("cli/") for n in names)


@pytest.mark.parametrize("source", [
    "import click",
    "import rich.table as t",
    "def f():\n    from rich.console import Console\n",
    "from frostline import cli",
    "from frostline.cli.common import emit_json",
    "from ..cli import main",
])
def test_the_scan_catches_every_form_of_import(source: str) -> None:
    assert any(forbidden(m) for m in imports_of(source, "frostline.graph"))


def test_no_library_module_imports_click_rich_or_the_cli() -> None:
    offenders = {}
    for path in library_modules():
        package = ".".join(path.relative_to(PACKAGE.parent).parts[:-1])
        bad = sorted(m for m in imports_of(path.read_text(encoding="utf-8"), package)
                     if forbidden(m))
        if bad:
            offenders[path.relative_to(PACKAGE).as_posix()] = bad
    assert offenders == {}
