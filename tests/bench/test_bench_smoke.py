"""Smoke tests of the durable-runtime benchmarks: tiny sizes, sane rows, no timing thresholds.

They keep the benchmark code from rotting: every section runs against the real store (and the
peers when installed) and must produce finite, positive figures with the right shape.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bench import durable_overhead as bench
from bench import peers, replay_throughput
from bench.common import Row, percentile, render_table

TINY = {"calls": 8, "reps": 1, "prefix": 64, "replay_reps": 1}


def settings(**over: object) -> bench.Settings:
    base: dict[str, object] = {**TINY, "peers": False, "replay": True, "pg": None}
    base.update(over)
    return bench.Settings(**base)  # type: ignore[arg-type]


def sane(value: float) -> bool:
    return math.isfinite(value) and value > 0


def test_frostline_rows_and_replay_on_sqlite(tmp_path: Path) -> None:
    report = bench.run(settings(), tmp_path)
    assert set(report.floors) == {"sqlite"}
    assert sane(report.floors["sqlite"].median)
    got = {(r.system, r.mode) for r in report.rows}
    assert got == {("frostline broker", "sequential"), ("frostline broker", "32-way fanout"),
                   ("frostline execute()", "sequential"),
                   ("frostline execute()", "32-way fanout")}
    for row in report.rows:
        assert row.store == "sqlite"
        assert len(row.per_call_ms) == 1
        assert sane(row.median) and sane(row.p95), row
    broker_rows = [r for r in report.rows if r.system == "frostline broker"]
    assert [len(r.latencies_ms) for r in broker_rows] == [8, 32]  # one per call
    assert [r.shape for r in report.replay] == ["sequential", "32-way"]
    assert all(sane(r.median) and sane(r.load_median) for r in report.replay)
    assert [r.prefix for r in report.replay] == [64, 64]

    table = bench.overhead_table(report)
    assert "fsync floor" in table and "frostline broker" in table and "1.00x" in table
    assert len(bench.verdicts(report)) == 4  # two call targets, two replay shapes


def test_main_prints_the_table_and_writes_json(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    out_file = tmp_path / "figures.json"
    code = bench.main(["--quick", "--no-pg", "--no-peers", "--no-replay", "--calls", "4",
                       "--reps", "1", "--json", str(out_file)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "ms/call (median)" in printed and "vs floor" in printed
    data = json.loads(out_file.read_text())
    assert {r["system"] for r in data["rows"]} == {"frostline broker", "frostline execute()"}
    assert all(r["median_ms"] > 0 for r in data["rows"])


def test_missing_peer_is_named_with_its_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "missing_peer", lambda system: system)
    notes: list[str] = []
    assert bench.measure_peer("dbos", "sqlite", settings(), notes) is None
    assert bench.measure_peer("langgraph", "sqlite", settings(), notes) is None
    assert "pip install dbos" in notes[0]
    assert "pip install langgraph langgraph-checkpoint-sqlite" in notes[1]


def test_run_puts_each_peer_row_in_the_report(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    asked: list[tuple[str, str, tuple[str, ...]]] = []

    def fake_peer(system: str, store: str, s: bench.Settings, notes: list[str],
                  extra: tuple[str, ...] = ()) -> Row:
        asked.append((system, store, extra))
        return Row(system, store, "sequential " + " ".join(extra), [1.0], [1.0])

    monkeypatch.setattr(bench, "measure_peer", fake_peer)
    report = bench.run(settings(peers=True, replay=False, reps=1, calls=4), tmp_path)
    assert asked == [("dbos", "sqlite", ()), ("langgraph", "sqlite", ("--durability", "sync")),
                     ("langgraph", "sqlite", ("--durability", "async"))]
    peer_rows = [r for r in report.rows if not r.system.startswith("frostline")]
    assert [r.note != "" for r in peer_rows] == [False, False, True]
    assert "dbos" in bench.overhead_table(report)


@pytest.mark.parametrize("system", ["dbos", "langgraph"])
def test_peer_child_measures(system: str) -> None:
    # Without the peer there is nothing to measure: say so (what is missing, how to install it)
    # instead of passing. The install hint itself is pinned by the test above.
    missing = peers.missing_peer(system)
    if missing is not None:
        pytest.skip(f"{system} is not installed (no module {missing}); "
                    f"{peers.INSTALL[system]}")
    notes: list[str] = []
    row = bench.measure_peer(system, "sqlite", settings(calls=4), notes)
    assert row is not None, notes
    assert row.store == "sqlite" and len(row.per_call_ms) == 1
    assert len(row.latencies_ms) == 4
    assert sane(row.median) and sane(row.p95)


def test_replay_cli_on_sqlite(capsys: pytest.CaptureFixture[str]) -> None:
    assert replay_throughput.main(["--prefix", "40", "--reps", "1", "--no-pg"]) == 0
    printed = capsys.readouterr().out
    assert "replay sequential" in printed and "replay 32-way" in printed


@pytest.mark.postgres
def test_frostline_rows_on_postgresql(pg_url: str, tmp_path: Path) -> None:
    from bench.common import pg_floor

    floor, rows = bench.measure_frostline(pg_url, "postgresql", lambda: pg_floor(pg_url, 3),
                                          settings())
    assert sane(floor.median)
    assert len(rows) == 4 and all(sane(r.median) for r in rows)
    report = bench.Report(rows=rows, floors={"postgresql": floor})
    line = next(v for v in bench.verdicts(report) if v.startswith("postgresql sequential"))
    assert "commit floors" in line and "target 2.5 floors" in line
    assert "durable transactions per call" in line


def test_graph_durable_times_and_counts_transactions(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from bench import graph_durable

    row = graph_durable.measure(f"sqlite:///{tmp_path}/g.db", 2)
    assert row["tool_calls"] == 8
    assert all(sane(row[k]) for k in ("baseline_ms", "durable_first_ms", "durable_resume_ms"))
    # the ledger's ~70 events are batched: a transaction per tool call or so, not per event
    assert 8 <= row["transactions_first"] <= 24 and 1 <= row["transactions_resume"] <= 8


def test_helpers() -> None:
    assert percentile([3.0, 1.0, 2.0, 4.0], 0.5) == 2.0
    assert percentile([3.0, 1.0, 2.0, 4.0], 0.95) == 4.0
    assert math.isnan(percentile([], 0.5))
    row = Row("x", "sqlite", "sequential", [3.0, 1.0, 2.0])
    assert row.median == 2.0 and row.p95 == 3.0  # no latencies: p95 over repetitions
    text = render_table(["system", "store", "mode", "ms"], [["a", "b", "c", "1.0"]])
    assert text.splitlines()[2].split() == ["a", "b", "c", "1.0"]


@pytest.mark.postgres
def test_workers_bench_measures_frostline_and_dbos(pg_url: str, tmp_path: Path) -> None:
    from bench import workers

    base = pg_url.partition("?")[0]
    report = workers.measure(base, runs=3, latency=0.05, counts=[1], jobs=3,
                             dbos=peers.missing_peer("dbos") is None, folder=tmp_path)
    rows = report["frostline"] + report["dbos"]
    assert rows and all(sane(r["runs_per_s"]) and r["runs"] == 3 for r in rows)
    assert len(report["frostline_start_ms"]) == 3
    assert all(math.isfinite(v) for v in report["frostline_start_ms"])
    assert "runs/s" in workers.table(report)


def test_mcp_overhead_measures_both_paths(tmp_path: Path) -> None:
    pytest.importorskip("mcp_server_time")
    from bench import mcp_overhead

    report = mcp_overhead.run(5, 1, tmp_path)
    m = mcp_overhead
    assert report["calls"] == 5
    assert set(report["median_ms"]) == {m.DIRECT, m.DURABLE, m.HOSTED, m.ECHO}
    assert all(sane(v) for v in report["median_ms"].values())
    assert all(sane(v) for v in report["cpu_ms"].values())
    # The durable paths commit (an attempt record and a result per call); the direct one never.
    assert report["commits"][m.DIRECT] == 0
    for path in (m.DURABLE, m.HOSTED):
        assert 0 < report["commits"][path] <= 2
        assert sane(report["ratio"][path]) and sane(abs(report["added_ms"][path]))
    assert all(label in m.table(report) for label in m.ADDED.values())


def test_peers_repair_frostline_rows(tmp_path: Path) -> None:
    from bench import peers_repair as pr

    rows = {(r.scenario, r.k): r for r in pr.run_frostline(pr.cases([4], pr.SCENARIOS),
                                                           tmp_path)}
    assert len(rows) == 4 * len(pr.SCENARIOS)
    for k in range(4):
        fanout = rows[("fanout", k)]  # N attempts, then the one refused branch again
        assert (fanout.paid, fanout.images, fanout.stale, fanout.outcome) == (
            5, 4, 0, "succeeded")
        assert rows[("payload", k)].outcome == "diverged"  # a committed payload changed
        assert rows[("payload", k)].paid == 4 and not rows[("payload", k)].silent
        # relocation = "rebind" (the default, issue 30): a moved call whose request is
        # unchanged replays when every moved slot is reached before the failed branch's new
        # call, i.e. when that branch is the last; otherwise the gate's stop stands
        for s in ("relocate", "rename"):
            row = rows[(s, k)]
            assert row.outcome == ("succeeded" if k == 3 else "gate stop"), (s, k)
            assert (row.paid, row.stale, row.silent) == (5 if k == 3 else 4, 0, False)
    text = pr.table(list(rows.values()))
    assert "silent acceptances" in text and "gate stop" in text


@pytest.mark.parametrize("system", ["dbos", "langgraph"])
def test_peers_repair_peer_rows(system: str) -> None:
    from bench import peers_repair as pr

    missing = peers.missing_peer(system)
    if missing is not None:
        pytest.skip(f"{system} is not installed (no module {missing}); {pr.INSTALL}")
    notes: list[str] = []
    rows = pr.run_peer(system, [("fanout", 4, 1), ("payload", 4, 3), ("rename", 4, 1)], notes)
    assert notes == []
    got = {(r.system, r.scenario): r for r in rows}
    if system == "dbos":
        failed = got[("DBOS fork from the failed step", "fanout")]
        assert (failed.paid, failed.images, failed.outcome) == (4 + 3, 4, "succeeded")
        assert got[("DBOS fork from the fanout's start", "fanout")].paid == 8
        stale = got[("DBOS fork from the failed step", "payload")]  # branch 0 was copied
        assert stale.stale == 1 and stale.silent
        assert got[("DBOS fork from the failed step", "rename")].outcome.startswith("error")
    else:
        for api in ("Graph API (Send, pending writes)", "functional API (tasks)"):
            fanout = got[(f"LangGraph {api}", "fanout")]
            assert (fanout.paid, fanout.images) == (5, 4)
            assert got[(f"LangGraph {api}", "payload")].silent
        renamed = got[("LangGraph Graph API (Send, pending writes)", "rename")]
        assert renamed.silent and renamed.images == 0


@pytest.mark.postgres
@pytest.mark.timeout(300)
def test_soak_bench_side_by_side_with_no_stuck_or_phantom_runs(pg_url: str,
                                                               tmp_path: Path) -> None:
    from bench import soak

    base = pg_url.partition("?")[0]
    report = soak.measure(base, runs=4, workers=2, latency=0.02, sweeps=1, kills=1,
                          folder=tmp_path)
    calm, storm = report["phases"]
    assert storm["faults"][0].startswith(("sweep", "SIGKILL")) and len(storm["faults"]) == 2
    for p in (calm, storm):
        assert p["stuck"] == 0 and p["phantom"] == 0, p
        assert sane(p["runs_per_s"]) and sane(p["p50_ms"]) and p["p95_ms"] >= p["p50_ms"]
    text = soak.table(report)
    assert "no faults" in text and "1 sweeps, 1 SIGKILL" in text and "phantom" in text


def test_fairness_bench_rows_on_the_embedded_pool(tmp_path: Path) -> None:
    from bench import fairness

    rows = fairness.pool_rows(1, 1, 0.0, tmp_path)
    assert [(r.queue, r.fair) for r in rows] == [("embedded pool (SQLite)", False),
                                                 ("embedded pool (SQLite)", True)]
    for row in rows:
        assert len(row.rounds) == 1 and row.median_s >= 0
        assert 0 <= row.before <= fairness.BACKLOG
    assert "| embedded pool (SQLite) |" in fairness.table(rows)


def test_hostile_bench_rows_alone_and_under_attack(tmp_path: Path) -> None:
    from bench import hostile
    from bench.common import pg_base_url, pg_reachable

    base = pg_base_url(None)
    if pg_reachable(base):
        pytest.skip("PostgreSQL unreachable")
    report = hostile.campaign(base, tmp_path, 2)
    for phase in (report.alone, report.attacked):
        assert len(phase.latencies) == 2 and all(sane(x) for x in phase.latencies)
    table = report.table()
    assert table.splitlines()[0].split() == ["honest", "principal", "runs", "wrong", "p50",
                                             "(s)", "p95", "(s)"]
    assert [line.split()[0] for line in table.splitlines()[2:]] == ["alone", "under", "ratio"]
    assert "POST runs args nul 422" in report.attacks()
