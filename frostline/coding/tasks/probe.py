"""The program that runs a package's suite inside the sandbox (stdlib, pytest, coverage only).

The host passes its source as ``python -c`` with one JSON argument (see `suite.run_suite`), so
nothing of frostline is imported in the sandbox. It copies the read-only package tree into the
sandbox's private /tmp, applies the mutation if there is one (refusing it when the line's text
is not the expected one), runs pytest in-process with a recorder plugin, and prints one line
``PROBE-RESULT <json>``: each test's outcome by node id, pytest's exit code, collection errors
and, when asked, which tests executed each line (coverage.py, one context per test).

Everything the suite prints goes to /dev/null: only the result line reaches stdout.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from typing import Any

MARKER = "PROBE-RESULT "
WORKDIR = "/tmp/w"


class Recorder:
    """A pytest plugin: a test failed if any of its phases (or subtests) failed, was skipped if
    any was skipped and none failed, and passed only if every report of it passed: a test that
    skips one of its subtests and passes the others is "skipped", as its junit report says."""

    def __init__(self, cov: Any = None) -> None:
        self.outcomes: dict[str, str] = {}
        self.collect_errors: list[str] = []
        self.cov = cov

    def pytest_runtest_setup(self, item: Any) -> None:
        if self.cov is not None:
            self.cov.switch_context(item.nodeid)

    def pytest_runtest_logreport(self, report: Any) -> None:
        previous = self.outcomes.get(report.nodeid)
        if report.failed:
            self.outcomes[report.nodeid] = "failed"
        elif report.skipped and previous in (None, "passed"):
            self.outcomes[report.nodeid] = "skipped"
        elif report.when == "call" and previous is None:
            self.outcomes[report.nodeid] = "passed"

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.collect_errors.append(report.nodeid or "<session>")


def _apply(mutation: dict[str, Any]) -> None:
    path = os.path.join(WORKDIR, mutation["file"])
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    index = mutation["line"] - 1
    if not 0 <= index < len(lines) or lines[index] != mutation["before"]:
        raise SystemExit(f"mutation does not apply: {mutation['file']}:{mutation['line']}")
    lines[index] = mutation["after"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def _line_map(cov: Any, sources: list[str]) -> dict[str, dict[str, list[int]]]:
    """file (relative to the tree) -> line -> indexes of the tests that executed it."""
    data = cov.get_data()
    ids: dict[str, int] = {}
    out: dict[str, dict[str, list[int]]] = {}
    roots = [os.path.join(WORKDIR, s) for s in sources]
    for filename in data.measured_files():
        if not any(filename == r or filename.startswith(r + os.sep) for r in roots):
            continue
        by_line = data.contexts_by_lineno(filename)
        lines = {str(n): sorted(ids.setdefault(c, len(ids)) for c in ctxs if c)
                 for n, ctxs in by_line.items()}
        out[os.path.relpath(filename, WORKDIR)] = {k: v for k, v in lines.items() if v}
    return {"__tests__": {name: [i] for name, i in ids.items()}, **out}


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    shutil.copytree(spec["tree"], WORKDIR, symlinks=True)
    if spec.get("mutation"):
        _apply(spec["mutation"])
    os.chdir(WORKDIR)
    sys.path[:0] = [os.path.join(WORKDIR, spec["import_root"]), *spec.get("deps", [])]
    import pytest

    cov = None
    if spec.get("coverage"):
        import coverage

        # coverage measures folders (or importable names): a single-module package
        # (`parse.py`) is measured through its folder; `_line_map` keeps only the module
        roots = [os.path.join(WORKDIR, s) for s in spec["coverage"]]
        cov = coverage.Coverage(data_file=None, config_file=False, source=sorted(
            {r if os.path.isdir(r) else os.path.dirname(r) for r in roots}))
        cov.start()
    recorder = Recorder(cov)
    keep = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    started = time.monotonic()
    try:
        code = int(pytest.main(spec["pytest_args"], plugins=[recorder]))
    finally:
        duration = time.monotonic() - started
        if cov is not None:
            cov.stop()
        os.dup2(keep, 1)
    result: dict[str, Any] = {"exit": code, "outcomes": recorder.outcomes, "duration": duration,
                              "collect_errors": recorder.collect_errors}
    if cov is not None:
        result["coverage"] = _line_map(cov, spec["coverage"])
    sys.stdout.write(MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
