"""The held-out split: by package, sealed first, and refused when the seal does not match."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.coding.interface import Mutation, Task
from frostline.coding.tasks.errors import TaskSetError
from frostline.coding.tasks.split import (
    SEAL_FILE,
    TASKS_FILE,
    choose_heldout,
    load_tasks,
    seal_split,
    seal_tasks,
)

PINS = {"alpha": "a" * 64, "beta": "b" * 64, "gamma": "c" * 64}


def _row(package: str, n: int, split: str) -> dict[str, object]:
    return Task(task_id=f"{package}-{n}", package=package, version="1", sha256=PINS[package],
                source_dir="/nowhere", mutation=Mutation("m.py", 1, "number", "x = 1", "x = 2"),
                visible_failing=("t::a",), hidden=("t::b",), split=split).to_dict()


def _built(tmp_path: Path) -> Path:
    split = seal_split(tmp_path, PINS)
    rows = [_row(p, n, "heldout" if p in split["heldout"] else "tuning")
            for p in sorted(PINS) for n in range(3)]
    (tmp_path / TASKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    seal_tasks(tmp_path, rows)
    return tmp_path


@given(st.sets(st.text(min_size=1, max_size=6), min_size=1, max_size=12))
def test_heldout_is_by_package_and_never_everything(names: set[str]) -> None:
    held = choose_heldout(names)
    assert held and set(held) <= names
    assert len(names) == 1 or len(held) < len(names)
    assert choose_heldout(sorted(names, reverse=True)) == held


def test_the_seal_exists_before_any_task(tmp_path: Path) -> None:
    seal_split(tmp_path, PINS)
    seal = json.loads((tmp_path / SEAL_FILE).read_text())
    assert seal["split"]["heldout"] and "tasks" not in seal
    with pytest.raises(TaskSetError, match=r"no tasks\.jsonl"):
        load_tasks(tmp_path, "heldout")


def test_a_sealed_split_loads(tmp_path: Path) -> None:
    out = _built(tmp_path)
    held = load_tasks(out, "heldout")
    tuning = load_tasks(out, "tuning")
    assert held and tuning and {t.split for t in held} == {"heldout"}
    assert not {t.package for t in held} & {t.package for t in tuning}
    assert len(load_tasks(out, "all")) == len(held) + len(tuning)


def test_resealing_another_split_is_refused(tmp_path: Path) -> None:
    seal_split(tmp_path, PINS)
    seal_split(tmp_path, PINS)  # the same split: a resumed build
    with pytest.raises(TaskSetError, match="another split"):
        seal_split(tmp_path, {**PINS, "delta": "d" * 64})


def test_an_edited_heldout_row_breaks_the_seal(tmp_path: Path) -> None:
    out = _built(tmp_path)
    lines = (out / TASKS_FILE).read_text().splitlines()
    i = next(i for i, x in enumerate(lines) if '"heldout"' in x)
    row = json.loads(lines[i])
    row["hidden"] = []
    lines[i] = json.dumps(row)
    (out / TASKS_FILE).write_text("\n".join(lines) + "\n")
    with pytest.raises(TaskSetError, match="changed after sealing") as err:
        load_tasks(out, "heldout")
    assert err.value.fields["reason"] == "tasks_altered"
    assert load_tasks(out, "tuning")  # the tuning split carries no seal


def test_a_moved_package_breaks_the_seal(tmp_path: Path) -> None:
    out = _built(tmp_path)
    rows = [json.loads(x) for x in (out / TASKS_FILE).read_text().splitlines()]
    for r in rows:
        r["split"] = "heldout"
    (out / TASKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(TaskSetError, match="wrong split"):
        load_tasks(out, "heldout")


def test_an_edited_split_breaks_the_seal(tmp_path: Path) -> None:
    out = _built(tmp_path)
    seal = json.loads((out / SEAL_FILE).read_text())
    seal["split"]["heldout"] = sorted(PINS)
    (out / SEAL_FILE).write_text(json.dumps(seal))
    with pytest.raises(TaskSetError, match="no longer hashes"):
        load_tasks(out, "heldout")


@pytest.mark.parametrize(("setup", "message"), [
    ("missing", "does not exist"), ("garbage_seal", "cannot be read"),
    ("bad_row", "is not a task"), ("bad_split", "unknown split")])
def test_bad_folders_are_clear_errors(tmp_path: Path, setup: str, message: str) -> None:
    out = _built(tmp_path / "t")
    split = "heldout"
    if setup == "missing":
        out = tmp_path / "absent"
    elif setup == "garbage_seal":
        (out / SEAL_FILE).write_text("{not json")
    elif setup == "bad_row":
        with (out / TASKS_FILE).open("a") as f:
            f.write('{"task_id": 1}\n')
    else:
        split = "train"
    with pytest.raises(TaskSetError, match=message):
        load_tasks(out, split)


def test_a_heldout_split_sealed_before_the_tuning_split_exists(tmp_path: Path) -> None:
    split = seal_split(tmp_path, PINS)
    held = [_row(p, n, "heldout") for p in split["heldout"] for n in range(2)]
    (tmp_path / TASKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in held))
    seal_tasks(tmp_path, held, finished=False)
    assert len(load_tasks(tmp_path, "heldout")) == len(held)
    for name in ("tuning", "all"):
        with pytest.raises(TaskSetError, match="still being built") as err:
            load_tasks(tmp_path, name)
        assert err.value.fields["reason"] == "unfinished"
    rows = held + [_row(p, 0, "tuning") for p in split["tuning"]]
    (tmp_path / TASKS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    seal_tasks(tmp_path, rows)
    assert load_tasks(tmp_path, "heldout") and load_tasks(tmp_path, "all")


def test_the_build_seals_its_heldout_rows_before_building_tuning_packages(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The package builder is replaced by one that makes rows (a real build takes minutes);
    what is tested is the order of sealing around it."""
    from frostline.coding.tasks import build as build_mod

    seen: list[tuple[str, str, int | None]] = []

    def fake_package(spec, split_name, options, progress):  # type: ignore[no-untyped-def]
        try:
            held_now: int | None = len(load_tasks(tmp_path, "heldout"))
        except TaskSetError:
            held_now = None
        seen.append((spec.name, split_name, held_now))
        figures = build_mod.PackageFigures(spec.name, spec.version, spec.archive.sha256,
                                           split_name, options.per_package)
        rows = [Task(task_id=f"{spec.name}-0", package=spec.name, version=spec.version,
                     sha256=spec.archive.sha256, source_dir="/nowhere",
                     mutation=Mutation("m.py", 1, "number", "x = 1", "x = 2"),
                     visible_failing=("t::a",), hidden=("t::b",), split=split_name).to_dict()]
        return figures, rows

    monkeypatch.setattr(build_mod, "_build_package", fake_package)
    names = sorted(build_mod.PACKAGES)[:5]
    # The cache is never read here; it only has to be a folder the sandbox could see.
    options = build_mod.BuildOptions(out=tmp_path, packages=tuple(names), per_package=1,
                                     cache=Path.home() / ".cache" / "frostline")
    summary = build_mod.build(options)
    held = [s for s in seen if s[1] == "heldout"]
    tuning = [s for s in seen if s[1] == "tuning"]
    assert held and tuning and seen.index(held[-1]) < seen.index(tuning[0])
    assert all(h[2] is None for h in held)  # nothing sealed while held-out packages build
    assert all(t[2] == len(held) for t in tuning)  # sealed before any tuning package
    assert summary["tasks"] == len(names) and len(load_tasks(tmp_path, "all")) == len(names)
    # the sealed held-out packages decide the split; the old held-out packages are tuning
    from frostline.coding.tasks.heldout import HELDOUT
    from frostline.coding.tasks.split import read_seal

    split = read_seal(tmp_path)["split"]
    assert summary["bugs"] == "injected" and split["population"] == "injected"
    assert split["heldout"] == sorted(set(HELDOUT) & set(names)) == ["decorator"]
    assert "cachetools" in split["tuning"] and "humanize" in split["tuning"]
