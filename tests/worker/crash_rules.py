"""What an operator does after a crash, and what the tests check afterwards: reconcile each
unresolved call from the providers' logs, and read the evidence (provider logs, lock journals)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from frostline.contract.identity import Identity
from frostline.providers.provider_log import ProviderLog
from frostline.store.base import Store
from frostline.worker.journal import LockJournal


def executions(logs: list[Path]) -> list[dict[str, Any]]:
    """Every real provider execution on every host (an idempotent replay is not one)."""
    lines = [line for path in logs for line in ProviderLog(path).read()]
    return [line for line in lines if line.get("ok") and not line.get("idempotent_replay")]


def duplicates(logs: list[Path]) -> dict[tuple[str, str], int]:
    """(run, identity) executed more than once, with the count."""
    counts = Counter((e.get("run_id"), e.get("identity")) for e in executions(logs))
    return {k: n for k, n in counts.items() if n > 1}


def reconcile_from_logs(store: Store, run_id: str, logs: list[Path]) -> int:
    """Resolve every pending call of `run_id`: written back from the log when the provider ran
    it (an echo's result is its payload), abandoned when it never ran. Returns how many."""
    ran = {e["identity"]: e for e in executions(logs) if e.get("run_id") == run_id}
    done = 0
    for call in store.unresolved_calls(run_id):
        if store.get_slot(run_id, call.identity) is not None:
            continue
        ident = str(call.identity)
        entry = ran.get(ident)
        if entry is not None and entry["capability"] == "echo":
            store.reconcile_call(run_id, Identity.parse(ident), abandon=False,
                                 result=entry["payload"])
        else:
            store.reconcile_call(run_id, Identity.parse(ident), abandon=True)
        done += 1
    return done


def overlaps(journals: list[Path], killed: dict[int, float]) -> list[tuple[str, Any, Any]]:
    """Intervals in which two workers held one run at once. A worker killed outright leaves an
    `acquire` without a `release`: its kill time (`killed[pid]`) closes that interval."""
    intervals: dict[str, list[tuple[float, float, str]]] = {}
    open_at: dict[tuple[int, str], tuple[float, str]] = {}
    for path in journals:
        for line in LockJournal.read(path):
            key = (int(line["pid"]), str(line["run_id"]))
            if line["event"] == "acquire":
                open_at[key] = (float(line["t"]), f"{line['worker']}/{line['pid']}")
            else:
                start, who = open_at.pop(key)
                intervals.setdefault(key[1], []).append((start, float(line["t"]), who))
    for (pid, run), (start, who) in open_at.items():
        intervals.setdefault(run, []).append((start, killed.get(pid, float("inf")), who))
    bad = []
    for run, spans in intervals.items():
        spans.sort()
        latest = spans[0]
        for span in spans[1:]:
            if span[0] < latest[1]:  # starts before the longest earlier one ended
                bad.append((run, latest, span))
            if span[1] > latest[1]:
                latest = span
    return bad
