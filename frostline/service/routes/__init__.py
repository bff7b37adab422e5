"""The HTTP API's routes, one module per resource, each exposing an `APIRouter` named `router`.

Routes only map HTTP onto `frostline.service.operations` and the injected services; what they
need (state, principal, owned run) they declare as dependencies from `frostline.service.dependencies`.
"""

__all__: list[str] = []  # a namespace: its modules are imported by their full names
