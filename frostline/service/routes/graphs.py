"""A graph run as its owner sees it: the graph, the path the run took, visits per state, each
artifact's latest version and freshness, and the ledger (JSON); and the graph drawn with that
path over it (SVG, fetched by the UI as an image)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from frostline.contract.records import RunRecord
from frostline.errors import RunNotFound
from frostline.graph.graph import Graph
from frostline.graph.render import to_svg
from frostline.graph.trace import run_trace
from frostline.service.dependencies import OwnedRun, State
from frostline.store.base import Store

router = APIRouter(tags=["runs"])

BATCH = 5000


def _graph_run(store: Store, run: RunRecord, name: str) -> tuple[Graph, dict[str, Any]]:
    if run.kind != "graph":
        raise RunNotFound(f"run {name!r} is a {run.kind} run, not a graph run", run_id=name,
                          kind=run.kind)
    attempts = store.list_attempts(run.run_id)
    if not attempts:
        raise RunNotFound(f"graph run {name!r} has no attempt yet", run_id=name)
    graph = Graph.loads(attempts[-1].source)
    events, after = [], 0
    while batch := store.list_events(run.run_id, after=after, limit=BATCH):
        events.extend(batch)
        after = batch[-1].seq
    view = run_trace(graph, events, attempts[-1].number)
    view.update(run_id=name, status=run.status, attempts=len(attempts))
    return graph, view


@router.get("/v1/runs/{run_id}/graph")
def graph_run(run_id: str, run: OwnedRun, state: State) -> dict[str, Any]:
    """The graph run's path, visits, artifacts with freshness, termination and ledger."""
    return _graph_run(state.store, run, run_id)[1]


@router.get("/v1/runs/{run_id}/graph.svg", responses={200: {"content": {"image/svg+xml": {}}}})
def graph_run_svg(run_id: str, run: OwnedRun, state: State) -> Response:
    """The graph drawn with the path the run took: visited states carry their visit count,
    edges taken are drawn heavier."""
    graph, view = _graph_run(state.store, run, run_id)
    taken = {(e["from"], e["to"], e["kind"]): e["taken"] for e in view["edges"]}
    return Response(to_svg(graph, view["visits"], taken), media_type="image/svg+xml",
                    headers={"Cache-Control": "no-store"})
