"""The HTTP API (`frostline serve`): the FastAPI app, its authentication, limits and error
handlers, the routes (`routes`), the operations they map onto and the job queue they submit to."""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
