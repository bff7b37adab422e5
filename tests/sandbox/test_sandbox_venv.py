"""Issue 27: the sandboxed paths work from a virtualenv whose base interpreter lacks its packages.

A venv is made from the interpreter behind this one, under /tmp (which the sandbox replaces by
its own), and a small package only the venv has is installed into it with pip. frostline then
runs from that venv: a script (`frostline run`, in the sandbox), a coding-workflow suite
(`testrun.run_pytest`, with per-test coverage) and a task population's suite
(`suite.run_suite`); the suites' code imports the venv-only package, so they pass only if the
sandbox sees the venv. frostline's own dependencies reach the venv through a ``.pth`` naming
this process's environment (installing them for real needs the package index: `.ci/run` and
tests/test_wheel.py do that).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from frostline.runtime.sandbox_env import environment_paths

pytestmark = [pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
              pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
# The interpreter a venv is made from: this one, resolved past any venv of its own.
BASE = os.path.realpath(sys.executable)
DIST = "issue27_marker-1.0"
MARKER = {
    "issue27_marker/__init__.py": "VALUE = 27\n",
    f"{DIST}.dist-info/METADATA": "Metadata-Version: 2.1\nName: issue27-marker\nVersion: 1.0\n",
    f"{DIST}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                               "Tag: py3-none-any\n",
}
TINY = {
    "tiny/__init__.py": "import issue27_marker\n\n\ndef answer():\n    return issue27_marker.VALUE\n",
    "tests/test_tiny.py": "from tiny import answer\n\n\ndef test_answer():\n"
                          "    assert answer() == 27\n",
}


def _wheel(directory: Path) -> Path:
    path = directory / f"{DIST}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in MARKER.items():
            data = text.encode()
            zf.writestr(name, data)
            sha = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{name},sha256={sha},{len(data)}")
        record.append(f"{DIST}.dist-info/RECORD,,")
        zf.writestr(f"{DIST}.dist-info/RECORD", "\n".join(record) + "\n")
    return path


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("issue27")
    assert str(root).startswith("/tmp/"), "the venv must live where the sandbox has its own /tmp"
    venv = root / "venv"
    subprocess.run([BASE, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "issue27-parent.pth").write_text("\n".join(environment_paths()) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-index", "--no-deps", str(_wheel(root))], check=True,
                   capture_output=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    lacks = subprocess.run([BASE, "-S", "-c", "import issue27_marker"], capture_output=True)
    assert lacks.returncode != 0, "the base interpreter must not have the venv's package"
    return venv


def _in_venv(venv: Path, args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "PYTHONPATH": str(ROOT),
           "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run([str(venv / "bin" / "python"), *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=240)


def _tree(root: Path) -> Path:
    for name, text in TINY.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_issue27_a_script_runs_in_the_sandbox_from_a_venv_under_tmp(venv: Path,
                                                                    tmp_path: Path) -> None:
    (tmp_path / "s.py").write_text("async def orchestrate(ctx, args):\n"
                                   "    return {'sum': args['a'] + 1}\n")
    done = _in_venv(venv, ["-m", "frostline", "run", "s.py", "--run", "r1", "--args",
                           '{"a": 2}', "--store", f"sqlite:///{tmp_path}/runs.db", "--json"],
                    tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["status"], out["result"]) == ("succeeded", {"sum": 3})


SUITES = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from frostline.coding.tasks.pins import Archive, PackageSpec
    from frostline.coding.tasks.suite import run_suite
    from frostline.coding.testrun import SandboxSettings, run_pytest

    tree = Path(sys.argv[1])
    report = run_pytest(tree, SandboxSettings(wall_seconds=120, test_timeout=30), coverage=True)
    spec = PackageSpec(Archive("tiny", "1.0", "tiny-1.0.tar.gz", "0" * 64), import_root=".",
                       mutate=("tiny",), test_paths=("tests",))
    suite = run_suite(spec, tree, coverage=True, wall_seconds=120)
    print(json.dumps({"pytest": [report.exit_code, list(report.passed), list(report.coverage)],
                      "suite": [suite.green, suite.error, suite.detail, dict(suite.outcomes),
                                sorted(suite.coverage)]}))
""")


def test_issue27_a_coding_suite_sees_the_venvs_packages_in_the_sandbox(venv: Path,
                                                                       tmp_path: Path) -> None:
    tree = _tree(tmp_path / "tiny")
    done = _in_venv(venv, ["-c", SUITES, str(tree)], tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    exit_code, passed, covered = out["pytest"]
    assert (exit_code, passed) == (0, ["tests/test_tiny.py::test_answer"]) and "tiny/__init__.py" in covered
    green, error, detail, outcomes, covered = out["suite"]
    assert (green, error, detail) == (True, "", ""), detail
    assert outcomes == {"tests/test_tiny.py::test_answer": "passed"} and covered == ["tiny/__init__.py"]
