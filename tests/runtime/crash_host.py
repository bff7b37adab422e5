"""A host process that dies by SIGKILL at a chosen point of a call (crash tests).

Usage: python crash_host.py STORE_URL RUN_ID SCRIPT_FILE MODE WORKDIR

MODE
  before_provider   die right after the durable attempt record, before the provider runs
  sleep             hang inside the provider (the test kills this process)
  barrier3          wait until three calls are inside the provider, then die
  after_provider    let the provider finish (it executes and remembers the key), then die
                    before the commit
  read_only_in_flight
                    text.generate free (so it may be sent before its attempt record is
                    durable); the record is held until the provider runs, which dies
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.runtime.runners import ChildProcessRunner
from frostline.store import open_store
from frostline.testing import FaultyStore

SENT = threading.Event()  # read_only_in_flight: the provider was called


class HeldRecords(FaultyStore):
    """Holds every attempt record until the provider has been called."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner, fail_reads=False, fail_writes=False)

    def begin_call(self, *args: Any, **kwargs: Any) -> int:
        SENT.wait(60)
        return int(self.inner.begin_call(*args, **kwargs))


class Crashing:
    def __init__(self, inner: LocalProviders, mode: str) -> None:
        self.inner = inner
        self.mode = mode
        self.barrier: asyncio.Barrier | None = None

    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability: str) -> bool:
        return self.inner.honours_idempotency_keys(capability)

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        if self.mode == "before_provider":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "read_only_in_flight":
            SENT.set()
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "sleep":
            await asyncio.sleep(600)
        if self.mode == "barrier3":
            if self.barrier is None:
                self.barrier = asyncio.Barrier(3)
            await self.barrier.wait()
            os.kill(os.getpid(), signal.SIGKILL)
        result = await self.inner.invoke(capability, payload, ctx)
        if self.mode == "after_provider":
            os.kill(os.getpid(), signal.SIGKILL)
        return result


def main() -> None:
    url, run_id, script, mode, workdir = sys.argv[1:6]
    work = Path(workdir)
    inner = LocalProviders(log_path=work / "provider.jsonl", idempotent=True,
                           idempotency_path=work / "keys.db") if mode == "after_provider" \
        else LocalProviders(log_path=work / "provider.jsonl")
    catalog = DEFAULT_CATALOG
    if mode == "read_only_in_flight":
        catalog = Catalog([replace(c, price_usd=0.0) if c.name == "text.generate" else c
                           for c in DEFAULT_CATALOG])
        inner = LocalProviders(log_path=work / "provider.jsonl", catalog=catalog)
    with open_store(url) as opened:
        store = HeldRecords(opened) if mode == "read_only_in_flight" else opened
        out = execute(store, run_id, Path(script).read_text(), providers=Crashing(inner, mode),
                      runner=ChildProcessRunner(timeout_s=600), catalog=catalog)
    print(out.status)


if __name__ == "__main__":
    main()
