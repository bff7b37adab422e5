"""The artifact freshness lattice: downstream-only, transitive invalidation.

Each lattice node records the artifacts it was computed from. When an artifact changes, every
artifact transitively downstream of it becomes STALE; nothing upstream is touched, so verified
upstream work survives every retry and rollback. Recomputation visits STALE nodes only, in
topological order (graphlib), and never a VALID one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from graphlib import TopologicalSorter

from frostline.errors import GraphLoadError
from frostline.graph.records import ArtifactFreshness, Freshness

#: Freshness of the lattice artifacts that currently exist (absent = never produced).
Status = Mapping[str, Freshness]


@dataclass(frozen=True)
class Invalidation:
    """What one change did: the changed artifact, the nodes it made STALE (topological order),
    and the existing nodes it left alone."""

    changed: str
    stale: tuple[str, ...]
    preserved: tuple[str, ...]


class Lattice:
    """The dependency graph of the lattice artifacts.

    Example::

        lat = Lattice(LATTICE)
        status, inv = lat.invalidate({a: Freshness.VALID for a in lat.artifacts}, "Diagnosis")
        inv.stale == ("Plan", "Patch", "Review", "ValidationResult")
    """

    def __init__(self, nodes: Iterable[ArtifactFreshness]) -> None:
        self.nodes = tuple(nodes)
        self.depends_on: dict[str, tuple[str, ...]] = {n.artifact: n.depends_on for n in self.nodes}
        try:
            order = tuple(TopologicalSorter(self.depends_on).static_order())
        except Exception as exc:  # graphlib.CycleError
            raise GraphLoadError(f"lattice dependency edges form a cycle: {exc}", field="lattice") from exc
        self.order = tuple(a for a in order if a in self.depends_on)
        self._rank = {a: i for i, a in enumerate(self.order)}
        self._children: dict[str, set[str]] = {a: set() for a in self.depends_on}
        for a, deps in self.depends_on.items():
            for d in deps:
                self._children.setdefault(d, set()).add(a)
        self._down = {a: self._closure(a, self._children) for a in self.depends_on}
        self._up = {a: self._closure(a, {k: set(v) for k, v in self.depends_on.items()})
                    for a in self.depends_on}

    @staticmethod
    def _closure(start: str, edges: Mapping[str, Iterable[str]]) -> frozenset[str]:
        seen: set[str] = set()
        todo = list(edges.get(start, ()))
        while todo:
            a = todo.pop()
            if a not in seen:
                seen.add(a)
                todo.extend(edges.get(a, ()))
        return frozenset(seen)

    @property
    def artifacts(self) -> tuple[str, ...]:
        return self.order

    def __contains__(self, artifact: object) -> bool:
        return artifact in self.depends_on

    def downstream(self, artifact: str) -> frozenset[str]:
        """Every artifact transitively computed from `artifact` (excluding itself)."""
        return self._down.get(artifact, frozenset())

    def upstream(self, artifact: str) -> frozenset[str]:
        """Every artifact `artifact` is transitively computed from (excluding itself)."""
        return self._up.get(artifact, frozenset())

    def sort(self, artifacts: Iterable[str]) -> tuple[str, ...]:
        """`artifacts` in topological order."""
        return tuple(sorted(set(artifacts), key=self._rank.__getitem__))

    def invalidate(self, status: Status, changed: str) -> tuple[dict[str, Freshness], Invalidation]:
        """`changed` has a new value: mark its existing downstream STALE; return the new status.

        `changed` itself is left as it is (the caller stores the new version as VALID).
        """
        new = dict(status)
        stale = self.sort(a for a in self.downstream(changed) if a in new)
        for a in stale:
            new[a] = Freshness.STALE
        preserved = self.sort(a for a in new if a not in stale and a != changed)
        return new, Invalidation(changed, stale, preserved)

    def stale(self, status: Status) -> tuple[str, ...]:
        return self.sort(a for a, f in status.items() if f is Freshness.STALE and a in self)

    def recompute(self, status: Status, recompute: Callable[[str], None]
                  ) -> tuple[dict[str, Freshness], tuple[str, ...]]:
        """Call `recompute(artifact)` for each STALE node in topological order, and only for
        those; each becomes VALID. Returns the new status and the recomputed order."""
        order = self.stale(status)
        new = dict(status)
        for a in order:
            recompute(a)
            new[a] = Freshness.VALID
        return new, order
