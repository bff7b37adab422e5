"""Build the released-bug population: bugs fixed upstream between two consecutive releases.

For each pinned pair (`release_pins`), N and N+1: fetch and verify both sdists, screen their
difference (`releases.screen`: one source file, a few lines, a test added or changed), and make
the buggy tree, release N with the test files of N+1 (`releases.make_buggy_tree`). In the
sandbox, under every hash seed:
the fixed tree (N+1) must be green, and the buggy tree must fail the same tests every time,
all of them in the test files N+1 added or changed (the tests that flip). Those failing tests
are split into visible and hidden as for injected bugs (`verdict.split_tests`), with the tests
that pass on both trees and execute the fixed lines as hidden guards; the task is kept when the
workflow's run (the hidden tests deselected) still shows its visible tests failing.

The task's `source_dir` is the buggy tree and its `mutation` names the first line of the fix
site without changing it (`operator` "released", `before` == `after`): the bug is already in
the tree, and the fix (or the changelog of N+1 that tells it) is in no file the workflow is
given. Each pair's record, kept or
dropped and why, is written to `pairs/ID.json` (and its task to `pairs/ID.jsonl`) as soon as
it is judged, so a build that stops resumes where it was (a pair whose suite settings changed
is judged again). The split is sealed before any pair is
built, from `heldout.HELDOUT`, with the pairs' archives in the seal.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from frostline.coding.interface import Mutation, Task
from frostline.coding.tasks import split, verdict
from frostline.coding.tasks.errors import TaskSetError
from frostline.coding.tasks.fetch import fetch, unpack
from frostline.coding.tasks.heldout import RULE, sealed_heldout
from frostline.coding.tasks.pins import DEPS
from frostline.coding.tasks.release_pins import ReleasePair
from frostline.coding.tasks.releases import fix_site, make_buggy_tree, screen
from frostline.coding.tasks.suite import SuiteResult, run_suite

__all__ = ["NOTE", "PairFigures", "ReleasedOptions", "build_released"]

_FORMAT = 1
#: What build.json says the population is.
NOTE = ("released bugs: fixed upstream between consecutive releases (N+1 fixes N and adds or "
        "changes a test that fails on N and passes on N+1); found in the wild, not injected")
Progress = Callable[[str], None]


@dataclass(frozen=True)
class ReleasedOptions:
    """What `frostline tasks build --bugs released` was asked: the output folder, the cache,
    the pairs, and the held-out packages (default: the sealed `heldout.HELDOUT`)."""

    out: Path
    cache: Path
    pairs: tuple[ReleasePair, ...]
    heldout: tuple[str, ...] | None = None


@dataclass
class PairFigures:
    """One pair's part of the build: `verdict` "kept", or why the pair was dropped."""

    pair: str
    package: str
    older: str
    newer: str
    split: str
    verdict: str = ""
    detail: str = ""
    fix_file: str = ""
    fix_lines: int = 0
    changed_tests: list[str] = field(default_factory=list)
    tests: int = 0
    failing_on_older: list[str] = field(default_factory=list)
    suite_s: float = 0.0
    wall_s: float = 0.0
    #: The suite's pytest arguments and test dependencies the pair was judged with.
    settings: list[list[str]] = field(default_factory=lambda: [[], []])
    format: int = _FORMAT


def _tree(pair: ReleasePair, cache: Path) -> tuple[Path, Path, list[Path]]:
    """The unpacked, verified trees of N and N+1 and the test dependencies."""
    spec, older = pair.spec, pair.older
    old = unpack(fetch(older, cache), cache / "trees" / f"{spec.name}-{older.version}",
                 strip_top=True)
    new = unpack(fetch(spec.archive, cache), cache / "trees" / f"{spec.name}-{spec.version}",
                 strip_top=True)
    deps = [unpack(fetch(DEPS[d], cache), cache / "deps" / f"{d}-{DEPS[d].version}",
                   strip_top=False) for d in spec.deps]
    return old, new, deps


def _covering(run: SuiteResult, file: str, first: int, last: int) -> frozenset[str]:
    lines = run.coverage.get(file, {})
    return frozenset(t for n in range(first, last + 1) for t in lines.get(n, ()))


def _in_files(test: str, files: Sequence[str]) -> bool:
    return test.split("::", 1)[0] in files


