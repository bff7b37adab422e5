"""Search a package's recent releases for pairs that may hold a small upstream fix.

Design time only: this is how the pairs of `release_pins` were found. For one package, the
index's JSON description lists its releases; the last `last` final releases with an sdist are
downloaded (each checked against the SHA-256 the index lists), unpacked, and every consecutive
pair is screened (`releases.screen`). Every pair compared gets a record, kept or not, with the
reason and both archives' pins; a kept record carries what `release_pins` needs. Whether a kept
pair's new tests fail on N and pass on N+1 is the build's question (`released.py`).

The source roots are the package's top-level modules and packages (under `src/` too), tests,
docs and build scripts left out.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from frostline.coding.manifest import is_test_file
from frostline.coding.tasks.errors import FetchError
from frostline.coding.tasks.fetch import describe, fetch, unpack
from frostline.coding.tasks.pins import Archive
from frostline.coding.tasks.releases import screen

__all__ = ["releases_of", "search", "source_roots"]

_FINAL = re.compile(r"^\d+(\.\d+)*$")
_NOT_SOURCE = {"setup.py", "conftest.py", "noxfile.py", "tasks.py", "ez_setup.py",
               "benchmark.py", "prebuild.py", "docs", "doc", "examples", "tests", "test"}


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def releases_of(name: str, last: int) -> list[Archive]:
    """The last `last` final releases of `name` with an sdist (.tar.gz), oldest first, pinned
    by the SHA-256 the index lists.

    Raises:
        FetchError: the index cannot be read or does not describe `name`.
    """
    releases = describe(name)
    found: list[Archive] = []
    for version, files in releases.items():
        sdists = [f for f in files if f.get("packagetype") == "sdist" and not f.get("yanked")
                  and str(f.get("filename", "")).endswith(".tar.gz")]
        if _FINAL.match(version) and sdists:
            found.append(Archive(name, version, sdists[0]["filename"],
                                 sdists[0]["digests"]["sha256"]))
    found.sort(key=lambda a: _key(a.version))
    return found[-last:] if last > 0 else found


def source_roots(tree: Path) -> tuple[str, ...]:
    """The package's top-level modules and packages (directly or under `src/`)."""
    roots: list[str] = []
    for base in (tree, tree / "src"):
        if not base.is_dir():
            continue
        for entry in sorted(base.iterdir()):
            rel = entry.relative_to(tree).as_posix()
            if entry.name in _NOT_SOURCE or is_test_file(rel):
                continue
            if (entry.is_dir() and (entry / "__init__.py").is_file()) or (
                    entry.is_file() and entry.suffix == ".py"):
                roots.append(rel)
    return tuple(roots)


def search(name: str, cache: Path, last: int = 25,
           progress: Callable[[str], None] = lambda _: None) -> list[dict[str, Any]]:
    """One record per consecutive pair of the last `last` releases of `name`, oldest first.

    Raises:
        FetchError: the index cannot be read, or an sdist does not match the listed SHA-256.
    """
    archives = releases_of(name, last)
    records: list[dict[str, Any]] = []
    previous: tuple[Archive, Path] | None = None
    for archive in archives:
        path = fetch(archive, cache)  # bytes that are not the listed ones stop the search
        try:
            tree = unpack(path, cache / "trees" / f"{name}-{archive.version}", strip_top=True)
        except (FetchError, tarfile.TarError) as exc:  # the pairs around it are lost
            records.append({"package": name, "newer": archive.version,
                            "verdict": "unreadable", "detail": str(exc)})
            previous = None
            continue
        if previous is not None:
            older, old_tree = previous
            roots = source_roots(tree)
            s = screen(old_tree, tree, roots)
            records.append({
                "package": name, "older": older.version, "newer": archive.version,
                "verdict": "screened" if s.kept else s.reason, "fix_file": s.source_file,
                "fix_lines": s.fix_lines, "source_files": list(s.source_files),
                "tests": list(s.tests), "roots": list(roots),
                "archives": [[older.filename, older.sha256],
                             [archive.filename, archive.sha256]]})
            progress(f"{name} {older.version}..{archive.version}: {records[-1]['verdict']}")
        previous = (archive, tree)
    return records

