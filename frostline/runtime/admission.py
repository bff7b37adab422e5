"""Frame admission: what a frame from the script must be before the broker decides anything.

The script process is not trusted, so a frame is admitted only if it carries this attempt's
nonce, a fanout path that could exist under the envelope, and a callsite the host's own
annotation lists with the capability the frame asks for. Admission also assigns the
occurrence ω of a call — a count per (σ, π) in arrival order, which is program order because
one path is sequential — and the ordinal of a race decision per path. A frame that fails
admission is a `Rejection`; the broker stops the run on it.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from frostline.contract.identity import Identity, path_text
from frostline.errors import (
    FrameRejected as FrameRejected,
)
from frostline.runtime.call import Call

MAX_PATH_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Rejection:
    """A frame that failed admission, with the fields of it that may be shown."""

    reason: str
    message: str
    shown: dict[str, Any]

    def error(self) -> FrameRejected:
        return FrameRejected(f"rejected frame ({self.reason}): {self.message}",
                             reason=self.reason, frame=self.shown)


@dataclass(frozen=True, slots=True)
class RaceDecision:
    """An admitted `decide` frame: the winner the script proposes for the race `key`."""

    key: str
    value: int


class Admission:
    """Admits the frames of one attempt and assigns occurrences.

    Example::

        admission = Admission(nonce, {"orchestrate/#0": "echo"})
        admitted = admission.admit(frame, max_fanout=8, stopped=False)
    """

    def __init__(self, nonce: str, allowlist: Mapping[str, str | None]) -> None:
        self.nonce = nonce
        self.allowlist = dict(allowlist)
        self._occurrences: Counter[tuple[str, tuple[int, ...]]] = Counter()
        self._races: Counter[tuple[int, ...]] = Counter()

    def admit(self, frame: Mapping[str, Any], max_fanout: int,
              stopped: bool) -> Call | RaceDecision | Rejection | None:
        """The admitted call or race decision, or why the frame is rejected.

        None is a well-formed call frame of a stopped run: it gets no occurrence, since no
        call of a stopped run is ever decided. A malformed frame is rejected all the same.
        """
        if not secrets.compare_digest(str(frame.get("nonce", "")), self.nonce):
            return _reject("nonce", "frame nonce does not match this attempt", frame)
        kind = frame.get("type")
        path = frame.get("path")
        if not isinstance(path, list) or len(path) > MAX_PATH_DEPTH:
            return _implausible(path, max_fanout, frame)
        for i in path:  # a loop, not all(...): no generator per frame
            if type(i) is not int or not 0 <= i < max_fanout:
                return _implausible(path, max_fanout, frame)
        steps = tuple(path)
        if kind == "decide":
            value = frame.get("value")
            if type(value) is not int or not 0 <= value < max_fanout:
                return _reject("decide", f"implausible race winner {value!r}", frame)
            ordinal = self._races[steps]
            self._races[steps] += 1
            return RaceDecision(f"race:{path_text(steps)}#{ordinal}", value)
        if kind != "call":
            return _reject("type", f"unexpected frame type {kind!r}", frame)
        site, capability, payload = frame.get("site"), frame.get("capability"), frame.get("payload")
        if not isinstance(site, str) or site not in self.allowlist:
            return _reject("site", f"callsite {site!r} is not in the host's annotation", frame)
        if capability != self.allowlist[site]:
            return _reject("capability", f"callsite {site} is annotated for "
                           f"{self.allowlist[site]!r}, the frame asks for {capability!r}", frame)
        if not isinstance(payload, dict):
            return _reject("payload", "the payload must be a JSON object", frame)
        if stopped:
            return None
        where = (site, steps)
        occurrence = self._occurrences[where]
        self._occurrences[where] = occurrence + 1
        # str(identity), spelled out: this runs for every frame of a replayed prefix.
        text = f"{site}@{'.'.join(map(str, steps)) if steps else ''}:{occurrence}"
        name = str(capability)
        return Call(Identity(site, steps, occurrence), text, name, payload,
                    {"identity": text, "capability": name})


def _implausible(path: Any, max_fanout: int, frame: Mapping[str, Any]) -> Rejection:
    return _reject("path", f"implausible fanout path {path!r} (indexes must be "
                   f"< max_fanout {max_fanout})", frame)


def _reject(reason: str, message: str, frame: Mapping[str, Any]) -> Rejection:
    shown = {k: frame.get(k) for k in ("type", "site", "path", "capability") if k in frame}
    return Rejection(reason, message, shown)
