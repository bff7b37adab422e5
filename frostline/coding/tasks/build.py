"""Build a task population: pinned packages → green suites → covered lines → kept mutants.

`build` seals the held-out split first (`split.seal_split`: the packages of the sealed
`heldout.HELDOUT` are held out, every other one is tuning), then for each package: fetch and
verify the sdist and its test dependencies, unpack them into the cache, check the suite green
in the sandbox under the three hash seeds (one run with per-test coverage), draw single-site
mutants on covered lines (`mutate`), drop byte-code-identical ones, and run the rest in the
sandbox until `per_package` are kept (`verdict.judge`) or the candidates or tries run out.
Each package's rows and figures are written to `packages/NAME.jsonl|.json` as soon as it is
done, so a build that stops resumes where it was (same folder, same pins and options). Last,
tasks.jsonl is written and the seal gets the digest of the held-out rows.

Candidates are ordered by a shuffle seeded from the package's sha256, one per line first, and
judged in that order whatever `jobs` is, so a build is reproducible.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from frostline.coding.interface import Mutation, Task
from frostline.coding.tasks import mutate, split, verdict
from frostline.coding.tasks.errors import TaskSetError
from frostline.coding.tasks.fetch import fetch, unpack
from frostline.coding.tasks.heldout import RULE, sealed_heldout
from frostline.coding.tasks.pins import DEPS, PACKAGES, PackageSpec
from frostline.coding.tasks.suite import SuiteResult, run_suite

__all__ = ["BuildOptions", "PackageFigures", "build", "prepare_package"]

# 2: kept tasks are checked to reproduce with the hidden tests deselected.
# 3: hidden guards are tests that passed on the original (not skipped, not in any subtest).
_FORMAT = 3
Progress = Callable[[str], None]


@dataclass(frozen=True)
class BuildOptions:
    """What `frostline tasks build` was asked: the output folder, the cache, the packages
    (default: all pinned), how many tasks per package at most, threads running sandboxes, the
    held-out packages (default: the sealed `heldout.HELDOUT`), and how many candidates per
    wanted task may be tried at most."""

    out: Path
    cache: Path
    packages: tuple[str, ...] = tuple(PACKAGES)
    per_package: int = 40
    jobs: int = 1
    heldout: tuple[str, ...] | None = None
    tries_per_task: int = 6


@dataclass
class PackageFigures:
    """One package's part of the build: green check, candidates, verdicts, time."""

    package: str
    version: str
    sha256: str
    split: str
    per_package: int
    green: bool = False
    reason: str = ""
    tests: int = 0
    suite_s: float = 0.0
    covered_lines: int = 0
    candidates: int = 0
    equivalent: int = 0
    tried: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    kept: int = 0
    wall_s: float = 0.0
    format: int = _FORMAT

    @property
    def kill_rate(self) -> float:
        """Killed (some test fails) over tried (a run that said something about the tests)."""
        said = self.tried - sum(self.verdicts.get(k, 0) for k in
                                ("timeout", "crashed", "collection_error", "mutation_not_applied"))
        return (said - self.verdicts.get("survived", 0)) / said if said else 0.0


def prepare_package(spec: PackageSpec, cache: Path) -> tuple[Path, list[Path]]:
    """The unpacked, verified tree of `spec` and of its test dependencies (cache paths)."""
    tree = unpack(fetch(spec.archive, cache), cache / "trees" / f"{spec.name}-{spec.version}",
                  strip_top=True)
    deps = [unpack(fetch(DEPS[d], cache), cache / "deps" / f"{d}-{DEPS[d].version}",
                   strip_top=False) for d in spec.deps]
    return tree, deps


def _green(spec: PackageSpec, tree: Path, deps: Sequence[Path], figures: PackageFigures
           ) -> SuiteResult | None:
    """The coverage run, when the suite passes under every seed; else None (reason set)."""
    runs = [run_suite(spec, tree, deps, seed=s, coverage=(s == verdict.SEEDS[0]))
            for s in verdict.SEEDS]
    figures.tests = len(runs[0].outcomes)
    figures.suite_s = round(max(r.duration for r in runs), 2)
    for seed, run in zip(verdict.SEEDS, runs, strict=True):
        if not run.green:
            failing = sorted(run.failing)[:5]
            figures.reason = (f"not green under PYTHONHASHSEED={seed}: "
                              f"{run.error or 'exit ' + str(run.exit_code)} {run.detail} "
                              f"{failing}").strip()
            return None
    if {t for t, o in runs[0].outcomes.items() if o != "skipped"} != {
            t for t, o in runs[1].outcomes.items() if o != "skipped"}:
        figures.reason = "the suite runs other tests under other hash seeds"
        return None
    return runs[0]


