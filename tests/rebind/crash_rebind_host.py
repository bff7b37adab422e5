"""A host that dies by SIGKILL inside the trace check (issue 30 crash tests).

Usage: python crash_rebind_host.py STORE_URL RUN_ID SCRIPT_FILE MODE WORKDIR

MODE
  during_dry_replay   die when the dry replay matches its second call (the sandbox is running)
  after_admission     die right after the rebinding is durable, before the first dispatch
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from frostline.contract import rebind
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.runtime.sandbox_runner import SandboxRunner
from frostline.store import open_store
from frostline.testing import FaultyStore


class DiesAfterRebinding(FaultyStore):
    def __init__(self, inner: Any) -> None:
        super().__init__(inner, fail_reads=False, fail_writes=False)

    def put_rebinding(self, run_id: str, attempt: int, rows: list[dict[str, str]]) -> None:
        self.inner.put_rebinding(run_id, attempt, rows)
        os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    url, run_id, script, mode, workdir = sys.argv[1:6]
    providers = LocalProviders(log_path=Path(workdir) / "provider.jsonl")
    if mode == "during_dry_replay":
        match = rebind.Matcher.match
        seen: list[int] = []

        def dying(self: rebind.Matcher, *args: Any) -> Any:
            seen.append(1)
            if len(seen) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
            return match(self, *args)

        rebind.Matcher.match = dying  # type: ignore[method-assign]
    with open_store(url) as opened:
        store = DiesAfterRebinding(opened) if mode == "after_admission" else opened
        out = execute(store, run_id, Path(script).read_text(), providers=providers,
                      runner=SandboxRunner())
    print(out.status)


if __name__ == "__main__":
    main()
