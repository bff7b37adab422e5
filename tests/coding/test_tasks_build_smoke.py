"""The CI smoke slice of `frostline tasks build` and `frostline ab`: one small package, ten
tasks, every invariant of tasks.jsonl checked, one task replayed in the sandbox, and the A/B
driver's full arm on all ten.

Needs the package index (skipped with the reason when it cannot be reached) and bubblewrap
(skipped when it is not installed; a sandbox that is installed but broken fails the test).
"""

from __future__ import annotations

import json
import shutil
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli.tasks import tasks as tasks_cli
from frostline.coding.interface import Task
from frostline.coding.tasks.fetch import INDEX_ENV
from frostline.coding.tasks.mutate import apply, bytecode_identical
from frostline.coding.tasks.pins import PACKAGES
from frostline.coding.tasks.split import SEAL_FILE, load_tasks, seal_split
from frostline.coding.tasks.suite import run_suite, sandbox_profile, task_pytest_args
from frostline.coding.tasks.verdict import MAX_FAILING

PACKAGE, PER_PACKAGE = "parse", 10


def _index_reachable() -> bool:
    import os

    base = os.environ.get(INDEX_ENV) or "https://pypi.org/pypi/"
    try:
        with urllib.request.urlopen(f"{base.rstrip('/')}/{PACKAGE}/json", timeout=10):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    if not _index_reachable():
        pytest.skip("the package index cannot be reached; the build downloads pinned sdists")
    root = tmp_path_factory.mktemp("build")
    # The default cache (~/.cache/frostline): downloads are kept across sessions.
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(root / "out"), "--packages", PACKAGE,
                                       "--per-package", str(PER_PACKAGE), "--jobs", "2",
                                       "--json"])
    assert r.exit_code == 0, r.output
    return root / "out", json.loads(r.stdout)


@pytest.mark.timeout(900)
def test_tasks_jsonl_invariants(built: tuple[Path, dict]) -> None:
    out, summary = built
    spec = PACKAGES[PACKAGE]
    rows = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines()]
    assert summary["tasks"] == len(rows) and 1 <= len(rows) <= PER_PACKAGE
    figures = summary["packages"][0]
    assert figures["green"] and figures["kept"] == len(rows) and figures["tests"] > 0
    assert 0 < figures["kill_rate"] <= 1 and "upper bound" in summary["note"]
    assert summary["bugs"] == "injected"
    tasks = [Task.from_dict(r) for r in rows]
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert len({(t.mutation.file, t.mutation.line) for t in tasks}) == len(tasks)
    for t in tasks:
        assert (t.package, t.version, t.sha256) == (spec.name, spec.version, spec.archive.sha256)
        assert t.split == "tuning" and t.test_paths == spec.test_paths
        source = (Path(t.source_dir) / t.mutation.file).read_text()
        mutant = apply(source, t.mutation)  # the line still reads `before`
        assert t.mutation.after != t.mutation.before and not bytecode_identical(source, mutant)
        assert t.visible_failing and t.hidden and not set(t.visible_failing) & set(t.hidden)
        assert len(t.visible_failing) <= MAX_FAILING * figures["tests"]
    assert load_tasks(out, "tuning") == tasks  # the seal matches


def test_every_built_mutant_is_inside_the_template_generators_search_space(
        built: tuple[Path, dict]) -> None:
    """The generator's operators invert every operator the builder injects: the original
    line is among the candidates at the mutated line (compared as syntax trees)."""
    import ast

    from frostline.coding.templates import line_edits

    out, _ = built
    for task in load_tasks(out, "tuning"):
        source = (Path(task.source_dir) / task.mutation.file).read_text()
        mutant = apply(source, task.mutation)
        want = ast.dump(ast.parse(source))
        edits = line_edits(task.mutation.file, mutant, task.mutation.line)
        assert any(ast.dump(ast.parse(mutant.replace(e["search"], e["replace"], 1))) == want
                   for e in edits), (task.task_id, task.mutation)


@pytest.mark.timeout(900)
def test_a_task_reproduces_in_the_sandbox(built: tuple[Path, dict]) -> None:
    out, _ = built
    task = load_tasks(out, "tuning")[0]
    spec = PACKAGES[task.package]
    tree = Path(task.source_dir)
    original = run_suite(spec, tree, seed=2, select=[*task.visible_failing, *task.hidden])
    mutant = run_suite(spec, tree, seed=2, mutation=task.mutation,
                       select=[*task.visible_failing, *task.hidden])
    assert original.green
    assert set(task.visible_failing) <= mutant.failing


