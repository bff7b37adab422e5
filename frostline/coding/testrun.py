"""Running a repository's tests: pytest inside the bubblewrap sandbox, outcomes from junit XML.

Every execution of repository code in the coding workflow goes through `run_pytest` or
`run_python`: bubblewrap with no network, the workspace bound read-write at ``/workspace`` (the
only writable place besides a private /tmp and an output folder), the environment frostline
runs in readable (its venv's site-packages: pytest, coverage and the repository's test
dependencies; `frostline.runtime.sandbox_env`), rlimits, a wall clock for the whole run and
a per-test timeout inside it. Outcomes come from the junit XML
pytest writes (each test case tagged with its node id by `pytest_driver`), never from the
console. With `coverage=True` the run also yields, per executed line of the repository, the
tests that ran it.

Every run has a hard stop for a test spinning in C code, out of reach of the per-test timeout:
the driver's watchdog ends the process, and `run_pytest` runs the suite again without the test
it stopped (which counts as failed, with the watchdog's traceback), at most `MAX_HARD_STOPS`
times and within the one wall clock, instead of losing the run to that clock. `scaled_timeout`
turns a run's measured test times into a per-test timeout for the runs after it.

When bubblewrap is missing or cannot build the sandbox, `SandboxUnavailable` propagates with the
fix in its message: nothing here falls back to running the repository's code unsandboxed.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from frostline.coding.interface import Task
from frostline.errors import (
    TestsDidNotRun as TestsDidNotRun,
)
from frostline.runtime.limits import ResourceLimits
from frostline.runtime.sandbox import SandboxProfile
from frostline.runtime.sandbox_process import SandboxResult, run_sandboxed

WORKSPACE = "/workspace"
OUT = "/frostline-out"
_DRIVER = Path(__file__).with_name("pytest_driver.py")
_MAX_XML = 32 << 20
_TAIL = 4000
#: Tests one run may lose to the hard stop before it is given up as not run.
MAX_HARD_STOPS = 3
#: A scaled per-test timeout is this many times the slowest test the suite measured...
TIMEOUT_FACTOR = 10.0
#: ... and never below this many seconds (a machine under load is slower than the measure).
TIMEOUT_FLOOR_S = 2.0

#: pytest's exit codes: what each means for the workflow.
EXIT_MEANING = {0: "all tests passed", 1: "some tests failed", 2: "the run was interrupted "
                "(usually a collection error)", 3: "pytest hit an internal error",
                4: "pytest was called wrongly", 5: "no tests were collected"}


@dataclass(frozen=True)
class SandboxSettings:
    """How repository code runs: wall clock for one pytest run, per-test timeout, limits."""

    wall_seconds: float = 300.0
    test_timeout: float = 20.0
    bwrap: str = "bwrap"
    ro_binds: tuple[str, ...] = ()  # host paths the suite reads (a task's test dependencies)
    limits: ResourceLimits = field(default_factory=lambda: ResourceLimits(
        cpu_seconds=600, address_space_bytes=4 << 30, processes=64, open_files=512,
        file_size_bytes=64 << 20))

    def profile(self, workspace: Path, out: Path) -> SandboxProfile:
        return SandboxProfile(limits=self.limits, wall_seconds=self.wall_seconds,
                              output_bytes=4 << 20, tmp_bytes=256 << 20, site_packages=True,
                              rw_binds=((str(workspace), WORKSPACE), (str(out), OUT)),
                              chdir=WORKSPACE, bwrap=self.bwrap,
                              extra_ro_binds=self.ro_binds)


@dataclass(frozen=True)
class Failure:
    """One failing (or erroring) test: its node id, the short message and the traceback."""

    test: str
    kind: str  # "failure" | "error"
    message: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"test": self.test, "kind": self.kind, "message": self.message,
                "text": self.text}


@dataclass(frozen=True)
class TestReport:
    """What one pytest run established, read from its junit XML."""

    __test__ = False
    exit_code: int
    outcomes: Mapping[str, str]  # node id -> passed | failed | error | skipped
    failures: tuple[Failure, ...]
    duration: float
    coverage: Mapping[str, Mapping[int, tuple[str, ...]]] = field(default_factory=dict)
    durations: Mapping[str, float] = field(default_factory=dict)  # node id -> seconds
    hard_stopped: tuple[str, ...] = ()  # tests the hard stop ended (counted as failed)

    @property
    def failed(self) -> tuple[str, ...]:
        return tuple(sorted(t for t, o in self.outcomes.items() if o in ("failed", "error")))

    @property
    def passed(self) -> tuple[str, ...]:
        return tuple(sorted(t for t, o in self.outcomes.items() if o == "passed"))

    def to_dict(self) -> dict[str, Any]:
        return {"exit_code": self.exit_code, "passed": len(self.passed),
                "failed": len(self.failed), "failed_tests": list(self.failed),
                "failures": [f.to_dict() for f in self.failures[:20]],
                "duration": round(self.duration, 3), "hard_stopped": list(self.hard_stopped)}


def scaled_timeout(report: TestReport, ceiling: float) -> float:
    """A per-test timeout for later runs of the suite `report` measured: `TIMEOUT_FACTOR`
    times its slowest test, at least `TIMEOUT_FLOOR_S`, at most `ceiling` (the configured
    timeout). A suite of fast tests then loses seconds, not `ceiling`, to each test a patch
    sends into a loop."""
    slowest = max(report.durations.values(), default=ceiling)
    return round(min(ceiling, max(TIMEOUT_FLOOR_S, TIMEOUT_FACTOR * slowest)), 3)


def _pythonpath(workspace: Path) -> str:
    roots = ["/opt/frostline", WORKSPACE]
    if (workspace / "src").is_dir():
        roots.append(f"{WORKSPACE}/src")
    return ":".join(roots)


def _pytest_env(workspace: Path) -> dict[str, str]:
    # Plugins installed next to frostline (hypothesis, schemathesis, ...) are not the
    # repository's: loading them all costs seconds per run. A task that needs one names it
    # in its test arguments (``-p name``).
    return {"PYTHONPATH": _pythonpath(workspace), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _drive(workspace: Path, out: Path, spec: Mapping[str, Any],
           settings: SandboxSettings) -> SandboxResult:
    """Run the pytest driver in the sandbox; its spec travels in a file of the output folder."""
    (out / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    return run_sandboxed(["-c", _DRIVER.read_text(encoding="utf-8"), f"@{OUT}/spec.json"],
                         settings.profile(workspace.resolve(), out),
                         extra_env=_pytest_env(workspace))


def run_python(workspace: Path, args: Sequence[str], settings: SandboxSettings,
               *, wall_seconds: float | None = None) -> SandboxResult:
    """Run the sandboxed interpreter with `args` in `workspace` (bound read-write)."""
    out = Path(tempfile.mkdtemp(prefix="frostline-out-"))
    try:
        profile = settings.profile(workspace.resolve(), out)
        if wall_seconds is not None:
            profile = replace(profile, wall_seconds=wall_seconds)
        return run_sandboxed(list(args), profile, extra_env={
            "PYTHONPATH": _pythonpath(workspace), "PYTHONHASHSEED": "0"})
    finally:
        shutil.rmtree(out, ignore_errors=True)


def run_pytest(workspace: Path, settings: SandboxSettings, *, select: Sequence[str] = (),
               deselect: Sequence[str] = (), extra_args: Sequence[str] = (),
               coverage: bool = False, paths: Sequence[str] = ()) -> TestReport:
    """Run pytest on `workspace` in the sandbox and read the outcome from its junit XML.

    Raises:
        SandboxUnavailable: bubblewrap cannot run here (the message says how to fix it).
        TestsDidNotRun: the run timed out, crashed before writing its report, or collected
            nothing runnable.
    """
    stopped: list[Failure] = []
    spent = 0.0
    while True:
        out = Path(tempfile.mkdtemp(prefix="frostline-out-"))
        try:
            args = ["-q", "-p", "no:cacheprovider", "--tb=native", "--color=no", "-rN",
                    *extra_args, *(a for d in (*deselect, *(f.test for f in stopped))
                                   for a in ("--deselect", d)),
                    *(select or paths)]
            spec = {"args": args, "junit": f"{OUT}/junit.xml", "timeout": settings.test_timeout,
                    "coverage": {"source": [WORKSPACE], "out": f"{OUT}/contexts.json"}
                    if coverage else None, "progress": f"{OUT}/progress"}
            left = replace(settings, wall_seconds=max(1.0, settings.wall_seconds - spent))
            result = _drive(workspace, out, spec, left)
            spent += result.duration
            stuck = None if result.timed_out or (out / "junit.xml").is_file() \
                else _hard_stopped(out / "progress")
            if stuck is None:
                return _with_stopped(_report(result, out, workspace, coverage), stopped, spent)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        # faulthandler's watchdog announces itself; any other death in a test (a segfault in
        # an extension) is as much that test's failure, and is said as it is.
        why = (f"ran past its {settings.test_timeout:g} s timeout without returning to the "
               "interpreter (code spinning in C); the hard stop ended it"
               if b"Timeout (" in result.stderr else
               f"the test process died while it ran (exit code {result.returncode})")
        stopped.append(Failure(stuck, "failure", f"{stuck} {why}", _tail(result.stderr)))
        if len(stopped) > MAX_HARD_STOPS:
            raise TestsDidNotRun(
                f"the hard stop ended {len(stopped)} tests of this run ("
                + ", ".join(f.test for f in stopped) + "); it is given up", reason="hard_stop",
                stopped=[f.test for f in stopped])


def _hard_stopped(progress: Path) -> str | None:
    """The test a run's hard stop ended: the last one its progress file shows started and
    never ended (None when there is none: the process died for another reason)."""
    if not progress.is_file():
        return None
    running: str | None = None
    for line in progress.read_text(encoding="utf-8", errors="replace").splitlines():
        kind, _, nodeid = line.partition(" ")
        if kind == "start":
            running = nodeid
        elif kind == "end" and nodeid == running:
            running = None
    return running


def _with_stopped(report: TestReport, stopped: list[Failure], spent: float) -> TestReport:
    """`report` with the tests the hard stop ended counted as failed (the last run did not
    collect them: they were deselected) and the wall time of every run it took."""
    if not stopped:
        return report
    outcomes = {**report.outcomes, **{f.test: "failed" for f in stopped}}
    return replace(report, outcomes=outcomes, failures=(*report.failures, *stopped),
                   duration=spent, hard_stopped=tuple(f.test for f in stopped))


def _tail(data: bytes) -> str:
    return data.decode("utf-8", "replace")[-_TAIL:]


def _report(result: SandboxResult, out: Path, workspace: Path, coverage: bool) -> TestReport:
    if result.timed_out:
        raise TestsDidNotRun(f"the test run passed its {result.duration:.0f} s wall clock and was "
                             "killed", reason="timeout", duration=result.duration)
    junit = out / "junit.xml"
    if not junit.is_file():
        raise TestsDidNotRun(
            f"pytest wrote no report (exit {result.returncode}: "
            f"{EXIT_MEANING.get(result.returncode, 'the sandboxed process died')}); "
            f"stderr: {_tail(result.stderr)[-600:]}", reason="no_report",
            returncode=result.returncode, stdout=_tail(result.stdout))
    if junit.stat().st_size > _MAX_XML:
        raise TestsDidNotRun("the junit report is larger than 32 MiB", reason="report_too_large")
    data = junit.read_bytes()
    outcomes, failures = parse_junit(data)
    if result.returncode in (2, 3, 4, 5):
        raise TestsDidNotRun(
            f"pytest exit {result.returncode} ({EXIT_MEANING[result.returncode]}): "
            + "; ".join(f"{f.test}: {f.message}" for f in failures[:3])[:1500],
            reason=f"pytest_exit_{result.returncode}", returncode=result.returncode,
            stdout=_tail(result.stdout))
    cov: dict[str, dict[int, tuple[str, ...]]] = {}
    if coverage:
        cov = _read_contexts(out / "contexts.json", workspace)
    return TestReport(result.returncode, outcomes, failures, result.duration, cov,
                      junit_durations(data))


def junit_durations(data: bytes) -> dict[str, float]:
    """Node id -> seconds (setup, call and teardown) from pytest's junit XML."""
    root = ET.fromstring(data)
    times: dict[str, float] = {}
    for case in root.iter("testcase"):
        prop = case.find("properties/property[@name='nodeid']")
        if prop is not None and prop.get("value"):
            try:
                times[str(prop.get("value"))] = float(case.get("time") or 0.0)
            except ValueError:
                continue
    return times


