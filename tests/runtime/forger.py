"""A hostile stand-in for the script process, speaking the child protocol by hand.

Usage: python forger.py MODE READ_FD WRITE_FD. It reads the job, does what MODE says, and
reports `done` with the real nonce so the host sees a normal end.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time

from frostline.runtime.rpc import Channel


def main() -> None:
    mode, rfd, wfd = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    ch = Channel(rfd, wfd)
    job = ch.receive()
    assert job is not None
    nonce = job["nonce"]
    call = {"type": "call", "id": 1, "nonce": nonce, "site": "orchestrate/#0", "path": [],
            "capability": "echo", "payload": {"n": 1}}
    result = None
    if mode == "honest":
        ch.send(call)
        result = ch.receive()
    elif mode == "wrong_nonce":
        ch.send({**call, "nonce": "0" * 32})
        result = ch.receive()
    elif mode == "unknown_site":
        ch.send({**call, "site": "orchestrate/#99"})
        result = ch.receive()
    elif mode == "wrong_capability":
        ch.send({**call, "capability": "image.generate",
                 "payload": {"prompt": "x", "size": "512x512"}})
        result = ch.receive()
    elif mode == "bad_path":
        ch.send({**call, "path": [10_000]})
        result = ch.receive()
    elif mode == "env":
        result = dict(os.environ)
    elif mode == "hang":
        child = subprocess.Popen(["sleep", "300"])
        ch.send({"type": "log", "nonce": nonce, "text": f"grandchild {child.pid}\n"})
        while True:
            time.sleep(1)
    elif mode == "oversized":
        os.write(wfd, struct.pack(">I", 64 * 1024 * 1024))
        time.sleep(5)
        return
    elif mode == "no_read":
        # Flood calls whose replies (echo returns the payload) overfill the pipe, never read.
        for i in range(40):
            ch.send({**call, "id": i + 10, "payload": {"n": i, "pad": "x" * 32_000}})
        while True:
            time.sleep(1)
    elif mode == "log_flood":
        for _ in range(200):
            ch.send({"type": "log", "nonce": nonce, "text": "x" * 1000})
    ch.send({"type": "done", "nonce": nonce, "ok": True, "result": result})


if __name__ == "__main__":
    main()