def _judge(pair: ReleasePair, buggy: Path, fixed: Path, deps: Sequence[Path],
           figures: PairFigures, changed: Sequence[str], site: tuple[int, int]
           ) -> tuple[str, str, Task | None]:
    """(verdict, detail, task when kept) from the sandbox runs of both trees."""
    spec = pair.spec
    f1 = run_suite(spec, fixed, deps, seed=verdict.SEEDS[0], wall_seconds=600)
    figures.tests, figures.suite_s = len(f1.outcomes), round(f1.duration, 2)
    if not f1.green:
        return "fixed_not_green", f"{f1.error or 'exit ' + str(f1.exit_code)} " \
                                  f"{sorted(f1.failing)[:5]} {f1.detail}".strip(), None
    wall = max(60.0, 4 * f1.duration + 15)
    b1 = run_suite(spec, buggy, deps, seed=verdict.SEEDS[0], coverage=True, wall_seconds=wall)
    if b1.error:
        return f"buggy_{b1.error}", b1.detail, None
    flip = b1.failing
    figures.failing_on_older = sorted(flip)
    if not flip:
        return "no_test_fails_on_older", "", None
    passed_fixed = {t for t, o in f1.outcomes.items() if o == "passed"}
    if not flip <= passed_fixed:
        return "fails_but_not_passing_on_newer", str(sorted(flip - passed_fixed)[:5]), None
    if not all(_in_files(t, changed) for t in flip):
        old = sorted(t for t in flip if not _in_files(t, changed))
        return "unchanged_test_fails", str(old[:5]), None
    if len(flip) > verdict.MAX_FAILING * figures.tests:
        return "too_broad", f"{len(flip)} of {figures.tests} tests fail", None
    for seed in verdict.SEEDS[1:]:
        f = run_suite(spec, fixed, deps, seed=seed, wall_seconds=wall)
        b = run_suite(spec, buggy, deps, seed=seed, wall_seconds=wall)
        if not f.green or b.error or b.failing != flip:
            return "unstable", f"under PYTHONHASHSEED={seed}", None
    passed_both = frozenset(t for t, o in b1.outcomes.items()
                            if o == "passed" and t in passed_fixed)
    task = _task(pair, buggy, deps, flip, _covering(b1, figures.fix_file, *site) & passed_both,
                 figures, site[0])
    if task is None:
        return "no_hidden", "", None
    run = run_suite(spec, buggy, deps, seed=verdict.SEEDS[0], wall_seconds=wall,
                    deselect=task.hidden)
    if run.error:
        return f"reproduce_{run.error}", run.detail, None
    if not set(task.visible_failing) <= run.failing:
        return "not_reproduced", "", None
    return "kept", "", task


