"""The program that runs a repository's pytest suite inside the sandbox.

It is not imported by the host: `testrun` reads this file's text and runs it with ``python -c``
inside bubblewrap, so it imports nothing of frostline's (only the standard library, pytest and
coverage from the interpreter's site-packages). Its one argument is a JSON spec:

    {"args": [...pytest arguments...], "junit": PATH, "timeout": SECONDS,
     "coverage": {"source": [DIR, ...], "out": PATH} | null}

What it adds to a plain ``pytest.main``:

- every junit ``<testcase>`` carries the test's node id as a ``nodeid`` property, so outcomes
  are read back by node id from the XML, never from the console;
- a per-test timeout: SIGALRM interrupts a test's call after ``timeout`` seconds and the test
  fails with ``TestTimeout`` (the host's wall clock still bounds the whole run);
- with ``coverage``, coverage.py measures the run with one dynamic context per test (the node
  id, switched around setup, call and teardown), and the executed lines per context are written
  to ``coverage.out`` as ``{file: {line: [nodeid, ...]}}``. Lines run outside any test (imports
  during collection) carry no context and are left out.
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Generator
from typing import Any

import pytest


class TestTimeout(Exception):  # noqa: N818 - the name is what a reader of the junit XML sees
    """A test ran past its per-test timeout."""

    __test__ = False  # not a test class, whatever pytest's collection rules say


class Probe:
    """The pytest plugin: node ids on junit test cases, the per-test timeout, coverage contexts."""

    def __init__(self, timeout: float, cov: Any | None) -> None:
        self.timeout = timeout
        self.cov = cov

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        item.user_properties.append(("nodeid", item.nodeid))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, None, None]:
        if self.cov is not None:
            self.cov.switch_context(item.nodeid)
        yield
        if self.cov is not None:
            self.cov.switch_context("")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        def expire(signum: int, frame: Any) -> None:
            raise TestTimeout(f"{item.nodeid} ran past its {self.timeout:g} s timeout")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            yield
        finally:
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


def main(argv: list[str]) -> int:
    spec = json.loads(argv[1])
    cov_spec = spec.get("coverage")
    cov = None
    if cov_spec:
        import coverage

        cov = coverage.Coverage(data_file=None, source=list(cov_spec["source"]),
                                config_file=False, branch=False)
        cov.start()
    args = [*spec["args"], f"--junitxml={spec['junit']}", "-o", "junit_family=xunit2"]
    try:
        code = int(pytest.main(args, plugins=[Probe(float(spec["timeout"]), cov)]))
    finally:
        if cov is not None:
            cov.stop()
    if cov is not None:
        with open(cov_spec["out"], "w", encoding="utf-8") as fh:
            json.dump(contexts(cov), fh)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
