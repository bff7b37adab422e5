"""Benchmark the revision contract: the gate and the certificate at N frozen sites (default 200).

Every row is compared with a baseline measured in the same run:
- `gate()` on an already-parsed candidate vs computing the candidate's sites
  (`frostline.script.sites`, which parses it) and vs `ast.parse` alone: the gate must cost a
  small fraction of what producing its input costs;
- the gate's stop path (every frozen site relocated, so each counterexample searches for its
  nearest site) vs the accept path;
- `certificate.build` from the digests the store recorded at commit time, and deep (every
  result hashed again), vs the same chain written with the general RFC 8785 library for
  entries and results (the straightforward implementation);
- `persist`, the fast `verify` and the deep `verify` against a real store vs
  `store.list_slots` alone (the floor of any check that must read the whole prefix), on
  SQLite and, when FROSTLINE_TEST_POSTGRES is set, on PostgreSQL.

A second table puts the certificate's settings side by side at 1, 10, 50, 100 and 200 slots:
(a) the pure algorithmic cost against an in-memory store holding the records a store returns
(the paper's setting): `persist`, the fast `verify` (the chain over the recorded link digests,
every entry against the recorded fields; target <= 0.5 ms at 200 slots) beside the deep
`verify` (every result digest and link digest recomputed); and (b) the same calls against the
real store (SQLite; PostgreSQL too when FROSTLINE_TEST_POSTGRES is set). Baselines from the
same run: one SHA-256 over the very bytes a deep check hashes (every canonical result and
entry, the floor of any hash of that content) and `ast.parse` of the script that made the
calls. Wall-clock and CPU (`time.process_time`) medians are both printed: on a loaded host the
CPU time is the steadier figure.

Run: ``python bench/bench_contract.py [--sites N] [--sizes 1 10 ...] [--repeat R]``. Prints
medians in milliseconds.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
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
from frostline.contract.certificate_verify import fast_match
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
    """The paper's "in-memory store": the calls `persist` and `verify` make, on dicts, holding
    the records a store returns (each slot with the digests recorded at its commit).

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

    list_slot_digests = list_slots

    def put_certificate(self, run_id: str, attempt: int, cert: dict[str, Any]) -> None:
        self._certs[run_id][attempt] = cert

    def list_certificates(self, run_id: str) -> list[dict[str, Any]]:
        return list(self._certs[run_id].values())

    def latest_certificate(self, run_id: str) -> dict[str, Any] | None:
        certs = self._certs[run_id]
        return certs[max(certs)] if certs else None

    def list_rebindings(self, run_id: str, attempt: int | None = None) -> list[dict[str, Any]]:
        return []  # the paper's runs move no committed call


def chained_bytes(slots: list[SlotRecord]) -> bytes:
    """Everything the certificate hashes for these slots: each canonical result, each entry."""
    cert = certificate.build(slots, "r", 1)
    results = [certificate.canonical(s.result) for s in slots]
    entries = [certificate.entry_bytes(s.site, s.path, s.occurrence, s.capability, s.digest,
                                       cert["items"][str(Identity(s.site, s.path,
                                                                  s.occurrence))]
                                       ["result_digest"], s.attempt) for s in slots]
    return b"".join(results + entries)


def persist_verify(store: Any, n: int, repeat: int) -> tuple[Timing, Timing]:
    """Medians of `persist` and of the (fast) `verify` on a fresh n-slot run of `store`."""
    persist, fast, _ = persist_verify_deep(store, n, repeat, deep_repeat=1)
    return persist, fast


def persist_verify_deep(store: Any, n: int, repeat: int,
                        deep_repeat: int | None = None) -> tuple[Timing, Timing, Timing]:
    """Medians of `persist`, the fast `verify` and the deep `verify` on a fresh n-slot run."""
    # Two runs: persisting repeatedly adds certificates, so both verifies are timed on a run
    # that holds exactly one (as after one attempt).
    run_id, other = ("bench-" + uuid.uuid4().hex[:8] for _ in range(2))
    for rid in (run_id, other):
        if isinstance(store, MemoryStore):
            store.add_run(rid, slots_of(rid, n))
        else:
            fill(store, rid, slots_of(rid, n))
    certificates.persist(store, run_id, 1)
    fast = certificates.verify(store, run_id)
    deep = certificates.verify(store, run_id, deep=True)
    if not (fast["consistent"] and deep["consistent"]) or fast["deep"] or not deep["deep"]:
        raise RuntimeError("bench: a freshly persisted certificate does not verify")
    return (timed(lambda: certificates.persist(store, other, 1), repeat),
            timed(lambda: certificates.verify(store, run_id), repeat),
            timed(lambda: certificates.verify(store, run_id, deep=True),
                  deep_repeat if deep_repeat is not None else repeat))


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
    memory: tuple[Timing, Timing, Timing]           # (persist, fast verify, deep verify)
    stores: dict[str, tuple[Timing, Timing, Timing]]  # backend -> the same three
    sha256: Timing                                   # one SHA-256 over the deep-hashed bytes
    parse: Timing                                    # ast.parse of the n-call script

    @property
    def mem_total(self) -> Timing:
        """persist + the fast verify: what an attempt and a default check cost."""
        return self.memory[0] + self.memory[1]

    def store_total(self, backend: str) -> Timing:
        p, v, _ = self.stores[backend]
        return p + v


