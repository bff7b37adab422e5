"""TRACE and DEBUG: tracebacks turned into a `Diagnosis`.

pytest runs with ``--tb=native``, so a failure's text is a Python traceback. `frames` keeps the
frames that lie in the repository (``/workspace/...``), `exception` the last line's type and
message. DEBUG combines the deepest source frame of the failures with the localization's top
candidate into the Diagnosis: a root cause sentence, a confidence, whether the fix is local to one
function (`patch_local`), and the suspect site the plan starts from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from frostline.coding.manifest import is_test_file

_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)', re.M)
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(Error|Exception|Exit|Timeout|Interrupt|Warning)"
                  r"|AssertionError)(: (?P<msg>.*))?$", re.M)
WORKSPACE = "/workspace/"


def frames(text: str) -> list[dict[str, Any]]:
    """The traceback's frames inside the repository, outermost first."""
    out = []
    for m in _FRAME.finditer(text):
        path = m.group("path")
        if path.startswith(WORKSPACE):
            out.append({"file": path[len(WORKSPACE):], "line": int(m.group("line")),
                        "function": m.group("fn")})
    return out


def exception(text: str, message: str = "") -> dict[str, str]:
    """The exception a traceback ends with (type and message)."""
    found = list(_EXC.finditer(text))
    if found:
        last = found[-1]
        return {"type": last.group("type"), "message": (last.group("msg") or "")[:300]}
    head = message.split(":", 1)
    return {"type": head[0][:80] or "Unknown", "message": head[1].strip()[:300] if len(head) > 1
            else ""}


def trace_of(failures: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The Trace artifact of a set of failures: one event per failure."""
    events = []
    for f in failures:
        text = str(f.get("text", ""))
        fr = frames(text)
        src = [x for x in fr if not is_test_file(x["file"])]
        events.append({"test": f.get("test"), "exception": exception(text, str(f.get("message", ""))),
                       "frames": fr[-6:], "deepest_source": src[-1] if src else None})
    return {"events": events, "event_count": len(events)}


def diagnose(localization: Mapping[str, Any], trace: Mapping[str, Any] | None) -> dict[str, Any]:
    """The Diagnosis from the localization and, when there is one, the latest trace."""
    events = list((trace or trace_of(localization.get("failures", ()))).get("events", ()))
    candidates = list(localization.get("candidates", ()))
    top = candidates[0] if candidates else None
    deepest = next((e["deepest_source"] for e in events if e.get("deepest_source")), None)
    exc = events[0]["exception"] if events else {"type": "Unknown", "message": ""}
    confidence = float(localization.get("top_candidate_confidence", 0.0))
    suspect = top["site"] if top else ""
    functions = {c["function"] for c in candidates[:3]}
    if deepest is not None and top is not None and deepest["function"] not in top["function"]:
        # the failure surfaces in another function than the top suspect: less certain
        confidence *= 0.8
    where = f"{deepest['file']}:{deepest['line']} in {deepest['function']}" if deepest else \
        "the test itself"
    cause = (f"{exc['type']} ({exc['message'][:120]}) surfacing at {where}; the most suspicious "
             f"statement is {suspect or 'unknown'}"
             + (f" `{top['text']}`" if top and top.get("text") else ""))
    return {"root_cause": cause, "confidence": round(confidence, 6),
            "patch_local": int(len(functions) <= 2 and bool(suspect)),
            "suspect_site": suspect, "exception": exc,
            "failing_tests": list(localization.get("failing_tests", ()))[:50],
            "source": "trace" if trace else "localization"}
