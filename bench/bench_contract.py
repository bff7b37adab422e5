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

Run: ``python bench/bench_contract.py [--sites N] [--repeat R]``. Prints medians in milliseconds.
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
from collections.abc import Callable
from pathlib import Path

import rfc8785

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from frostline.contract import certificate
from frostline.contract.gate import FrozenSite, gate, gate_source
from frostline.contract.identity import Identity, digest
from frostline.script import sites
from frostline.store import SlotRecord, Store, open_store


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


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
        entry = {"site": s.site, "path": list(s.path), "occurrence": s.occurrence,
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
    certificate.persist(store, run_id, 1)
    floor = median_ms(lambda: store.list_slots(run_id), repeat)
    persist = median_ms(lambda: certificate.persist(store, other, 1), repeat)
    verify = median_ms(lambda: certificate.verify(store, run_id), repeat)
    both = persist + verify
    assert certificate.verify(store, run_id)["consistent"]
    return [
        (f"{label}: persist", persist, "list_slots", floor),
        (f"{label}: verify", verify, "list_slots", floor),
        (f"{label}: persist + verify", both, "list_slots", floor),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sites", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=200)
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

    with tempfile.TemporaryDirectory() as tmp, open_store(f"sqlite:///{tmp}/bench.db") as store:
        rows += store_rows("sqlite", store, n, max(20, repeat // 4))
    pg = os.environ.get("FROSTLINE_TEST_POSTGRES", "").strip()
    if pg:
        import psycopg

        schema = "bench_" + uuid.uuid4().hex[:12]
        with psycopg.connect(pg, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            sep = "&" if "?" in pg else "?"
            with open_store(f"{pg}{sep}options=-csearch_path%3D{schema}") as store:
                rows += store_rows("postgres", store, n, max(20, repeat // 4))
        finally:
            with psycopg.connect(pg, autocommit=True) as conn:
                conn.execute(f'DROP SCHEMA "{schema}" CASCADE')

    print(f"revision contract at {n} frozen sites / slots; medians of {repeat} runs (ms)\n")
    width = max(len(r[0]) for r in rows)
    bwidth = max(len(r[2]) for r in rows)
    print(f"{'measured':<{width}}  {'median':>9}  {'baseline':<{bwidth}}  {'median':>9}  ratio")
    for name, ms, base, base_ms in rows:
        print(f"{name:<{width}}  {ms:9.3f}  {base:<{bwidth}}  {base_ms:9.3f}  {ms / base_ms:5.2f}x")


if __name__ == "__main__":
    main()