def _excluded(spec: PackageSpec, file: str) -> bool:
    return any(file == e or file.startswith(e.rstrip("/") + "/") for e in spec.exclude)


def _candidates(spec: PackageSpec, tree: Path, coverage: dict[str, Any],
                figures: PackageFigures) -> list[Mutation]:
    """Non-equivalent candidates on covered lines, in the build's reproducible order."""
    found: list[Mutation] = []
    for file in sorted(coverage):
        if not file.endswith(".py") or _excluded(spec, file) or not any(
                file == m or file.startswith(m.rstrip("/") + "/") for m in spec.mutate):
            continue
        lines = coverage[file]
        figures.covered_lines += len(lines)
        source = (tree / file).read_text(encoding="utf-8")
        for m in mutate.candidates(source, file, lines):
            if mutate.bytecode_identical(source, mutate.apply(source, m), file):
                figures.equivalent += 1
            else:
                found.append(m)
    figures.candidates = len(found)
    rng = random.Random(int(spec.archive.sha256[:16], 16))
    rng.shuffle(found)
    rank: Counter[tuple[str, int]] = Counter()
    order: list[tuple[int, int, Mutation]] = []
    for m in found:
        order.append((rank[(m.file, m.line)], len(order), m))
        rank[(m.file, m.line)] += 1
    return [m for _, _, m in sorted(order, key=lambda x: (x[0], x[1]))]


def _judge(spec: PackageSpec, tree: Path, deps: Sequence[Path], m: Mutation, total: int,
           wall: float, covering: frozenset[str]) -> verdict.Verdict:
    """The verdict on `m`. When few tests execute its line, those run first: if none of them
    fails the mutant survives without a full run (a test that never executes a line cannot
    see it change; at worst a mutant the full suite would kill through import-time effects is
    dropped). Every kept mutant has the full suite's failing set under every seed."""
    if 0 < len(covering) <= total // 2:
        quick = run_suite(spec, tree, deps, seed=verdict.SEEDS[0], mutation=m,
                          wall_seconds=wall, select=sorted(covering))
        if not quick.error and not quick.failing:
            return verdict.Verdict(False, "survived")
        if len(quick.failing) > verdict.MAX_FAILING * total:
            return verdict.Verdict(False, "too_broad", quick.failing)
    runs: list[verdict.Run] = []
    for seed in verdict.SEEDS:
        r = run_suite(spec, tree, deps, seed=seed, mutation=m, wall_seconds=wall)
        runs.append(verdict.Run(r.failing, r.error))
        v = verdict.judge(total, runs)
        if not v.kept:
            return v
    return verdict.judge(total, runs)


def task_id(spec: PackageSpec, m: Mutation) -> str:
    h = hashlib.sha256(f"{m.file}:{m.line}:{m.after}".encode()).hexdigest()[:10]
    return f"{spec.name}-{spec.version}-{h}"


def _task(spec: PackageSpec, tree: Path, deps: Sequence[Path], m: Mutation, failing: frozenset[str],
          covering: frozenset[str], passed: frozenset[str], split_name: str) -> Task | None:
    """The task of a kept mutant. Only tests that passed on the original tree guard the
    behaviour a fix must keep: a test that runs the line and then skips (or skips one of its
    subtests) would be a hidden test no tree can pass."""
    tid = task_id(spec, m)
    visible, hidden = verdict.split_tests(tid, failing, covering & passed)
    if not hidden:
        return None
    return Task(task_id=tid, package=spec.name, version=spec.version, sha256=spec.archive.sha256,
                source_dir=str(tree), mutation=m, visible_failing=visible, hidden=hidden,
                test_args=("-p", "no:cacheprovider", "-o", "addopts=", *spec.test_args),
                split=split_name, test_paths=spec.test_paths, import_root=spec.import_root,
                dep_paths=tuple(str(d) for d in deps))


