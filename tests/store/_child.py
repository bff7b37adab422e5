"""A real child process for the cross-process store tests (run as a script, not collected).

    python _child.py lock URL RUN_ID          hold run_lock until a line arrives on stdin
    python _child.py crash URL RUN_ID K       K threads write attempt records, then SIGKILL self
"""

from __future__ import annotations

import os
import signal
import sys
import threading

from frostline.contract.identity import Identity, digest
from frostline.errors import RunBusy
from frostline.store import open_store


def hold_lock(url: str, run_id: str) -> None:
    store = open_store(url)
    try:
        with store.run_lock(run_id):
            print("locked", flush=True)
            sys.stdin.readline()
        print("released", flush=True)
    except RunBusy:
        print("busy", flush=True)
    finally:
        store.close()


def crash_after_begin(url: str, run_id: str, k: int) -> None:
    store = open_store(url)
    barrier = threading.Barrier(k + 1)

    def dispatch(i: int) -> None:
        # begin_call returns only once the attempt record is durable; the provider call
        # would follow here, and the process dies before it commits.
        store.begin_call(run_id, 1, Identity("orchestrate/#0", (i,), 0), "image.generate",
                         digest({"shot": i}), idempotency_key=f"{run_id}/{i}")
        barrier.wait()

    threads = [threading.Thread(target=dispatch, args=(i,)) for i in range(k)]
    for t in threads:
        t.start()
    barrier.wait()
    print("begun", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)


if __name__ == "__main__":
    command, url, run = sys.argv[1:4]
    if command == "lock":
        hold_lock(url, run)
    elif command == "crash":
        crash_after_begin(url, run, int(sys.argv[4]))
    else:
        raise SystemExit(f"unknown command {command!r}")
