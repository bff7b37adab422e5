"""Benchmark the revision contract: the gate and the certificate at N frozen sites (default 200).

Every row is compared with a baseline measured in the same run:
- `gate()` on an already-parsed candidate vs computing the candidate's sites
  (`frostline.script.sites`, which parses it) and vs `ast.parse` alone: the gate must cost a
  small fraction of what producing its input costs;
- the gate's stop path (every frozen site relocated, so each counterexample searches for its
  nearest site) vs the accept path;
- `certificate.build` vs the same chain written with the general RFC 8785 library for entries
  and results (the straightforward implementation);
- `persist` and `verify` against a real store vs `store.list_slots` alone (the floor of any
  check that must read the prefix), on SQLite and, when FROSTLINE_TEST_POSTGRES is set, on
  PostgreSQL.

A second table puts the certificate's two settings side by side at 1, 10, 50, 100 and 200
slots: (a) the pure algorithmic cost, `persist` + `verify` against an in-memory store (the
paper's setting), and (b) the same calls against the real store (SQLite; PostgreSQL too when
FROSTLINE_TEST_POSTGRES is set). Both are compared with baselines from the same run: one
SHA-256 over the very bytes the chain hashes (the floor of any hash of that content) and
`ast.parse` of the script that made the calls. Wall-clock and CPU (`time.process_time`)
medians are both printed: on a loaded host the CPU time is the steadier figure.

Run: ``python bench/bench_contract.py [--sites N] [--sizes 1 10 ...] [--repeat R]``. Prints
medians in milliseconds.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rfc8785

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frostline.contract import certificate
from frostline.contract.gate import FrozenSite, gate
from frostline.contract.identity import Identity, digest
from frostline.runtime import certificates
from frostline.runtime.gate_check import gate_source
from frostline.script import sites
from frostline.store import SlotRecord, Store, open_store

SIZES = (1, 10, 50, 100, 200)


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    return timed(fn, repeat).wall


@dataclass(frozen=True)
class Timing:
    """Medians (ms) of wall-clock and process CPU time over the same repeats."""

    wall: float
    cpu: float

    def __add__(self, other: Timing) -> Timing:
        return Timing(self.wall + other.wall, self.cpu + other.cpu)


def timed(fn: Callable[[], object], repeat: int) -> Timing:
    fn()  # warm-up
    wall, cpu = [], []
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        t1, c1 = time.perf_counter(), time.process_time()
        wall.append((t1 - t0) * 1000)
        cpu.append((c1 - c0) * 1000)
    return Timing(statistics.median(wall), statistics.median(cpu))


class MemoryStore:
    """The paper's "in-memory store": the four calls `persist` and `verify` make, on dicts.

    `certificate.persist` and `certificate.verify` run unchanged against it, so what they cost
    here is the algorithmic cost of the mechanism without any I/O or decoding.
    """

    def __init__(self) -> None:
        self._slots: dict[str, list[SlotRecord]] = {}
        self._certs: dict[str, dict[int, dict[str, Any]]] = {}

    def add_run(self, run_id: str, slots: list[SlotRecord]) -> None:
        self._slots[run_id] = list(slots)
        self._certs[run_id] = {}

    def get_run(self, run_id: str) -> object | None:
        return run_id if run_id in self._slots else None

    def list_slots(self, run_id: str) -> list[SlotRecord]:
        return list(self._slots[run_id])

    def put_certificate(self, run_id: str, attempt: int, cert: dict[str, Any]) -> None:
        self._certs[run_id][attempt] = cert

    def list_certificates(self, run_id: str) -> list[dict[str, Any]]:
        return list(self._certs[run_id].values())


def chained_bytes(slots: list[SlotRecord]) -> bytes:
    """Everything the certificate hashes for these slots: each canonical result, each entry."""
    cert = certificate.build(slots, "r", 1)
    results = [certificate._canonical(s.result) for s in slots]
    entries = [certificate._entry_bytes(s.site, s.path, s.occurrence, s.capability, s.digest,
                                        cert["items"][str(Identity(s.site, s.path,
                                                                   s.occurrence))]
                                        ["result_digest"], s.attempt) for s in slots]
    return b"".join(results + entries)


def persist_verify(store: Any, n: int, repeat: int) -> tuple[Timing, Timing]:
    """Medians of `persist` and of `verify` on a fresh n-slot run of `store`."""
    # Two runs: persisting repeatedly adds certificates, and verify reads them all, so verify is
    # timed on a run that holds exactly one (as after one attempt).
    run_id, other = ("bench-" + uuid.uuid4().hex[:8] for _ in range(2))
    for rid in (run_id, other):
        if isinstance(store, MemoryStore):
            store.add_run(rid, slots_of(rid, n))
        else:
            fill(store, rid, slots_of(rid, n))
    certificates.persist(store, run_id, 1)
    if not certificates.verify(store, run_id)["consistent"]:
        raise RuntimeError("bench: a freshly persisted certificate does not verify")
    return (timed(lambda: certificates.persist(store, other, 1), repeat),
            timed(lambda: certificates.verify(store, run_id), repeat))


@contextmanager
def real_stores() -> Iterator[list[tuple[str, Store]]]:
    """SQLite in a temporary directory, and PostgreSQL in a throw-away schema when configured."""
    with tempfile.TemporaryDirectory() as tmp, open_store(f"sqlite:///{tmp}/bench.db") as lite:
        pg = os.environ.get("FROSTLINE_TEST_POSTGRES", "").strip()
        if not pg:
            yield [("sqlite", lite)]
            return
        import psycopg

        schema = "bench_" + uuid.uuid4().hex[:12]
        with psycopg.connect(pg, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in pg else "?"
            with open_store(f"{pg}{sep}options=-csearch_path%3D{schema}") as post:
                yield [("sqlite", lite), ("postgres", post)]
        finally:
            with psycopg.connect(pg, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@dataclass(frozen=True)
class CertSize:
    """One size of the side-by-side certificate table."""

    n: int
    memory: tuple[Timing, Timing]           # (persist, verify) against MemoryStore
    stores: dict[str, tuple[Timing, Timing]]  # backend -> (persist, verify)
    sha256: Timing                            # one SHA-256 over the chained bytes
    parse: Timing                             # ast.parse of the n-call script

    @property
    def mem_total(self) -> Timing:
        return self.memory[0] + self.memory[1]

    def store_total(self, backend: str) -> Timing:
        p, v = self.stores[backend]
        return p + v


def certificate_sizes(sizes: Sequence[int], repeat: int) -> list[CertSize]:
    """Persist + verify at each size, in memory and on every configured real store."""
    out = []
    with real_stores() as stores:
        for n in sizes:
            blob = chained_bytes(slots_of("r", n))
            src = script(n)
            slow = max(10, repeat // 4)
            out.append(CertSize(
                n, persist_verify(MemoryStore(), n, repeat),
                {name: persist_verify(store, n, slow) for name, store in stores},
                timed(lambda b=blob: hashlib.sha256(b).digest(), repeat),  # type: ignore[misc]
                timed(lambda s=src: ast.parse(s), max(10, repeat // 4))))  # type: ignore[misc]
    return out


def certificate_table(rows: Sequence[CertSize]) -> str:
    """The side-by-side table: (a) in memory, (b) per real store, baselines and ratios."""
    backends = list(rows[0].stores) if rows else []
    head = ["sites", "(a) mem persist", "(a) mem verify", "(a) p+v", "(a) p+v cpu"]
    head += [f"(b) {b} p+v" for b in backends] + [f"(b) {b} cpu" for b in backends]
    head += ["sha256 same bytes", "ast.parse", "(a)/sha256", "(a)/parse"]
    head += [f"(b) {b}/(a)" for b in backends]
    lines = [head]
    for r in rows:
        a = r.mem_total
        cells = [str(r.n), f"{r.memory[0].wall:.3f}", f"{r.memory[1].wall:.3f}",
                 f"{a.wall:.3f}", f"{a.cpu:.3f}"]
        cells += [f"{r.store_total(b).wall:.3f}" for b in backends]
        cells += [f"{r.store_total(b).cpu:.3f}" for b in backends]
        cells += [f"{r.sha256.wall:.4f}", f"{r.parse.wall:.3f}",
                  f"{a.wall / r.sha256.wall:.0f}x", f"{a.wall / r.parse.wall:.2f}x"]
        cells += [f"{r.store_total(b).wall / a.wall:.1f}x" for b in backends]
        lines.append(cells)
    widths = [max(len(row[i]) for row in lines) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))
                     for row in lines)


def script(n: int, *, helper: bool = False) -> str:
    """n sequential image calls (inline, or each moved into a helper: the a425 relocation)."""
    lines = []
    if helper:
        lines += ["async def gen(ctx, p):",
                  '    return await ctx.run("image.generate", {"prompt": p, "size": "512x512"})',
                  "", ""]
    lines.append("async def orchestrate(ctx, args):")
    for i in range(n):
        call = (f'gen(ctx, "shot {i}")' if helper
                else f'ctx.run("image.generate", {{"prompt": "shot {i}", "size": "512x512"}})')
        lines.append(f"    r{i} = await {call}")
    lines.append("    return r0")
    return "\n".join(lines) + "\n"


def frozen_of(source: str) -> dict[str, FrozenSite]:
    src_lines = source.splitlines()
    return {s.site: FrozenSite(s.site, s.capability or "", s.fingerprint, s.line,
                               src_lines[s.line - 1]) for s in sites(source)}


def slots_of(run_id: str, n: int) -> list[SlotRecord]:
    out = []
    for i in range(n):
        payload = {"prompt": f"shot {i}", "size": "512x512"}
        result = {"ref": "sha256:" + hashlib.sha256(str(i).encode()).hexdigest(),
                  "mime": "image/png", "width": 512, "height": 512, "prompt": f"shot {i}"}
        out.append(SlotRecord(run_id, f"orchestrate/for#0.body/#{i % 4}", (i // 4,), 0,
                              "image.generate", digest(payload), result, {"usd": 0.02}, 1))
    return out


def rfc8785_chain(slots: list[SlotRecord]) -> str:
    h = hashlib.sha256(certificate.DOMAIN).digest()
    for s in sorted(slots, key=lambda s: (s.site, s.path, s.occurrence)):
        entry: dict[str, Any] = {"site": s.site, "path": list(s.path), "occurrence": s.occurrence,
                 "capability": s.capability, "digest": s.digest,
                 "result_digest": hashlib.sha256(rfc8785.dumps(s.result)).hexdigest(),
                 "attempt": s.attempt}
        h = hashlib.sha256(h + rfc8785.dumps(entry)).digest()
    return h.hex()


def fill(store: Store, run_id: str, slots: list[SlotRecord]) -> None:
    store.create_run(run_id, {})
    for s in slots:
        ident = Identity(s.site, s.path, s.occurrence)
        call = store.begin_call(run_id, 1, ident, s.capability, s.digest)
        store.commit_call(call, s)


def store_rows(label: str, store: Store, n: int, repeat: int) -> list[tuple[str, float, str, float]]:
    # Two runs: persisting repeatedly adds certificates, and verify reads them all, so verify is
    # timed on a run that holds exactly one (as after one attempt).
    run_id, other = ("bench-" + uuid.uuid4().hex[:8] for _ in range(2))
    fill(store, run_id, slots_of(run_id, n))
    fill(store, other, slots_of(other, n))
    certificates.persist(store, run_id, 1)
    floor = median_ms(lambda: store.list_slots(run_id), repeat)
    persist = median_ms(lambda: certificates.persist(store, other, 1), repeat)
    verify = median_ms(lambda: certificates.verify(store, run_id), repeat)
    both = persist + verify
    assert certificates.verify(store, run_id)["consistent"]
    return [
        (f"{label}: persist", persist, "list_slots", floor),
        (f"{label}: verify", verify, "list_slots", floor),
        (f"{label}: persist + verify", both, "list_slots", floor),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    opts = parser.parse_args()
    n, repeat = opts.sites, opts.repeat

    original = script(n)
    frozen = frozen_of(original)
    assert len(frozen) == n
    candidate_src = original.replace("    return r0\n", '    extra = await ctx.run("echo", {})\n'
                                     "    return r0\n")
    candidate = sites(candidate_src)
    relocated_src = script(n, helper=True)
    relocated = sites(relocated_src)
    assert gate(frozen, candidate).accepted and not gate(frozen, relocated).accepted

    rows: list[tuple[str, float, str, float]] = []
    parse = median_ms(lambda: ast.parse(candidate_src), repeat)
    compute_sites = median_ms(lambda: sites(candidate_src), repeat)
    accept = median_ms(lambda: gate(frozen, candidate), repeat)
    rows.append(("gate accept (parsed candidate)", accept, "sites(candidate)", compute_sites))
    rows.append(("gate accept (parsed candidate)", accept, "ast.parse(candidate)", parse))
    rows.append(("gate_source (parse + sites + gate)",
                 median_ms(lambda: gate_source(frozen, candidate_src), repeat),
                 "sites(candidate)", compute_sites))
    rows.append((f"gate stop ({n} relocated sites)",
                 median_ms(lambda: gate(frozen, relocated), max(5, repeat // 10)),
                 "gate accept", accept))

    slots = slots_of("r", n)
    assert rfc8785_chain(slots) == certificate.build(slots, "r", 1)["chain_digest"]
    build = median_ms(lambda: certificate.build(slots, "r", 1), repeat)
    rows.append(("certificate.build", build, "RFC 8785 library chain",
                 median_ms(lambda: rfc8785_chain(slots), repeat)))
    cert = certificate.build(slots, "r", 1)
    rows.append(("certificate.validate (full chain check)",
                 median_ms(lambda: certificate.validate(cert, "r"), repeat),
                 "certificate.build", build))

    with real_stores() as stores:
        for name, store in stores:
            rows += store_rows(name, store, n, max(20, repeat // 4))

    print(f"revision contract at {n} frozen sites / slots; medians of {repeat} runs (ms)\n")
    width = max(len(r[0]) for r in rows)
    bwidth = max(len(r[2]) for r in rows)
    print(f"{'measured':<{width}}  {'median':>9}  {'baseline':<{bwidth}}  {'median':>9}  ratio")
    for name, ms, base, base_ms in rows:
        print(f"{name:<{width}}  {ms:9.3f}  {base:<{bwidth}}  {base_ms:9.3f}  {ms / base_ms:5.2f}x")

    print("\ncertificate persist + verify by size, medians (ms): (a) in-memory store (the "
          "algorithmic cost), (b) the real store; baselines from the same run\n")
    print(certificate_table(certificate_sizes(opts.sizes, repeat)))


if __name__ == "__main__":
    main()