def _reproduces(spec: PackageSpec, tree: Path, deps: Sequence[Path], task: Task,
                wall: float) -> str:
    """"kept", or why the workflow would not see `task`'s bug: it runs the suite without the
    hidden tests, and a test that fails only after a hidden one ran (shared state, test order)
    passes there ("not_reproduced")."""
    run = run_suite(spec, tree, deps, seed=verdict.SEEDS[0], mutation=task.mutation,
                    wall_seconds=wall, deselect=task.hidden)
    if run.error:
        return run.error
    return "kept" if set(task.visible_failing) <= run.failing else "not_reproduced"


def _examine(spec: PackageSpec, tree: Path, deps: Sequence[Path], m: Mutation,
             figures: PackageFigures, wall: float, covering: frozenset[str],
             passed: frozenset[str]) -> tuple[str, Task | None]:
    """(verdict, the task when kept) for one candidate; `passed`: the tests that passed on the
    original tree."""
    v = _judge(spec, tree, deps, m, figures.tests, wall, covering)
    if not v.kept:
        return v.reason, None
    t = _task(spec, tree, deps, m, v.failing, covering, passed, figures.split)
    if t is None:
        return "no_hidden", None
    reason = _reproduces(spec, tree, deps, t, wall)
    return reason, t if reason == "kept" else None


def _mutants(spec: PackageSpec, tree: Path, deps: Sequence[Path], base: SuiteResult,
             figures: PackageFigures, options: BuildOptions, progress: Progress) -> list[Task]:
    order = _candidates(spec, tree, dict(base.coverage), figures)
    budget = order[:options.per_package * options.tries_per_task]
    wall = max(30.0, 4 * figures.suite_s + 15)
    passed = frozenset(t for t, o in base.outcomes.items() if o == "passed")
    verdicts: Counter[str] = Counter()
    kept: list[Task] = []
    lines: set[tuple[str, int]] = set()
    width = max(1, options.jobs)
    with ThreadPoolExecutor(max_workers=width) as pool:
        for start in range(0, len(budget), width):
            batch = [m for m in budget[start:start + width] if (m.file, m.line) not in lines]
            results = pool.map(lambda m: _examine(spec, tree, deps, m, figures, wall,
                                                  base.coverage[m.file][m.line], passed), batch)
            for m, (reason, t) in zip(batch, results, strict=True):
                if len(kept) >= options.per_package or (m.file, m.line) in lines:
                    continue
                figures.tried += 1
                verdicts[reason] += 1
                if t is not None:
                    kept.append(t)
                    lines.add((m.file, m.line))
            progress(f"{spec.name}: {len(kept)}/{options.per_package} kept, "
                     f"{figures.tried} tried")
            if len(kept) >= options.per_package:
                break
    figures.verdicts = dict(sorted(verdicts.items()))
    figures.kept = len(kept)
    return kept


