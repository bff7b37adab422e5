"""The HTTP API and the web UI, served by one process.

`create_app(store, ...)` wires a FastAPI application over a Store; `frostline serve` runs it with
uvicorn. Every run belongs to the principal whose bearer token created it; another principal
gets 404 for it, its artifacts and its events, exactly as for a run that does not exist.
The routes live in `frostline.service.routes`, one module per resource.
"""

from __future__ import annotations

from collections.abc import Callable

from fastapi import FastAPI

from frostline import __version__
from frostline.capabilities import DEFAULT_CATALOG, Catalog
from frostline.service import error_handlers, operations
from frostline.service.body_limit import BodySizeLimit
from frostline.service.dependencies import ServiceState, attach_state
from frostline.service.executing import ExecutingRuns
from frostline.service.routes import artifacts, attempts, contract, events, runs, ui
from frostline.service.routes import catalog as catalog_routes
from frostline.service.schemas import MAX_BODY_BYTES
from frostline.store.base import Store

# In this order in the OpenAPI description.
ROUTERS = (runs.router, attempts.router, contract.router, artifacts.router, events.router,
           catalog_routes.router, ui.router)


def create_app(store: Store, *, services: operations.Services | None = None,
               catalog: Catalog = DEFAULT_CATALOG) -> FastAPI:
    """Build the API over `store`. `services` injects providers, runner and model clients."""
    app = FastAPI(
        title="frostline",
        version=__version__,
        description="Runs of model-written workflow scripts under a revision contract.",
        exception_handlers=error_handlers.HANDLERS,
    )
    app.add_middleware(BodySizeLimit, limit=MAX_BODY_BYTES)
    attach_state(app, ServiceState(
        store=store,
        services=services or operations.Services.default(catalog=catalog),
        catalog=catalog,
        executing=ExecutingRuns(),
    ))
    for router in ROUTERS:
        app.include_router(router)
    return app


def serve(store_url: str | None, host: str, port: int,
          make_services: Callable[[], operations.Services] | None = None) -> None:
    """Run the API with uvicorn (blocking)."""
    import uvicorn

    from frostline.store import open_store

    store = open_store(store_url)
    services = make_services() if make_services else None
    catalog = services.extra.get("catalog", DEFAULT_CATALOG) if services else DEFAULT_CATALOG
    app = create_app(store, services=services, catalog=catalog)
    uvicorn.run(app, host=host, port=port, log_level="info")
