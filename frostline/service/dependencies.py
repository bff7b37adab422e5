"""What a route may ask FastAPI for: the service's state, the calling principal and a run the
principal owns.

`create_app` puts one `ServiceState` on `app.state`; routes never reach it directly but declare
`State`, `Principal` or `OwnedRun` parameters. `OwnedRun` answers 404 both for a run that does not
exist and for another principal's run, so the API never reveals which run ids are taken.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from fastapi import Depends, FastAPI, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from frostline.capabilities import Catalog
from frostline.capabilities.approvals import ApprovalPolicy
from frostline.contract.records import RunRecord
from frostline.contract.status import RunStatus
from frostline.embedded.jobs import JobQueue
from frostline.errors import RunBusy, RunNotFound
from frostline.service.auth import bearer_token, unauthorized
from frostline.service.limits import PrincipalLimits
from frostline.service.operations import Services
from frostline.store.base import Store


@dataclass(frozen=True)
class ServiceState:
    """Everything the routes of one application share."""

    store: Store
    services: Services
    catalog: Catalog
    queue: JobQueue
    limits: PrincipalLimits
    approvals: ApprovalPolicy = field(default_factory=ApprovalPolicy)  # [approvals]


def attach_state(app: FastAPI, state: ServiceState) -> None:
    """Make `state` what `service_state` returns for every request to `app`."""
    app.state.service = state


async def service_state(request: Request) -> ServiceState:
    # async: a plain attribute read needs no worker thread
    state: ServiceState = request.app.state.service
    return state


State = Annotated[ServiceState, Depends(service_state)]


# Declares the bearer scheme in the OpenAPI description (so an interactive page can send a
# token); it never refuses anything itself: `principal` authenticates, with its own messages.
BEARER = HTTPBearer(auto_error=False, description="A token from `frostline token create NAME`.")
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(BEARER)]


def principal(request: Request, state: State, _: Credentials) -> str:
    """The principal whose bearer token authenticates the request (401 otherwise): an unknown,
    revoked or expired token is refused alike."""
    token = bearer_token(request)
    if token is None:
        raise unauthorized("missing bearer token; create one with `frostline token create NAME`")
    who = state.store.principal_for_token(token)
    if who is None:
        raise unauthorized("unknown token")
    return who


Principal = Annotated[str, Depends(principal)]


def roles(request: Request, state: State, _: Principal) -> tuple[str, ...]:
    """The roles of the token that authenticated the request (which decide the approvals it
    may answer); read only by the routes that need them."""
    record = state.store.authenticate(bearer_token(request) or "")
    return () if record is None else record.roles


Roles = Annotated[tuple[str, ...], Depends(roles)]


def owned_run(run_id: str, who: Principal, state: State) -> RunRecord:
    """The caller's run named `run_id` in the path (404 otherwise: names are per principal,
    so another principal's run of that name is simply not the caller's). A run a model is
    still writing is not a run yet: 409, saying where its job is followed."""
    run = owned_or_authoring(run_id, who, state)
    if run.status == RunStatus.AUTHORING:
        from frostline.embedded.jobs import open_jobs

        jobs = ", ".join(f"/v1/runs/{run.name}/jobs/{t}" for t in open_jobs(state.store,
                                                                             run.run_id))
        raise RunBusy(f"run {run_id!r} is being authored: it becomes a run once the model's "
                      "script is accepted, and is removed if none is; follow its job"
                      + (f" at {jobs}" if jobs else "") + " or cancel it",
                      run_id=run_id, status=run.status)
    return run


def owned_or_authoring(run_id: str, who: Principal, state: State) -> RunRecord:
    """`owned_run`, also while the run is being authored (to cancel its author job)."""
    run = state.store.find_run(who, run_id)
    if run is None or run.owner != who:
        raise RunNotFound(f"no run {run_id!r}", run_id=run_id)
    return run


OwnedRun = Annotated[RunRecord, Depends(owned_run)]
OwnedOrAuthoring = Annotated[RunRecord, Depends(owned_or_authoring)]