def _unclashed(visible: tuple[str, ...], hidden: tuple[str, ...]
               ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """`visible` and `hidden` with no hidden test a prefix of a visible one (pytest deselects
    by prefix: hiding `t::test_a` would hide `t::test_a_b`): such a pair trades places, the
    shorter shown; each trade shortens what is shown, so the trading ends."""
    shown, kept = set(visible), set(hidden)
    while clash := next(((h, v) for h in sorted(kept) for v in sorted(shown)
                         if v != h and v.startswith(h)), None):
        h, v = clash
        shown, kept = (shown - {v}) | {h}, (kept - {h}) | {v}
    return tuple(sorted(shown)), tuple(sorted(kept))


def _task(pair: ReleasePair, buggy: Path, deps: Sequence[Path], flip: frozenset[str],
          guards: frozenset[str], figures: PairFigures, line: int) -> Task | None:
    spec = pair.spec
    tid = f"{spec.name}-{pair.older.version}-to-{spec.version}"
    # pytest deselects by prefix: a guard `t::test_a` would deselect `t::test_a_b` too
    guards = frozenset(g for g in guards if not any(t.startswith(g) for t in flip))
    visible, hidden = _unclashed(*verdict.split_tests(tid, flip, guards))
    if not hidden:
        return None
    text = (buggy / figures.fix_file).read_text(encoding="utf-8").split("\n")[line - 1]
    return Task(task_id=tid, package=spec.name, version=spec.version, sha256=spec.archive.sha256,
                source_dir=str(buggy),
                mutation=Mutation(figures.fix_file, line, "released", text, text),
                visible_failing=visible, hidden=hidden,
                test_args=("-p", "no:cacheprovider", "-o", "addopts=", *spec.test_args),
                split=figures.split, test_paths=spec.test_paths, import_root=spec.import_root,
                dep_paths=tuple(str(d) for d in deps))


def _settings(pair: ReleasePair) -> list[list[str]]:
    return [list(pair.spec.test_args), list(pair.spec.deps)]


def _build_pair(pair: ReleasePair, split_name: str, options: ReleasedOptions,
                progress: Progress) -> tuple[PairFigures, list[dict[str, Any]]]:
    folder = options.out / "pairs"
    rows_path, figures_path = folder / f"{pair.pair_id}.jsonl", folder / f"{pair.pair_id}.json"
    if figures_path.exists():
        done = json.loads(figures_path.read_text(encoding="utf-8"))
        if (done.get("format") == _FORMAT and done.get("split") == split_name
                and done.get("settings", [[], []]) == _settings(pair)):
            progress(f"{pair.pair_id}: already judged ({done.get('verdict')}), kept as it is")
            rows = [json.loads(x) for x in rows_path.read_text(encoding="utf-8").splitlines()
                    if x.strip()]
            return PairFigures(**done), rows
    started = time.monotonic()
    figures = PairFigures(pair.pair_id, pair.name, pair.older.version, pair.spec.version,
                          split_name, settings=_settings(pair))
    old, new, deps = _tree(pair, options.cache)
    s = screen(old, new, pair.spec.mutate, pair.spec.exclude)
    figures.fix_file, figures.fix_lines, figures.changed_tests = (s.source_file, s.fix_lines,
                                                                  list(s.tests))
    task: Task | None = None
    if not s.kept:
        figures.verdict = f"screen_{s.reason}"
    else:
        progress(f"{pair.pair_id}: {s.source_file} changes by {s.fix_lines} lines; running both "
                 "trees in the sandbox")
        buggy = make_buggy_tree(old, new, options.cache / "released" / pair.pair_id)
        site = fix_site((old / s.source_file).read_text(encoding="utf-8"),
                        (new / s.source_file).read_text(encoding="utf-8"))
        figures.verdict, figures.detail, task = _judge(pair, buggy, new, deps, figures,
                                                       s.tests, site)
    figures.wall_s = round(time.monotonic() - started, 1)
    progress(f"{pair.pair_id}: {figures.verdict}")
    rows = [] if task is None else [task.to_dict()]
    folder.mkdir(parents=True, exist_ok=True)
    _atomic(rows_path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    _atomic(figures_path, json.dumps(asdict(figures), indent=2, sort_keys=True) + "\n")
    return figures, rows


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def build_released(options: ReleasedOptions, progress: Progress = lambda _: None
                   ) -> dict[str, Any]:
    """Build (or finish building) the released-bug population in `options.out`; returns
    build.json's data.

    Raises:
        TaskSetError: no pairs, two pairs with one id, or a folder sealed for another split.
        FetchError: an archive cannot be fetched or does not match its pin.
        SandboxUnavailable: the sandbox cannot be established here.
    """
    ids = [p.pair_id for p in options.pairs]
    if not ids or len(set(ids)) != len(ids):
        raise TaskSetError("--bugs released needs pinned release pairs, each once; "
                           f"got {ids or 'none'}", pairs=ids)
    started, load = time.monotonic(), os.getloadavg()
    held = sealed_heldout() if options.heldout is None else options.heldout
    names = sorted({p.name for p in options.pairs})
    pins = {n: ",".join(sorted(f"{p.older.sha256}..{p.spec.archive.sha256}"
                               for p in options.pairs if p.name == n)) for n in names}
    sealed = split.seal_split(
        options.out, pins, heldout=held, rule=RULE if options.heldout is None else "given",
        extra={"population": "released",
               "pairs": {p.pair_id: [p.older.sha256, p.spec.archive.sha256]
                         for p in options.pairs}})
    progress(f"sealed the split before any task exists: held out {sealed['heldout']}")
    order = sorted(options.pairs, key=lambda p: p.name not in sealed["heldout"])
    rows: list[dict[str, Any]] = []
    figures: list[PairFigures] = []
    held_left = sum(p.name in sealed["heldout"] for p in order)
    for pair in order:
        name = "heldout" if pair.name in sealed["heldout"] else "tuning"
        f, r = _build_pair(pair, name, options, progress)
        figures.append(f)
        rows += r
        held_left -= name == "heldout"
        if held_left == 0 and name == "heldout" and len(figures) < len(order):
            _write_tasks(options.out, rows, finished=False)
    _write_tasks(options.out, rows, finished=True)
    summary = _summary(figures, rows, time.monotonic() - started, load)
    _atomic(options.out / "build.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _write_tasks(out: Path, rows: Sequence[dict[str, Any]], *, finished: bool) -> None:
    _atomic(out / split.TASKS_FILE, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    split.seal_tasks(out, rows, finished=finished)


def _summary(figures: Sequence[PairFigures], rows: Sequence[dict[str, Any]], wall: float,
             load: tuple[float, ...]) -> dict[str, Any]:
    held = sum(1 for r in rows if r["split"] == "heldout")
    per: dict[str, dict[str, Any]] = {}
    for f in figures:
        entry = per.setdefault(f.package, {"package": f.package, "split": f.split, "pairs": 0,
                                           "kept": 0})
        entry["pairs"] += 1
        entry["kept"] += f.verdict == "kept"
    return {
        "bugs": "released", "tasks": len(rows), "heldout": held, "tuning": len(rows) - held,
        "pairs_examined": len(figures), "pairs_kept": sum(f.verdict == "kept" for f in figures),
        "verdicts": dict(Counter(f.verdict for f in figures).most_common()),
        "wall_s": round(wall, 1), "load_at_start": [round(x, 2) for x in load],
        "load_at_end": [round(x, 2) for x in os.getloadavg()],
        "per_package": sorted(per.values(), key=lambda e: (e["split"], e["package"])),
        "pairs": [asdict(f) for f in figures], "note": NOTE,
    }