def certificate_sizes(sizes: Sequence[int], repeat: int) -> list[CertSize]:
    """Persist and both verifies at each size, in memory and on every configured real store."""
    out = []
    with real_stores() as stores:
        for n in sizes:
            blob = chained_bytes(slots_of("r", n))
            src = script(n)
            slow = max(10, repeat // 4)
            out.append(CertSize(
                n, persist_verify_deep(MemoryStore(), n, repeat),
                {name: persist_verify_deep(store, n, slow) for name, store in stores},
                timed(lambda b=blob: hashlib.sha256(b).digest(), repeat),  # type: ignore[misc]
                timed(lambda s=src: ast.parse(s), max(10, repeat // 4))))  # type: ignore[misc]
    return out


def certificate_table(rows: Sequence[CertSize]) -> str:
    """The side-by-side table: (a) in memory, fast verify beside deep, (b) per real store."""
    backends = list(rows[0].stores) if rows else []
    head = ["sites", "(a) persist", "(a) verify fast", "(a) verify deep", "fast cpu",
            "deep cpu", "deep/fast", "(a) p+fast"]
    head += [f"(b) {b} {k}" for b in backends for k in ("persist", "fast", "deep")]
    head += ["sha256 deep bytes", "ast.parse", "fast/sha256", "fast/parse"]
    lines = [head]
    for r in rows:
        persist, fast, deep = r.memory
        cells = [str(r.n), f"{persist.wall:.3f}", f"{fast.wall:.3f}", f"{deep.wall:.3f}",
                 f"{fast.cpu:.3f}", f"{deep.cpu:.3f}", f"{deep.wall / fast.wall:.1f}x",
                 f"{r.mem_total.wall:.3f}"]
        cells += [f"{t.wall:.3f}" for b in backends for t in r.stores[b]]
        cells += [f"{r.sha256.wall:.4f}", f"{r.parse.wall:.3f}",
                  f"{fast.wall / r.sha256.wall:.1f}x", f"{fast.wall / r.parse.wall:.3f}x"]
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
    """n committed slots as a store returns them: with the digests it recorded at commit."""
    out = []
    for i in range(n):
        payload = {"prompt": f"shot {i}", "size": "512x512"}
        result = {"ref": "sha256:" + hashlib.sha256(str(i).encode()).hexdigest(),
                  "mime": "image/png", "width": 512, "height": 512, "prompt": f"shot {i}"}
        s = SlotRecord(run_id, f"orchestrate/for#0.body/#{i % 4}", (i // 4,), 0,
                       "image.generate", digest(payload), result, {"usd": 0.02}, 1)
        rdigest, edigest = certificate.slot_digests(s, deep=True)
        out.append(dataclasses.replace(s, result_digest=rdigest, entry_digest=edigest))
    out.sort(key=certificate.SLOT_KEY)  # list_slots returns them in (σ, π, ω) order
    return out


def rfc8785_chain(slots: list[SlotRecord]) -> str:
    links = []
    for s in sorted(slots, key=lambda s: (s.site, s.path, s.occurrence)):
        entry: dict[str, Any] = {"site": s.site, "path": list(s.path), "occurrence": s.occurrence,
                 "capability": s.capability, "digest": s.digest,
                 "result_digest": hashlib.sha256(rfc8785.dumps(s.result)).hexdigest(),
                 "attempt": s.attempt}
        links.append(hashlib.sha256(rfc8785.dumps(entry)).digest())
    return hashlib.sha256(hashlib.sha256(certificate.DOMAIN).digest()
                          + b"".join(links)).hexdigest()


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
    deep = median_ms(lambda: certificates.verify(store, run_id, deep=True), repeat)
    assert certificates.verify(store, run_id)["consistent"]
    assert certificates.verify(store, run_id, deep=True)["consistent"]
    return [
        (f"{label}: persist", persist, "list_slots", floor),
        (f"{label}: verify (fast)", verify, "list_slots", floor),
        (f"{label}: verify --deep", deep, "list_slots", floor),
        (f"{label}: persist + verify (fast)", persist + verify, "list_slots", floor),
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
    library = median_ms(lambda: rfc8785_chain(slots), repeat)
    build = median_ms(lambda: certificate.build(slots, "r", 1), repeat)
    deep = median_ms(lambda: certificate.build(slots, "r", 1, deep=True), repeat)
    rows.append(("certificate.build (recorded digests)", build, "RFC 8785 library chain",
                 library))
    rows.append(("certificate.build deep", deep, "RFC 8785 library chain", library))
    cert = certificate.build(slots, "r", 1)
    rows.append(("fast check (certificate_verify.fast_match)",
                 median_ms(lambda: fast_match(cert, slots), repeat),
                 "certificate.build deep", deep))
    rows.append(("certificate.validate (full chain check)",
                 median_ms(lambda: certificate.validate(cert, "r"), repeat),
                 "certificate.build deep", deep))

    with real_stores() as stores:
        for name, store in stores:
            rows += store_rows(name, store, n, max(20, repeat // 4))

    print(f"revision contract at {n} frozen sites / slots; medians of {repeat} runs (ms)\n")
    width = max(len(r[0]) for r in rows)
    bwidth = max(len(r[2]) for r in rows)
    print(f"{'measured':<{width}}  {'median':>9}  {'baseline':<{bwidth}}  {'median':>9}  ratio")
    for name, ms, base, base_ms in rows:
        print(f"{name:<{width}}  {ms:9.3f}  {base:<{bwidth}}  {base_ms:9.3f}  {ms / base_ms:5.2f}x")

    print("\ncertificate persist, fast verify and deep verify by size, medians (ms): (a) "
          "in-memory store (the algorithmic cost; target: fast verify <= 0.5 ms at 200 "
          "slots), (b) the real store; baselines from the same run\n")
    print(certificate_table(certificate_sizes(opts.sizes, repeat)))


if __name__ == "__main__":
    main()
