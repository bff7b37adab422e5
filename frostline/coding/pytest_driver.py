"""The program that runs a repository's pytest suite inside the sandbox.

It is not imported by the host: `testrun` reads this file's text and runs it with ``python -c``
inside bubblewrap, so it imports nothing of frostline's (only the standard library, pytest and
coverage from the environment frostline runs in, which the sandbox shows read-only: see
`frostline.runtime.sandbox_env`). Its one argument is a JSON spec, or ``@PATH``
of a file holding it:

    {"args": [...pytest arguments...], "junit": PATH, "timeout": SECONDS,
     "coverage": {"source": [DIR, ...], "out": PATH} | null, "progress": PATH | null}

or, to screen candidate patches in one interpreter (`screen`):

    {"screen": [{file: text, ...}, ...], "root": DIR, "out": DIR, "args": [...],
     "select": [...], "confirm": [...], "stop_first": BOOL, "timeout": SECONDS}

What it adds to a plain ``pytest.main``:

- every junit ``<testcase>`` carries the test's node id as a ``nodeid`` property, so outcomes
  are read back by node id from the XML, never from the console;
- a per-test timeout: SIGALRM interrupts a test's call after ``timeout`` seconds and the test
  fails with ``TestTimeout`` (the host's wall clock still bounds the whole run);
- in every run, a hard stop besides: a test spinning in C code (a regular expression
  backtracking, a huge allocation loop) never returns to the interpreter for SIGALRM to act, so
  faulthandler's watchdog thread, which needs no GIL, ends the process `HARD_STOP_S` after the
  timeout (its traceback goes to stderr). When screening, ``started-<i>`` names each candidate
  before it runs, so the host knows which one stopped the screening, and the candidates before
  it keep their results; in a plain run, ``progress`` receives ``start NODEID`` and
  ``end NODEID`` lines around each test, flushed as they happen, so the host knows which test
  the hard stop ended (started, never ended) and runs the suite again without it;
- when screening, a test that runs past its timeout ends its candidate's pytest run at once
  (``timeout-<i>`` names the run, ``select`` or ``confirm``): the candidate has failed
  already, and its other tests would likely spend their whole timeout too;
- with ``coverage``, coverage.py measures the run with one dynamic context per test (the node
  id, switched around setup, call and teardown), and the executed lines per context are written
  to ``coverage.out`` as ``{file: {line: [nodeid, ...]}}``. Lines run outside any test (imports
  during collection) carry no context and are left out.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
from collections.abc import Generator
from typing import Any

import pytest

#: How long past its timeout a test stuck outside the interpreter may run before the screening
#: process is ended.
HARD_STOP_S = 10.0


class TestTimeout(Exception):
    """A test ran past its per-test timeout."""

    __test__ = False  # not a test class, whatever pytest's collection rules say


class Probe:
    """The pytest plugin: node ids on junit test cases, the per-test timeout, coverage contexts."""

    def __init__(self, timeout: float, cov: Any | None, *, stop_on_timeout: bool = False,
                 progress: str | None = None) -> None:
        self.timeout = timeout
        self.cov = cov
        self.stop_on_timeout = stop_on_timeout
        self.expired = False
        self.progress = open(progress, "a", encoding="utf-8") if progress else None  # noqa: SIM115
        # The process's own stderr, taken before pytest captures fd 2 around each test: the
        # watchdog's traceback must reach the host, not a capture file that dies with it.
        self.stderr = os.fdopen(os.dup(2), "w")

    def _note(self, line: str) -> None:
        if self.progress is not None:
            self.progress.write(line + "\n")
            self.progress.flush()  # the process may be ended at any instant after this

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        item.user_properties.append(("nodeid", item.nodeid))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        if self.cov is not None:
            self.cov.switch_context(item.nodeid)
        self._note(f"start {item.nodeid}")
        yield
        self._note(f"end {item.nodeid}")
        if self.cov is not None:
            self.cov.switch_context("")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        def expire(signum: int, frame: Any) -> None:
            self.expired = True
            if self.stop_on_timeout:
                item.session.shouldstop = f"{item.nodeid} ran past its timeout"
            raise TestTimeout(f"{item.nodeid} ran past its {self.timeout:g} s timeout")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        faulthandler.dump_traceback_later(self.timeout + HARD_STOP_S, exit=True,
                                          file=self.stderr)
        try:
            yield
        finally:
            faulthandler.cancel_dump_traceback_later()
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def contexts(cov: Any) -> dict[str, dict[str, list[str]]]:
    """Executed lines per file, each with the node ids of the tests that ran it."""
    data = cov.get_data()
    out: dict[str, dict[str, list[str]]] = {}
    for path in sorted(data.measured_files()):
        by_line = data.contexts_by_lineno(path)
        lines = {str(n): sorted(c for c in ctxs if c) for n, ctxs in by_line.items()}
        kept = {n: c for n, c in lines.items() if c}
        if kept:
            out[path] = kept
    return out


def purge(root: str) -> None:
    """Forget every module loaded from `root`, so the next pytest run imports the new text."""
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(root):
            del sys.modules[name]


def screen(spec: dict[str, Any]) -> int:
    """Run the `select`ed tests once per candidate (each a set of file texts), in this
    process, restoring the original texts after each; a candidate that passes them is run again
    on the `confirm` tests, and with `stop_first` the first candidate to pass both ends the
    screening. Junit reports go to ``junit-<i>.xml``, exit codes to ``exit-<i>``."""
    root, out = spec["root"], spec["out"]
    originals: dict[str, str] = {}
    for i, candidate in enumerate(spec["screen"]):
        with open(f"{out}/started-{i}", "w", encoding="utf-8"):
            pass
        try:
            for rel, text in candidate.items():
                path = f"{root}/{rel}"
                if rel not in originals:
                    with open(path, encoding="utf-8") as fh:
                        originals[rel] = fh.read()
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
            phase = "select"
            code, expired = _screen_one(spec, i, spec["select"])
            if code == 0 and spec.get("confirm"):
                phase = "confirm"
                code, expired = _screen_one(spec, i, spec["confirm"])
            if expired:
                with open(f"{out}/timeout-{i}", "w", encoding="utf-8") as fh:
                    fh.write(phase)
            with open(f"{out}/exit-{i}", "w", encoding="utf-8") as fh:
                fh.write(str(code))
        finally:
            for rel, text in originals.items():
                with open(f"{root}/{rel}", "w", encoding="utf-8") as fh:
                    fh.write(text)
        if code == 0 and spec.get("stop_first"):
            break
    return 0


def _screen_one(spec: dict[str, Any], i: int, select: list[str]) -> tuple[int, bool]:
    """One pytest run of candidate `i` (its junit report replaces any earlier one): its exit
    code, and whether a test ran past its timeout (which ended the run)."""
    purge(spec["root"])
    args = [*spec["args"], *select, f"--junitxml={spec['out']}/junit-{i}.xml",
            "-o", "junit_family=xunit2"]
    probe = Probe(float(spec["timeout"]), None, stop_on_timeout=True)
    return int(pytest.main(args, plugins=[probe])), probe.expired


def main(argv: list[str]) -> int:
    # "@PATH": the spec is in a file (candidate texts can exceed the kernel's argument limit)
    if argv[1].startswith("@"):
        with open(argv[1][1:], encoding="utf-8") as fh:
            spec = json.load(fh)
    else:
        spec = json.loads(argv[1])
    if spec.get("screen") is not None:
        return screen(spec)
    cov_spec = spec.get("coverage")
    cov = None
    if cov_spec:
        import coverage

        cov = coverage.Coverage(data_file=None, source=list(cov_spec["source"]),
                                config_file=False, branch=False)
        cov.start()
    args = [*spec["args"], f"--junitxml={spec['junit']}", "-o", "junit_family=xunit2"]
    try:
        code = int(pytest.main(args, plugins=[Probe(float(spec["timeout"]), cov,
                                                    progress=spec.get("progress"))]))
    finally:
        if cov is not None:
            cov.stop()
    if cov is not None:
        with open(cov_spec["out"], "w", encoding="utf-8") as fh:
            json.dump(contexts(cov), fh)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
