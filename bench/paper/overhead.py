"""RQ6 overhead: gate latency at 1–200 frozen sites, certificate persist + verify up to 200 sites.

Medians of repeated in-process runs (milliseconds). For each size N the frozen prefix is N
sequential image calls, and the candidate appends one call (the accepted path). Every figure
is given in two settings side by side: (a) the pure algorithmic cost, in memory — the paper's
setting ("in-process host-CPU numbers with an in-memory store") — and (b) the cost including
the real store (SQLite, ``synchronous=FULL``; PostgreSQL as well when FROSTLINE_TEST_POSTGRES
is set). Baselines come from the same run.

Gate rows:
- ``gate`` — `frostline.contract.gate.gate` on the candidate's sites, as the runtime calls it
  (the sites come from the checker report it has already computed);
- ``(a) frozen map + gate`` — the frozen map built from slot and attempt records already in
  memory, then the gate;
- ``(b) gate + prefix`` — what `execute` does before a process starts: load the prefix from the
  store, build the frozen map from the slots and attempts, and gate;
- ``sites(candidate)`` — computing the candidate's sites from source (parse + annotate), the
  input the gate needs when no checker report exists; ``gate_source`` is that plus the gate;
- ``ast.parse`` — the floor of anything that reads the source.

Certificate rows: `frostline.runtime.certificates.persist` + `.verify` (the default, fast
check: the chain over the link digests the store recorded at commit time, every entry against
the recorded fields), (a) against an in-memory store (the functions run unchanged; the store
is dicts holding the records a store returns) and (b) against the real store; the baseline
``sha256`` is one SHA-256 over the bytes a deep check hashes (every canonical result and every
entry line). The deep verify, beside the fast one, is in `bench/bench_contract.py`.

Targets from the study brief: gate ≤ 1 ms at 200 sites (the paper: 4.869 ms), certificate
≤ 0.5 ms (the paper: below 0.55 ms). Wall and CPU (``time.process_time``) medians are both
kept; on a loaded host the CPU time and the ratios are the steadier figures.
Run: ``python -m bench.paper.overhead [--repeat R] [--sizes N ...]``.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.bench_contract import (
    MemoryStore,
    Timing,
    chained_bytes,
    persist_verify,
    real_stores,
    script,
    slots_of,
    timed,
)
from bench.paper.common import table
from frostline.contract import certificate
from frostline.contract.gate import frozen_map, gate
from frostline.contract.identity import Identity
from frostline.contract.prefix import load_prefix
from frostline.runtime.gate_check import gate_source
from frostline.script import check, sites
from frostline.store import Store

SIZES = (1, 10, 50, 100, 200)
GATE_TARGET_MS = 1.0
CERT_TARGET_MS = 0.5


@dataclass(frozen=True)
class StoreCost:
    """(b): the gate with its prefix, and the certificate, against one real store."""

    gate_with_prefix: Timing
    persist: Timing
    verify: Timing


@dataclass(frozen=True)
class Sizes:
    n: int
    gate: float
    gate_with_prefix: float   # (b) on SQLite, wall
    sites: float
    gate_source: float
    parse: float
    persist: float            # (b) on SQLite, wall
    verify: float             # (b) on SQLite, wall
    build_validate: float     # in memory: build the chain, then the full chain check
    gate_mem: Timing          # (a) frozen map from in-memory records + gate
    mem_persist: Timing       # (a) persist against the in-memory store
    mem_verify: Timing        # (a) verify against the in-memory store
    sha256: Timing            # one SHA-256 over the chained bytes
    stores: dict[str, StoreCost] = field(default_factory=dict)

    @property
    def mem_certificate(self) -> Timing:
        return self.mem_persist + self.mem_verify


def _committed_run(store: Store, n: int) -> str:
    """A run whose single attempt committed the n calls of `script(n)` (real report, real slots)."""
    source = script(n)
    run_id = f"overhead-{n}"
    store.create_run(run_id, {})
    report = check(source).to_dict()
    attempt = store.start_attempt(run_id, source=source, annotated="", report=report)
    by_line = {s.line: s.site for s in sites(source)}
    slots = slots_of(run_id, n)
    ordered = [by_line[line] for line in sorted(by_line)]
    fill_slots = [s.__class__(run_id, ordered[i], (), 0, s.capability, s.digest, s.result,
                              s.usage, attempt.number) for i, s in enumerate(slots)]
    for s in fill_slots:
        call = store.begin_call(run_id, attempt.number, Identity(s.site, s.path, s.occurrence),
                                s.capability, s.digest)
        store.commit_call(call, s)
    store.finish_attempt(run_id, attempt.number, status="succeeded")
    return run_id


def _store_cost(store: Store, n: int, candidate: Sequence[object], slow: int) -> StoreCost:
    run_id = _committed_run(store, n)
    frozen = frozen_map(store.list_slots(run_id), store.list_attempts(run_id))
    if len(frozen) != n or not gate(frozen, candidate).accepted:  # type: ignore[arg-type]
        raise RuntimeError(f"overhead: the {n}-site prefix was not built as intended")

    def gate_with_prefix() -> bool:
        prefix = load_prefix(store, run_id)
        fm = frozen_map(prefix.slots(), store.list_attempts(run_id))
        return gate(fm, candidate).accepted  # type: ignore[arg-type]

    persist, verify = persist_verify(store, n, slow)
    return StoreCost(timed(gate_with_prefix, slow), persist, verify)


def measure(stores: Sequence[tuple[str, Store]], n: int, repeat: int) -> Sizes:
    source = script(n)
    candidate_src = source.replace("    return r0\n",
                                   '    extra = await ctx.run("echo", {})\n    return r0\n')
    candidate = sites(candidate_src)
    slow = max(5, repeat // 10)
    costs = {name: _store_cost(store, n, candidate, slow) for name, store in stores}
    first = stores[0][1]
    run_id = f"overhead-{n}"
    slots, attempts = first.list_slots(run_id), first.list_attempts(run_id)
    frozen = frozen_map(slots, attempts)
    mem_slots = slots_of("mem", n)

    def build_validate() -> None:
        certificate.validate(certificate.build(mem_slots, "mem", 1), "mem")

    mem_persist, mem_verify = persist_verify(MemoryStore(), n, repeat)
    blob = chained_bytes(mem_slots)
    lite = costs["sqlite"]
    return Sizes(
        n, gate=timed(lambda: gate(frozen, candidate), repeat).wall,
        gate_with_prefix=lite.gate_with_prefix.wall,
        sites=timed(lambda: sites(candidate_src), slow).wall,
        gate_source=timed(lambda: gate_source(frozen, candidate_src), slow).wall,
        parse=timed(lambda: ast.parse(candidate_src), slow).wall,
        persist=lite.persist.wall, verify=lite.verify.wall,
        build_validate=timed(build_validate, repeat).wall,
        gate_mem=timed(lambda: gate(frozen_map(slots, attempts), candidate), repeat),
        mem_persist=mem_persist, mem_verify=mem_verify,
        sha256=timed(lambda: hashlib.sha256(blob).digest(), repeat), stores=costs)


def study(sizes: Sequence[int] = SIZES, repeat: int = 200) -> list[Sizes]:
    with real_stores() as stores:
        return [measure(stores, n, repeat) for n in sizes]


def render(rows: Sequence[Sizes], repeat: int) -> str:
    backends = list(rows[0].stores) if rows else []
    gate_head = ["sites", "gate", "(a) frozen map + gate", "(a) cpu"]
    gate_head += [f"(b) {b} gate + prefix" for b in backends]
    gate_head += ["sites(cand.)", "gate_source", "ast.parse", "(a)/parse"]
    gate_rows = [[r.n, r.gate, r.gate_mem.wall, r.gate_mem.cpu,
                  *[r.stores[b].gate_with_prefix.wall for b in backends],
                  r.sites, r.gate_source, r.parse, f"{r.gate_mem.wall / r.parse:.3f}x"]
                 for r in rows]
    cert_head = ["sites", "(a) persist", "(a) verify", "(a) p+v", "(a) p+v cpu",
                 "build + validate"]
    cert_head += [f"(b) {b} p+v" for b in backends] + [f"(b) {b} cpu" for b in backends]
    cert_head += ["sha256 same bytes", "ast.parse", "(a)/sha256", "(a)/parse"]
    cert_rows = []
    for r in rows:
        a = r.mem_certificate
        totals = [r.stores[b].persist + r.stores[b].verify for b in backends]
        cert_rows.append([r.n, r.mem_persist.wall, r.mem_verify.wall, a.wall, a.cpu,
                          r.build_validate, *[t.wall for t in totals], *[t.cpu for t in totals],
                          f"{r.sha256.wall:.4f}", r.parse, f"{a.wall / r.sha256.wall:.0f}x",
                          f"{a.wall / r.parse:.3f}x"])
    last = rows[-1]
    lite = last.stores["sqlite"]
    verdict = (f"at {last.n} sites: gate {last.gate:.3f} ms, frozen map + gate "
               f"{last.gate_mem.wall:.3f} ms in memory (target <= {GATE_TARGET_MS} ms, "
               f"paper 4.869 ms); certificate persist + verify {last.mem_certificate.wall:.3f} ms "
               f"in memory ({last.mem_certificate.cpu:.3f} ms CPU), "
               f"{(lite.persist + lite.verify).wall:.3f} ms on SQLite "
               f"(target <= {CERT_TARGET_MS} ms, paper < 0.55 ms)")
    note = ("absolute times depend on the host's load; the ratios to ast.parse of the same "
            "source and to one SHA-256 over the same bytes, measured in the same run, are the "
            "portable figures")
    return "\n\n".join([
        table(gate_head, gate_rows,
              f"Gate latency, medians of up to {repeat} runs (ms): (a) in memory, (b) with "
              "the store"),
        table(cert_head, cert_rows,
              "Certificate persist + verify, medians (ms): (a) in-memory store, (b) real store"),
        verdict, note])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    opts = parser.parse_args(argv)
    print(render(study(opts.sizes, opts.repeat), opts.repeat))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
