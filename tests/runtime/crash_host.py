"""A host process that dies by SIGKILL at a chosen point of a call (crash tests).

Usage: python crash_host.py STORE_URL RUN_ID SCRIPT_FILE MODE WORKDIR

MODE
  before_provider   die right after the durable attempt record, before the provider runs
  sleep             hang inside the provider (the test kills this process)
  barrier3          wait until three calls are inside the provider, then die
  after_provider    let the provider finish (it executes and remembers the key), then die
                    before the commit
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from frostline.capabilities.provider import CallContext, ProviderResult
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.runtime.runners import ChildProcessRunner
from frostline.store import open_store


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
    with open_store(url) as store:
        out = execute(store, run_id, Path(script).read_text(), providers=Crashing(inner, mode),
                      runner=ChildProcessRunner(timeout_s=600))
    print(out.status)


if __name__ == "__main__":
    main()
