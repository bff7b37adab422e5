"""RECONNAISSANCE, first half: what a repository is made of, read from its files alone.

A `RepoManifest` names the source files and the test files, the importable top-level packages
and modules, where the tests live, and the command that runs them. Nothing of the repository is
imported or executed here (that happens only in the sandbox); the manifest is a pure function of
the tree, so the same tree always yields the same artifact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Folders that never hold the repository's own code.
SKIP_DIRS = frozenset({".git", ".hg", ".tox", ".nox", ".venv", "venv", "env", "build", "dist",
                       "__pycache__", "docs", "doc", ".eggs", "node_modules", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache"})
TEST_DIRS = frozenset({"tests", "test", "testing"})


def is_test_file(rel: str) -> bool:
    """True for test modules, conftest files and anything under a tests folder."""
    parts = Path(rel).parts
    name = parts[-1]
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(p in TEST_DIRS for p in parts[:-1]))


def python_files(root: Path) -> list[str]:
    """Every .py file under `root` (relative, sorted), skipping tooling and build folders."""
    out: list[str] = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(p in SKIP_DIRS or p.startswith(".") or p.endswith(".egg-info")
               for p in rel.parts[:-1]):
            continue
        if path.is_file() and not path.is_symlink():
            out.append(rel.as_posix())
    return out


def module_name(rel: str) -> str:
    """The dotted module a source file is imported as (``src/`` layouts drop the ``src``)."""
    parts = list(Path(rel).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass(frozen=True)
class RepoManifest:
    """The RECONNAISSANCE artifact (its `to_dict` is the RepoManifest output)."""

    root: str
    files: tuple[str, ...]  # source files (tests excluded)
    test_files: tuple[str, ...]
    packages: tuple[str, ...]
    modules: tuple[str, ...]
    test_layout: str  # "tests-folder" | "inline" | "none"
    test_command: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"root": self.root, "files": list(self.files), "file_count": len(self.files),
                "test_files": list(self.test_files), "test_file_count": len(self.test_files),
                "packages": list(self.packages), "modules": list(self.modules),
                "test_layout": self.test_layout, "test_command": list(self.test_command)}


def build_manifest(root: Path, test_args: Sequence[str] = ()) -> RepoManifest:
    """Read `root`'s tree into a RepoManifest. `test_args` are the extra pytest arguments the
    repository needs (they become part of the test command)."""
    files = python_files(root)
    tests = tuple(f for f in files if is_test_file(f))
    sources = tuple(f for f in files if f not in set(tests) and Path(f).name != "setup.py")
    modules = tuple(sorted({module_name(f) for f in sources} - {""}))
    packages = sorted({m.split(".")[0] for m in modules})
    if any(Path(t).parts[0] in TEST_DIRS for t in tests):
        layout = "tests-folder"
    elif tests:
        layout = "inline"
    else:
        layout = "none"
    command = ("python", "-m", "pytest", "-q", *test_args)
    return RepoManifest(root.name, sources, tests, tuple(packages), modules, layout, command)