def parse_junit(data: bytes) -> tuple[dict[str, str], tuple[Failure, ...]]:
    """Node id -> outcome, and the failures with their tracebacks, from pytest's junit XML."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise TestsDidNotRun(f"the junit report is not XML: {exc}", reason="bad_report") from exc
    outcomes: dict[str, str] = {}
    failures: list[Failure] = []
    for case in root.iter("testcase"):
        prop = case.find("properties/property[@name='nodeid']")
        nodeid = prop.get("value") if prop is not None else None
        if not nodeid:  # a collection error: no item, so no node id property
            nodeid = (case.get("classname") or case.get("name") or "?").replace(".", "/") + ".py"
        outcome = "passed"
        for kind in ("failure", "error"):
            el = case.find(kind)
            if el is not None:
                outcome = "failed" if kind == "failure" else "error"
                failures.append(Failure(nodeid, kind, (el.get("message") or "")[:500],
                                        (el.text or "")[-_TAIL:]))
                break
        else:
            if case.find("skipped") is not None:
                outcome = "skipped"
        # a test erroring in teardown after passing appears twice: the worse outcome stays
        if outcomes.get(nodeid) not in ("failed", "error"):
            outcomes[nodeid] = outcome
    return outcomes, tuple(failures)


def _read_contexts(path: Path, workspace: Path) -> dict[str, dict[int, tuple[str, ...]]]:
    if not path.is_file():
        raise TestsDidNotRun("coverage wrote no contexts", reason="no_coverage")
    raw = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, dict[int, tuple[str, ...]]] = {}
    prefix = WORKSPACE + "/"
    for file, lines in raw.items():
        if not isinstance(file, str) or not file.startswith(prefix):
            continue
        rel = file[len(prefix):]
        out[rel] = {int(n): tuple(tests) for n, tests in lines.items()}
    return out


@dataclass(frozen=True)
class Screening:
    """Per candidate (in order): the tests that failed, or None when it was never reached
    (the run's wall clock ended first, or an earlier candidate stopped the screening);
    `stopped` is the candidate that was running when the screening process ended (a test
    stuck past its hard stop, or the wall clock), if one was; `expired` are the candidates
    whose run a test's timeout ended (the tests it never reached count as failed)."""

    results: tuple[tuple[str, ...] | None, ...]
    duration: float
    timed_out: bool
    stopped: int | None = None
    expired: tuple[int, ...] = ()


def screen_candidates(workspace: Path, settings: SandboxSettings,
                      candidates: Sequence[Mapping[str, str]], *, select: Sequence[str],
                      confirm: Sequence[str] = (), stop_first: bool = False,
                      extra_args: Sequence[str] = ()) -> Screening:
    """Run the `select`ed tests against each candidate (file -> new text) in one sandboxed
    interpreter; a candidate that passes them runs the `confirm` tests too, and with
    `stop_first` the first candidate to pass both ends the screening (the rest are None).
    The workspace's files are restored by the host afterwards, whatever happened inside (a
    candidate that hangs is killed with the sandbox)."""
    out = Path(tempfile.mkdtemp(prefix="frostline-out-"))
    touched = sorted({rel for c in candidates for rel in c})
    saved = {rel: (workspace / rel).read_bytes() for rel in touched}
    try:
        args = ["-q", "-p", "no:cacheprovider", "--tb=line", "--color=no", "-rN", *extra_args]
        spec = {"screen": [dict(c) for c in candidates], "root": WORKSPACE, "out": OUT,
                "args": args, "select": list(select), "confirm": list(confirm),
                "stop_first": stop_first, "timeout": settings.test_timeout}
        result = _drive(workspace, out, spec, settings)
        results: list[tuple[str, ...] | None] = []
        expired: list[int] = []
        for i in range(len(candidates)):
            junit, code = out / f"junit-{i}.xml", out / f"exit-{i}"
            if not junit.is_file() or not code.is_file():
                results.append(None)
                continue
            outcomes, _ = parse_junit(junit.read_bytes())
            bad = {t for t, o in outcomes.items() if o in ("failed", "error")}
            if (out / f"timeout-{i}").is_file():
                # A timeout ended this candidate's run: what it never reached did not pass.
                phase = (out / f"timeout-{i}").read_text(encoding="utf-8")
                bad |= {t for t in (confirm if phase == "confirm" else select)
                        if t not in outcomes}
                expired.append(i)
            failed = tuple(sorted(bad))
            if int(code.read_text() or 1) in (2, 3, 4, 5) and not failed:
                failed = ("<collection>",)
            results.append(failed)
        stopped = next((i for i in range(len(candidates)) if results[i] is None
                        and (out / f"started-{i}").is_file()), None)
        return Screening(tuple(results), result.duration, result.timed_out, stopped,
                         tuple(expired))
    finally:
        for rel, data in saved.items():
            (workspace / rel).write_bytes(data)
        shutil.rmtree(out, ignore_errors=True)


def task_args(task: Task) -> tuple[str, ...]:
    """The pytest arguments `task`'s suite needs besides what to collect: its own, then its
    import root and test dependencies on sys.path (pytest's `pythonpath` option)."""
    if task.import_root in ("", ".") and not task.dep_paths:
        return tuple(task.test_args)
    paths = " ".join([task.import_root or ".", *task.dep_paths])
    return (*task.test_args, "-o", f"pythonpath={paths}")
