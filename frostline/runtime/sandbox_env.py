"""The Python environment a sandbox sees: the one frostline runs in, read-only, and no more.

The sandbox runs the real interpreter behind this process (a venv's ``bin/python`` is only a
symlink next to a ``pyvenv.cfg``) with ``-S``, so on its own the sandboxed interpreter knows
the standard library and nothing else: not the venv frostline was installed into, not the
packages a repository's test suite needs (pytest, coverage). When a profile asks for
site-packages, the sandbox instead gets exactly the directories this process imports its
installed distributions from (`environment_paths`): bound read-only at the same place (over
the private /tmp too, for a venv that lives there) and added to the child's sys.path with
`site.addsitedir`, so their ``.pth`` files work as on the host. Every other site-packages
directory of the interpreter (`site_dirs`), such as an isolated venv's base interpreter's,
is hidden behind an empty read-only tmpfs.

That covers a venv (with or without ``--system-site-packages``), a user site, a
``pip install --target`` directory on PYTHONPATH and the system interpreter alike; what
decides is what this process's sys.path holds, never a guess about the base interpreter.
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
from collections.abc import Sequence

__all__ = ["environment_paths", "site_dirs"]

# Metadata folders of installed distributions: what marks a folder as "an environment".
_METADATA = (".dist-info", ".egg-info")


def _holds_distributions(folder: str) -> bool:
    """Whether `folder` holds an installed distribution other than frostline itself (a
    checkout on PYTHONPATH holds ``frostline.egg-info`` after ``pip install -e`` and is no
    environment: the package is bound on its own, the rest of the checkout never is)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return False
    for name in names:
        for suffix in _METADATA:
            # NAME-VERSION.dist-info, NAME.egg-info, NAME-VERSION-pyX.Y.egg-info
            if name.endswith(suffix) and name.removesuffix(suffix).split("-", 1)[0].lower() \
                    != "frostline":
                return True
    return False


@functools.lru_cache(maxsize=16)
def _environment_paths(path: tuple[str, ...], stdlib: frozenset[str]) -> tuple[str, ...]:
    found: list[str] = []
    for entry in path:
        if not entry or not os.path.isabs(entry):
            continue  # the working directory ("" or relative): never part of the environment
        real = os.path.realpath(entry)
        if real in found or real in stdlib or not os.path.isdir(real):
            continue
        if _holds_distributions(real):
            found.append(real)
    return tuple(found)


def environment_paths(path: Sequence[str] | None = None) -> tuple[str, ...]:
    """The folders of `path` (default: this process's sys.path) that hold installed
    distributions, resolved, deduplicated, in sys.path order.

    Usage: ``environment_paths()`` in a venv gives ``("/…/venv/lib/python3.11/site-packages",)``.
    """
    paths = sysconfig.get_paths()
    stdlib = frozenset(os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib") if k in paths)
    return _environment_paths(tuple(sys.path if path is None else path), stdlib)


@functools.lru_cache(maxsize=1)
def site_dirs() -> tuple[str, ...]:
    """This interpreter's site-packages folders that exist: a venv's and its base
    interpreter's (resolved, deduplicated)."""
    dirs: set[str] = set()
    for base in {sys.prefix, sys.base_prefix}:
        paths = sysconfig.get_paths(vars={"base": base, "platbase": base})
        dirs |= {os.path.realpath(paths[key]) for key in ("purelib", "platlib") if key in paths}
        # a distribution's own layout besides (Debian: /usr/lib/python3/dist-packages)
        dirs |= {os.path.realpath(d) for d in site.getsitepackages([base])}
    return tuple(sorted(d for d in dirs if os.path.isdir(d)))
