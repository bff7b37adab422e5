"""A logging wrapper around an MCP server's stdio: `python tap.py LOG -- COMMAND...`.

It starts COMMAND, forwards stdin and stdout line by line, and appends the JSON-RPC method of
every client message (with the tool name of a `tools/call`) to LOG, so a test can count what a
third-party server was really asked without touching the server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading


def main() -> int:
    log_path, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None

    def upstream() -> None:
        for line in sys.stdin.buffer:
            try:
                message = json.loads(line)
                method = message.get("method", "")
                if method == "tools/call":
                    method += " " + message["params"]["name"]
                with open(log_path, "a", encoding="utf-8") as log:
                    log.write(method + "\n")
            except (ValueError, KeyError, AttributeError):
                pass
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threading.Thread(target=upstream, daemon=True).start()
    for line in child.stdout:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
