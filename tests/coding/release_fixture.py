"""A tiny package, tinycalc, with four releases made into sdists: 1.1 fixes a bug of 1.0 and
adds the tests that show it, 1.2 changes two source files, 1.3 adds a test 1.2 already passes."""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path

from frostline.coding.tasks.pins import Archive

CORE_10 = """def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return lo
    return x


def double(x):
    return 2 * x
"""
CORE_11 = CORE_10.replace("        return lo\n    return x", "        return hi\n    return x")
TESTS_10 = """from tinycalc.core import clamp, double


def test_double():
    assert double(3) == 6


def test_clamp_low():
    assert clamp(-5, 0, 10) == 0


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_at_the_bounds():
    assert clamp(0, 0, 10) == 0 and clamp(10, 0, 10) == 10


def test_double_large():
    assert double(10**6) == 2 * 10**6


def test_clamp_empty_range():
    assert clamp(3, 3, 3) == 3
"""
TESTS_11 = TESTS_10 + """

def test_clamp_high():
    assert clamp(50, 0, 10) == 10


def test_clamp_high_negative_range():
    assert clamp(0, -10, -5) == -5
"""
# 1.2 changes two source files (screened out); 1.3 adds a test that 1.2 already passes.
RELEASES = {
    "1.0": {"tinycalc/__init__.py": '__version__ = "1.0"\n', "tinycalc/core.py": CORE_10,
            "tests/test_core.py": TESTS_10},
    "1.1": {"tinycalc/__init__.py": '__version__ = "1.1"\n', "tinycalc/core.py": CORE_11,
            "tests/test_core.py": TESTS_11},
    "1.2": {"tinycalc/__init__.py": '__version__ = "1.2"\nNAME = "tinycalc"\n',
            "tinycalc/core.py": CORE_11.replace("2 * x", "x + x"),
            "tests/test_core.py": TESTS_11 + "\n\ndef test_double_zero():\n"
                                             "    assert double(0) == 0\n"},
    "1.3": {"tinycalc/__init__.py": '__version__ = "1.3"\nNAME = "tinycalc"\n',
            "tinycalc/core.py": CORE_11.replace("2 * x", "x * 2"),
            "tests/test_core.py": TESTS_11 + "\n\ndef test_double_negative():\n"
                                             "    assert double(-2) == -4\n"},
}


def sdist(folder: Path, version: str) -> Archive:
    """The sdist of tinycalc `version` in `folder` (deterministic bytes), pinned by sha256."""
    name = f"tinycalc-{version}.tar.gz"
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.PAX_FORMAT) as tf:
        for rel, text in sorted(RELEASES[version].items()):
            data = text.encode()
            info = tarfile.TarInfo(f"tinycalc-{version}/{rel}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tf.addfile(info, io.BytesIO(data))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(buf.getvalue())
    return Archive("tinycalc", version, name, hashlib.sha256(buf.getvalue()).hexdigest())