@pytest.mark.timeout(900)
def test_task_pytest_args_are_enough_for_another_runner(built: tuple[Path, dict]) -> None:
    """A runner that knows nothing of the pins (plain pytest, in the sandbox, from a copy of
    the tree with the mutation applied) reproduces the visible failures with these args."""
    from dataclasses import replace as _replace

    from frostline.runtime.sandbox_process import run_sandboxed

    out, _ = built
    task = load_tasks(out, "tuning")[0]
    code = (
        "import json, os, shutil, sys\n"
        "task = json.loads(sys.argv[1])\n"
        "shutil.copytree(task['source_dir'], '/tmp/w')\n"
        "path = os.path.join('/tmp/w', task['file'])\n"
        "text = open(path).read().split('\\n')\n"
        "text[task['line'] - 1] = task['after']\n"
        "open(path, 'w').write('\\n'.join(text))\n"
        "os.chdir('/tmp/w')\n"
        "import pytest\n"
        "sys.exit(pytest.main(['-q', '-rf', *task['args']]))\n")
    arg = json.dumps({"source_dir": task.source_dir, "file": task.mutation.file,
                      "line": task.mutation.line, "after": task.mutation.after,
                      "args": task_pytest_args(task, task.visible_failing)})
    profile = _replace(sandbox_profile(120), extra_ro_binds=(task.source_dir, *task.dep_paths))
    result = run_sandboxed(["-c", code, arg], profile)
    assert result.returncode == 1, result.stderr.decode()[-2000:]
    report = result.stdout.decode()
    assert all(f"FAILED {t}" in report for t in task.visible_failing), report[-2000:]


@pytest.mark.timeout(900)
def test_a_resumed_build_keeps_its_tasks_and_refuses_another_split(built: tuple[Path, dict]
                                                                   ) -> None:
    out, _ = built
    before = (out / "tasks.jsonl").read_text()
    seal = (out / SEAL_FILE).read_text()
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(out), "--packages", PACKAGE,
                                       "--per-package", str(PER_PACKAGE), "--json"])
    assert r.exit_code == 0, r.output
    assert (out / "tasks.jsonl").read_text() == before
    assert json.loads((out / SEAL_FILE).read_text())["split_sha256"] == json.loads(seal)["split_sha256"]
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(out), "--packages", "parse,inflection",
                                       "--json"])
    assert r.exit_code == 2 and "another split" in json.loads(r.stdout)["error"]["message"]


@pytest.mark.timeout(900)
def test_the_ab_driver_on_a_ten_task_slice(built: tuple[Path, dict], tmp_path: Path) -> None:
    """arm 4 (the full component, empty L column) on the real tasks: every task ends, the
    instruments that are zero by construction are zero, and the report is on disk."""
    from frostline.cli.ab import ab

    out, summary = built
    r = CliRunner().invoke(ab, ["--tasks", str(out), "--split", "tuning", "--limit", "10",
                                "--arms", "arm4", "--no-figures", "--out",
                                str(tmp_path / "r"), "--json"])
    assert r.exit_code == 0, r.output
    arm4 = json.loads(r.stdout)["arms"]["arm4"]
    assert arm4["tasks"] == min(10, summary["tasks"])
    assert arm4["illegal_actions"] == arm4["repeated_work"] == arm4["stale_context"] == 0
    assert arm4["llm_calls"] == arm4["tokens"] == 0  # the empty L column
    # Every kept mutant lies inside the template generator's operators, so a slice with none
    # resolved means the workflow is broken, not that the bugs are hard.
    assert arm4["resolve_rate"] > 0
    outcomes = (tmp_path / "r" / "outcomes.jsonl").read_text().splitlines()
    assert len(outcomes) == arm4["tasks"]
    assert (tmp_path / "r" / "report.md").exists()


def test_unknown_packages_and_bad_numbers_exit_2(tmp_path: Path) -> None:
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(tmp_path), "--packages", "leftpad",
                                       "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["unknown"] == ["leftpad"]
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(tmp_path), "--per-package", "0"])
    assert r.exit_code == 2 and "at least 1" in r.stderr
    seal_split(tmp_path / "other", {"toolz": "0" * 64})
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(tmp_path / "other"), "--packages",
                                       "parse", "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "tasks"
