"""Run a package's test suite inside the bubblewrap sandbox: green checks, coverage, mutants.

The package tree and its test dependencies are bound read-only; the probe (`probe.py`) copies
the tree into the sandbox's private /tmp, applies a mutation there, and runs pytest in-process
with no network, no subprocess and no host environment. `PYTHONHASHSEED` is chosen per run, so
a mutant can be judged under several seeds. A run that does not finish within its wall-clock
limit is reported as timed out, never as a set of failures.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from frostline.coding.interface import Mutation, Task
from frostline.coding.tasks import probe
from frostline.coding.tasks.pins import PackageSpec
from frostline.runtime.limits import ResourceLimits
from frostline.runtime.sandbox import SandboxProfile
from frostline.runtime.sandbox_process import run_sandboxed

__all__ = ["SuiteResult", "pytest_args", "run_suite", "sandbox_profile", "task_pytest_args"]

_PROBE_SOURCE = Path(probe.__file__).read_text(encoding="utf-8")


@dataclass(frozen=True)
class SuiteResult:
    """One run of the suite. `outcomes` maps each test's node id to passed/failed/skipped;
    `error` is set when the run says nothing about tests (timeout, crash, collection error, a
    mutation that did not apply), with `detail` for a human."""

    outcomes: Mapping[str, str]
    duration: float
    exit_code: int
    error: str = ""
    detail: str = ""
    coverage: Mapping[str, Mapping[int, frozenset[str]]] = field(default_factory=dict)

    @property
    def failing(self) -> frozenset[str]:
        return frozenset(t for t, o in self.outcomes.items() if o == "failed")

    @property
    def green(self) -> bool:
        return not self.error and self.exit_code == 0 and bool(self.outcomes) and not self.failing


def sandbox_profile(wall_seconds: float) -> SandboxProfile:
    """The sandbox a suite runs in: the environment frostline runs in (pytest, coverage) visible,
    room in /tmp for a copy of the tree, and limits sized for a test suite."""
    return SandboxProfile(
        wall_seconds=wall_seconds, site_packages=True, tmp_bytes=256 << 20,
        output_bytes=64 << 20,
        limits=ResourceLimits(cpu_seconds=max(10, int(wall_seconds) + 5),
                              address_space_bytes=4 << 30, open_files=1024,
                              file_size_bytes=64 << 20),
        extra_env=(("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1"),))


def pytest_args(spec: PackageSpec, select: Sequence[str] = (),
                deselect: Sequence[str] = ()) -> list[str]:
    """The pytest command line of `spec`'s suite (paths relative to the tree), or of the tests
    `select` names (node ids), without the tests `deselect` names."""
    return ["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", probe.WORKDIR,
            "--tb=no", *spec.test_args, *(f"--deselect={t}" for t in deselect),
            *(select or spec.test_paths)]


def task_pytest_args(task: Task, select: Sequence[str] = ()) -> list[str]:
    """The pytest arguments that run `task`'s suite (or the tests `select` names) from the root
    of a copy of its tree, for any runner: `test_args`, then pytest's `pythonpath` option
    putting the import root and the test dependencies on sys.path (the runner must make
    `task.dep_paths` readable where it runs, e.g. read-only binds), then what to collect."""
    paths = " ".join([task.import_root, *task.dep_paths])
    return [*task.test_args, "-o", f"pythonpath={paths}", *(select or task.test_paths)]


def _coverage_map(raw: Mapping[str, Any]) -> dict[str, dict[int, frozenset[str]]]:
    names = {i[0]: name for name, i in raw.get("__tests__", {}).items()}
    return {file: {int(line): frozenset(names[i] for i in idx) for line, idx in lines.items()}
            for file, lines in raw.items() if file != "__tests__"}


def run_suite(spec: PackageSpec, tree: Path, deps: Sequence[Path] = (), *, seed: int = 0,
              mutation: Mutation | None = None, coverage: bool = False,
              wall_seconds: float = 300.0, select: Sequence[str] = (),
              deselect: Sequence[str] = ()) -> SuiteResult:
    """Run `spec`'s suite on `tree` in the sandbox under PYTHONHASHSEED=`seed` (only the
    tests `select` names, when given; never those `deselect` names).

    Raises:
        SandboxUnavailable: the sandbox cannot be established on this machine.
    """
    tree = tree.resolve()
    dep_paths = [str(d.resolve()) for d in deps]
    request = {"tree": str(tree), "import_root": spec.import_root, "deps": dep_paths,
               "mutation": None if mutation is None else mutation.__dict__,
               "pytest_args": pytest_args(spec, sorted(select), sorted(deselect)),
               "coverage": list(spec.mutate) if coverage else None}
    profile = replace(sandbox_profile(wall_seconds), extra_ro_binds=(str(tree), *dep_paths))
    result = run_sandboxed(["-c", _PROBE_SOURCE, json.dumps(request)], profile,
                           extra_env={"PYTHONHASHSEED": str(seed)})
    if result.timed_out:
        return SuiteResult({}, result.duration, -1, "timeout",
                           f"the suite did not finish within {wall_seconds:.0f} s")
    for line in result.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith(probe.MARKER):
            data = json.loads(line[len(probe.MARKER):])
            collect = data.get("collect_errors") or []
            error = "collection_error" if collect else ""
            return SuiteResult(data["outcomes"], data["duration"], data["exit"], error,
                               ", ".join(collect[:5]), _coverage_map(data.get("coverage", {})))
    tail = result.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
    kind = "mutation_not_applied" if any("does not apply" in t for t in tail) else "crashed"
    return SuiteResult({}, result.duration, result.returncode, kind, " | ".join(tail))