def _build_package(spec: PackageSpec, split_name: str, options: BuildOptions,
                   progress: Progress) -> tuple[PackageFigures, list[dict[str, Any]]]:
    folder = options.out / "packages"
    rows_path, figures_path = folder / f"{spec.name}.jsonl", folder / f"{spec.name}.json"
    if figures_path.exists():
        done = json.loads(figures_path.read_text(encoding="utf-8"))
        if (done.get("format") == _FORMAT and done.get("sha256") == spec.archive.sha256
                and done.get("per_package") == options.per_package):
            progress(f"{spec.name}: already built ({done.get('kept')} tasks), kept as it is")
            rows = [json.loads(x) for x in rows_path.read_text(encoding="utf-8").splitlines()
                    if x.strip()]
            return PackageFigures(**done), rows
    started = time.monotonic()
    figures = PackageFigures(spec.name, spec.version, spec.archive.sha256, split_name,
                             options.per_package)
    tree, deps = prepare_package(spec, options.cache)
    progress(f"{spec.name} {spec.version}: checking the suite green under seeds "
             f"{list(verdict.SEEDS)}")
    base = _green(spec, tree, deps, figures)
    tasks: list[Task] = []
    if base is not None:
        figures.green = True
        tasks = _mutants(spec, tree, deps, base, figures, options, progress)
    figures.wall_s = round(time.monotonic() - started, 1)
    rows = [t.to_dict() for t in tasks]
    folder.mkdir(parents=True, exist_ok=True)
    _atomic(rows_path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    _atomic(figures_path, json.dumps(asdict(figures), indent=2, sort_keys=True) + "\n")
    return figures, rows


def _write_tasks(out: Path, rows: Sequence[dict[str, Any]], *, finished: bool) -> None:
    _atomic(out / split.TASKS_FILE, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    split.seal_tasks(out, rows, finished=finished)


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def build(options: BuildOptions, progress: Progress = lambda _: None) -> dict[str, Any]:
    """Build (or finish building) the population in `options.out`; returns build.json's data.

    Raises:
        TaskSetError: an unknown package, or a folder sealed for another split.
        FetchError: an archive cannot be fetched or does not match its pin.
        SandboxUnavailable: the sandbox cannot be established here.
    """
    unknown = [p for p in options.packages if p not in PACKAGES]
    if unknown or not options.packages:
        raise TaskSetError(f"unknown package(s) {unknown}; pinned: {', '.join(PACKAGES)}",
                           unknown=unknown)
    if options.per_package < 1 or options.jobs < 1:
        raise TaskSetError("--per-package and --jobs must be at least 1")
    missing = [m for m in ("pytest", "coverage") if importlib.util.find_spec(m) is None]
    if missing:
        raise TaskSetError(f"building tasks runs the suites with {' and '.join(missing)}, which "
                           "this interpreter lacks: pip install 'frostline[tasks]'",
                           missing=missing)
    # A cache under /tmp is fine: the sandbox mounts the trees it reads after its private /tmp.
    started, load = time.monotonic(), os.getloadavg()
    options.out.mkdir(parents=True, exist_ok=True)
    specs = [PACKAGES[p] for p in PACKAGES if p in set(options.packages)]
    held = sealed_heldout() if options.heldout is None else options.heldout
    sealed = split.seal_split(options.out, {s.name: s.archive.sha256 for s in specs},
                              heldout=held, rule=RULE if options.heldout is None else "given",
                              extra={"population": "injected"})
    # Held-out packages first: a build cut short still has its held-out split.
    specs.sort(key=lambda s: s.name not in sealed["heldout"])
    progress(f"sealed the split before any task exists: held out {sealed['heldout']}")
    rows: list[dict[str, Any]] = []
    figures: list[PackageFigures] = []
    held_left = len(sealed["heldout"])
    for spec in specs:
        name = "heldout" if spec.name in sealed["heldout"] else "tuning"
        f, r = _build_package(spec, name, options, progress)
        figures.append(f)
        rows += r
        held_left -= name == "heldout"
        if held_left == 0 and name == "heldout" and len(figures) < len(specs):
            # Every held-out package is built: seal them now, so the held-out split can be
            # measured while the tuning packages are still being built.
            _write_tasks(options.out, rows, finished=False)
            progress(f"sealed {len(rows)} held-out tasks; building the tuning packages")
    _write_tasks(options.out, rows, finished=True)
    summary = _summary(options, figures, rows, time.monotonic() - started, load)
    _atomic(options.out / "build.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _summary(options: BuildOptions, figures: Sequence[PackageFigures],
             rows: Sequence[dict[str, Any]], wall: float, load: tuple[float, ...]
             ) -> dict[str, Any]:
    held = sum(1 for r in rows if r["split"] == "heldout")
    return {
        "bugs": "injected", "tasks": len(rows), "heldout": held, "tuning": len(rows) - held,
        "wall_s": round(wall, 1), "jobs": options.jobs, "per_package": options.per_package,
        "load_at_start": [round(x, 2) for x in load],
        "load_at_end": [round(x, 2) for x in os.getloadavg()],
        "operators": dict(Counter(r["mutation"]["operator"] for r in rows).most_common()),
        "packages": [{**asdict(f), "kill_rate": round(f.kill_rate, 3)} for f in figures],
        "note": ("injected single-site mutants from a known operator set: an upper bound for "
                 "a template generator whose operators invert them"),
    }
