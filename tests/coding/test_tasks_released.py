"""`frostline tasks build --bugs released` end to end, offline: a tiny package with four
releases, made into sdists by the test and cached as the build expects, built in the real
sandbox (skipped when bubblewrap is not installed).

One slow test (FROSTLINE_SLOW=1) builds a real pinned pair from the package index.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from frostline.cli.tasks import tasks as tasks_cli
from frostline.coding.interface import Task
from frostline.coding.tasks.errors import TaskSetError
from frostline.coding.tasks.pins import PackageSpec
from frostline.coding.tasks.release_pins import RELEASE_PAIRS, ReleasePair
from frostline.coding.tasks.released import ReleasedOptions, build_released
from frostline.coding.tasks.split import SEAL_FILE, load_tasks, read_seal
from frostline.coding.tasks.suite import run_suite
from frostline.coding.workspace import Workspace
from tests.coding.release_fixture import CORE_10, RELEASES, TESTS_11, sdist


def _pairs(cache: Path) -> tuple[ReleasePair, ...]:
    archives = [sdist(cache / "archives", v) for v in RELEASES]
    return tuple(ReleasePair(PackageSpec(new, import_root=".", mutate=("tinycalc",),
                                         test_paths=("tests",)), old)
                 for old, new in itertools.pairwise(archives))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, tuple[ReleasePair, ...]]:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    root = tmp_path_factory.mktemp("released")
    pairs = _pairs(root / "cache")
    options = ReleasedOptions(out=root / "out", cache=root / "cache", pairs=pairs,
                              heldout=("tinycalc",))
    lines: list[str] = []
    summary = build_released(options, lines.append)
    assert any("sealed the split before any task exists" in x for x in lines[:1])
    return root, summary, pairs


@pytest.mark.timeout(600)
def test_each_pair_is_kept_or_dropped_with_its_reason(built) -> None:  # type: ignore[no-untyped-def]
    _, summary, _ = built
    verdicts = {p["pair"]: p["verdict"] for p in summary["pairs"]}
    assert verdicts == {"tinycalc-1.0..1.1": "kept",
                        "tinycalc-1.1..1.2": "screen_source_files:2",
                        "tinycalc-1.2..1.3": "no_test_fails_on_older"}
    assert (summary["pairs_examined"], summary["pairs_kept"], summary["tasks"],
            summary["heldout"]) == (3, 1, 1, 1)
    assert summary["bugs"] == "released" and "not injected" in summary["note"]
    kept = next(p for p in summary["pairs"] if p["verdict"] == "kept")
    assert kept["fix_file"] == "tinycalc/core.py" and kept["fix_lines"] == 2
    assert kept["failing_on_older"] == ["tests/test_core.py::test_clamp_high",
                                        "tests/test_core.py::test_clamp_high_negative_range"]


@pytest.mark.timeout(600)
def test_the_task_holds_the_bug_and_never_the_fix(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    root, _, pairs = built
    (task,) = load_tasks(root / "out", "heldout")  # the seal matches its rows
    assert task.mutation.operator == "released" and task.mutation.before == task.mutation.after
    assert (task.mutation.file, task.mutation.line) == ("tinycalc/core.py", 5)
    assert set(task.visible_failing) | set(task.hidden) >= {
        "tests/test_core.py::test_clamp_high", "tests/test_core.py::test_clamp_high_negative_range"}
    assert len(task.visible_failing) == 1 and task.hidden
    ws = Workspace.create(tmp_path / "ws", Path(task.source_dir), task.mutation)
    # the workflow's tree: the tests of 1.1, the code of 1.0; the fixed line is nowhere in it
    assert (ws.tree / "tinycalc/core.py").read_text() == CORE_10
    assert (ws.tree / "tests/test_core.py").read_text() == TESTS_11
    for path in ws.tree.rglob("*.py"):
        assert "return hi" not in path.read_text()
    # the hidden tests decide: they fail on the buggy tree and pass on the upstream fix
    spec = pairs[0].spec
    fixed = root / "cache" / "trees" / "tinycalc-1.1"
    hidden_failing = set(task.hidden) & set(kept_failing(root))
    assert hidden_failing
    assert not run_suite(spec, fixed, select=sorted(task.hidden)).failing
    assert run_suite(spec, Path(task.source_dir), select=sorted(task.hidden)).failing == \
        frozenset(hidden_failing)


def kept_failing(root: Path) -> list[str]:
    record = json.loads((root / "out" / "pairs" / "tinycalc-1.0..1.1.json").read_text())
    return list(record["failing_on_older"])


@pytest.mark.timeout(600)
def test_the_split_is_sealed_with_the_pairs_and_a_rebuild_resumes(built) -> None:  # type: ignore[no-untyped-def]
    root, summary, pairs = built
    seal = read_seal(root / "out")
    assert seal["split"]["population"] == "released"
    assert seal["split"]["heldout"] == ["tinycalc"] and seal["tasks"]["heldout"] == 1
    assert set(seal["split"]["pairs"]) == {p.pair_id for p in pairs}
    lines: list[str] = []
    again = build_released(ReleasedOptions(out=root / "out", cache=root / "cache", pairs=pairs,
                                           heldout=("tinycalc",)), lines.append)
    assert sum("already judged" in x for x in lines) == 3
    assert again["pairs"] == summary["pairs"]
    # a pair whose suite runs with other settings is judged again, the others are kept
    other = replace(pairs[2], spec=replace(pairs[2].spec, test_args=(
        "--deselect=tests/test_core.py::test_double_large",)))
    lines.clear()
    third = build_released(ReleasedOptions(out=root / "out", cache=root / "cache",
                                           pairs=(*pairs[:2], other), heldout=("tinycalc",)),
                           lines.append)
    assert sum("already judged" in x for x in lines) == 2
    assert third["pairs"][2]["settings"] == [list(other.spec.test_args), []]
    assert third["pairs"][2]["verdict"] == "no_test_fails_on_older"
    # another held-out list is another split: refused, the sealed folder is left as it is
    with pytest.raises(TaskSetError, match="seals another split"):
        build_released(ReleasedOptions(out=root / "out", cache=root / "cache", pairs=pairs,
                                       heldout=()))
    assert (root / "out" / SEAL_FILE).read_text() == json.dumps(seal, indent=2,
                                                                sort_keys=True) + "\n"


def test_an_altered_cached_sdist_is_refused(tmp_path: Path) -> None:
    from frostline.coding.tasks.errors import FetchError

    pairs = _pairs(tmp_path / "cache")
    (tmp_path / "cache" / "archives" / "tinycalc-1.0.tar.gz").write_bytes(b"not the pinned bytes")
    with pytest.raises(FetchError, match="not the pinned"):
        build_released(ReleasedOptions(out=tmp_path / "out", cache=tmp_path / "cache",
                                       pairs=pairs[:1], heldout=()))
    # the split was sealed first, before the bad archive was met
    assert (tmp_path / "out" / SEAL_FILE).is_file()


def test_no_pairs_or_twice_the_same_pair_is_bad_input(tmp_path: Path) -> None:
    pairs = _pairs(tmp_path / "cache")
    for bad in ((), (pairs[0], pairs[0])):
        with pytest.raises(TaskSetError, match="each once"):
            build_released(ReleasedOptions(out=tmp_path / "out", cache=tmp_path / "cache",
                                           pairs=bad, heldout=()))


def test_the_cli_names_the_population_and_refuses_unknown_values(tmp_path: Path) -> None:
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(tmp_path), "--bugs", "guessed"])
    assert r.exit_code == 2 and "'injected'" in r.output and "'released'" in r.output
    r = CliRunner().invoke(tasks_cli, ["build", "--out", str(tmp_path), "--bugs", "released",
                                       "--packages", "nosuch", "--json"])
    assert r.exit_code == 2 and "for --bugs released" in r.output
    r = CliRunner().invoke(tasks_cli, ["build", "--help"])
    assert "--bugs [injected|released]" in r.output and "[default: injected]" in r.output


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(not os.environ.get("FROSTLINE_SLOW"),
                    reason="downloads and runs real release pairs; set FROSTLINE_SLOW=1")
def test_a_real_pinned_pair_builds(tmp_path: Path) -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed (apt-get install bubblewrap)")
    pair = next(p for p in RELEASE_PAIRS if p.pair_id == "parse-1.22.2..1.22.3")
    # the default cache (~/.cache/frostline): downloads are kept across sessions
    r = CliRunner().invoke(tasks_cli, ["build", "--bugs", "released", "--packages", "parse",
                                       "--out", str(tmp_path / "out"), "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout)
    assert summary["pairs_examined"] == sum(p.name == "parse" for p in RELEASE_PAIRS)
    record = next(p for p in summary["pairs"] if p["pair"] == pair.pair_id)
    assert record["verdict"] == "kept" and record["split"] == "tuning"
    tasks = load_tasks(tmp_path / "out", "tuning")
    assert len(tasks) == summary["pairs_kept"] >= 1
    task = next(t for t in tasks if t.task_id == "parse-1.22.2-to-1.22.3")
    assert isinstance(task, Task) and task.sha256 == pair.spec.archive.sha256
