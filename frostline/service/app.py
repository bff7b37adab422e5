"""The HTTP API and the web UI, served by one process.

`create_app(store, ...)` wires a FastAPI application over a Store; `frostline serve` runs it with
uvicorn. Every run belongs to the principal whose bearer token created it; another principal
gets 404 for it, its artifacts and its events, exactly as for a run that does not exist.
The routes live in `frostline.service.routes`, one module per resource. Around them: the body
cap (`body_limit`), per-principal limits (`limits`) and security headers (`headers`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from fastapi import FastAPI

from frostline import __version__
from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.capabilities.approvals import ApprovalPolicy
from frostline.embedded.jobs import JobQueue
from frostline.embedded.pool import DEFAULT_WORKERS, LocalPool
from frostline.service import error_handlers, operations
from frostline.service.body_limit import BodySizeLimit
from frostline.service.dependencies import ServiceState, attach_state
from frostline.service.headers import SecurityHeaders
from frostline.service.limits import PrincipalLimits, ServiceLimits
from frostline.service.links import with_run_links
from frostline.service.resumer import Resumer
from frostline.service.routes import (
    artifacts,
    attempts,
    contract,
    events,
    graphs,
    jobs,
    reports,
    runs,
    ui,
    waits,
)
from frostline.service.routes import catalog as catalog_routes
from frostline.service.schemas import MAX_BODY_BYTES
from frostline.service.server import ConnectionLimits, uvicorn_options
from frostline.store.base import Store

# In this order in the OpenAPI description.
ROUTERS = (runs.router, attempts.router, jobs.router, contract.router, artifacts.router,
           events.router, waits.router, catalog_routes.router, graphs.router,
           reports.router, ui.router)


DOCS_URL, REDOC_URL = "/docs", "/redoc"


def create_app(store: Store, *, services: operations.Services | None = None,
               catalog: Catalog = DEFAULT_CATALOG, limits: ServiceLimits | None = None,
               docs: bool = False, pool_size: int | None = None,
               resume_interval_s: float = 1.0,
               approvals: ApprovalPolicy | None = None, metrics_public: bool = False,
               connections: ConnectionLimits | None = None) -> FastAPI:
    """Build the API over `store`. `services` injects providers, runner and model clients, or
    the queue of the workers that run the jobs (without one, jobs run on an in-process pool of
    `pool_size` threads, by default two more than one principal may hold at once, so a
    principal at its limit leaves room for the others); `limits` bounds each principal (defaults: `ServiceLimits()`); `docs`
    serves the interactive API docs, which load their scripts from a CDN (off by default; the
    OpenAPI description is always at /openapi.json); `resume_interval_s` is how often the
    embedded default looks for waiting runs to resume (0: never, only on an answer);
    `approvals` says who answers approvals (default: the approver role, no self-approval);
    `metrics_public` serves /v1/metrics without a token (closed by default); `connections`
    bounds slow clients (its body deadline applies here, the rest in `serve`)."""
    services = services or operations.Services.default(catalog=catalog)
    limits = limits or ServiceLimits()
    size = pool_size or max(DEFAULT_WORKERS, limits.executing_attempts + 2)
    queue: JobQueue = (services.make_queue(store) if services.make_queue is not None
                       else LocalPool(store, services.body(), workers=size,
                                      interrupts=services.interrupts))

    # This process resumes waiting runs itself (timers included), each under its owner's
    # limits; with workers, they also schedule what is due, and an answer queues the resume
    # at once when its owner has a free slot (else the sweep does once one frees up).
    principal_limits = PrincipalLimits(limits)
    resumer = (Resumer(store, queue, interval_s=resume_interval_s, limits=principal_limits)
               if resume_interval_s > 0 else None)

    app = FastAPI(
        title="frostline",
        version=__version__,
        description="Runs of model-written workflow scripts under a revision contract.",
        exception_handlers=error_handlers.HANDLERS,
        docs_url=DOCS_URL if docs else None,
        redoc_url=REDOC_URL if docs else None,
        lifespan=_lifespan(resumer, queue),
    )
    _add_middleware(app, docs, connections or ConnectionLimits())
    attach_state(app, ServiceState(
        store=store,
        services=services,
        catalog=catalog,
        queue=queue,
        limits=principal_limits,
        approvals=approvals or ApprovalPolicy(),
    ))
    app.state.metrics_public = metrics_public
    for router in ROUTERS:
        app.include_router(router)
    with_run_links(app)
    return app


def _lifespan(resumer: Resumer | None,
              queue: JobQueue) -> Callable[[FastAPI], AbstractAsyncContextManager[None]]:
    """The app's lifespan: the resumer runs while the app serves; the queue closes after."""
    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if resumer is not None:
            resumer.start()
        try:
            yield
        finally:
            if resumer is not None:
                resumer.stop()
            queue.close()
    return lifespan


def _add_middleware(app: FastAPI, docs: bool, connections: ConnectionLimits) -> None:
    app.add_middleware(BodySizeLimit, limit=MAX_BODY_BYTES, timeout_s=connections.body_timeout_s)
    # Added last, so outermost: the 413 of the body cap carries the headers too.
    app.add_middleware(SecurityHeaders, docs_paths=(DOCS_URL, REDOC_URL) if docs else ())


def serve(store_url: str | None, host: str, port: int,
          make_services: Callable[[], operations.Services] | None = None, *,
          limits: ServiceLimits | None = None, docs: bool = False,
          approvals: ApprovalPolicy | None = None, metrics_public: bool = False,
          connections: ConnectionLimits | None = None) -> None:
    """Run the API with uvicorn (blocking), slow clients bounded by `connections`."""
    import uvicorn

    from frostline.store import open_store

    connections = connections or ConnectionLimits()
    store = open_store(store_url)
    services = make_services() if make_services else None
    catalog = services.extra.get("catalog", DEFAULT_CATALOG) if services else DEFAULT_CATALOG
    app = create_app(store, services=services, catalog=catalog, limits=limits, docs=docs,
                     approvals=approvals, metrics_public=metrics_public,
                     connections=connections)
    uvicorn.run(app, host=host, port=port, log_level="info", **uvicorn_options(connections))
