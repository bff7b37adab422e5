"""The instruments of §8.2, counted from the ledger and counters, never from a self-report.

`Observer` is a ledger sink. It keeps the canonical freshness lattice in the shadow of every
run, whether or not the run's own graph has one, so the arms without a lattice are measured on
the same terms as the arms with it:

    redundant action   a tool call whose (tool, payload digest) the run already made
    stale context      a state entered on a required input, or an edge taken on a gate over an
                       artifact, that the canonical lattice holds STALE (a change upstream has
                       made it describe inputs that no longer hold)

It also answers `valid(artifact)` for the bodies' repeated-work count. Tokens and model calls
come from `CountingChat`, the wrapper every model call of a run goes through.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from frostline.graph.freshness import Lattice
from frostline.graph.graph import Graph
from frostline.graph.ledger import LedgerEvent
from frostline.graph.records import ArtifactFreshness, Freshness


class Observer:
    """Shadow lattice, redundant tool calls and stale-context decisions of one run."""

    def __init__(self, lattice: Iterable[ArtifactFreshness], canonical: Graph) -> None:
        self.lattice = Lattice(lattice)
        self.status: dict[str, Freshness] = {}
        self.stored: set[str] = set()
        self.calls: Counter[tuple[str, str]] = Counter()
        self.redundant = 0
        self.stale_context = 0
        self.stale_events: list[dict[str, Any]] = []
        self.tools_called: list[str] = []
        self._required = {s: canonical.contracts[s].required_inputs for s in canonical.states}

    def valid(self, artifact: str) -> bool:
        if artifact in self.lattice:
            return self.status.get(artifact) is Freshness.VALID
        return artifact in self.stored

    def _stale(self, artifact: str) -> bool:
        return self.status.get(artifact) is Freshness.STALE

    def write(self, event: LedgerEvent) -> None:
        kind, data = event.kind, event.data
        if kind == "tool_call":
            key = (str(data["tool"]), str(data["payload_digest"]))
            self.tools_called.append(key[0])
            if self.calls[key]:
                self.redundant += 1
            self.calls[key] += 1
        elif kind == "artifact":
            self._artifact(str(data["artifact"]), bool(data["changed"]))
        elif kind == "state_entered":
            state = str(data["state"])
            stale = [a for a in self._required.get(state, ()) if self._stale(a)]
            if stale:
                self.stale_context += 1
                self.stale_events.append({"state": state, "stale": stale})
        elif kind == "gate" and data.get("taken"):
            preds = (data.get("gate") or {}).get("predicates", ())
            read = {str(p["predicate"]).split(" ")[0].split(".")[0] for p in preds}
            stale = sorted(a for a in read if self._stale(a))
            if stale:
                self.stale_context += 1
                self.stale_events.append({"edge": data.get("edge", {}).get("to"), "stale": stale})

    def _artifact(self, name: str, changed: bool) -> None:
        self.stored.add(name)
        if name not in self.lattice:
            return
        if changed:
            present = {a: f for a, f in self.status.items()}
            self.status, _ = self.lattice.invalidate(present, name)
        self.status[name] = Freshness.VALID


class CountingChat:
    """Wraps a chat model; counts every call and the tokens its usage reports."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.calls = 0
        self.tokens = 0

    def complete(self, messages: list[dict[str, Any]]) -> Any:
        self.calls += 1
        reply = self.model.complete(messages)
        usage = getattr(reply, "usage", None)
        self.tokens += int(getattr(usage, "total_tokens", 0) or 0)
        return reply
