"""Issue 28 §2: statuses and mappings. One table (frostline.contract.status) says what every
attempt status and every error means on each surface; the command line, the attempt's
outcome, the broker's stop and the HTTP API all read it, and they agree for every code."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from frostline.cli import common
from frostline.contract import status
from frostline.contract.status import AttemptStatus, RunStatus
from frostline.errors import FrostlineError, ModelError, registered
from frostline.runtime import outcome
from frostline.service.error_handlers import HANDLERS
from tests.test_error_tree import TREE, _instance

CODE = {name: code for name, (code, _) in status.EXIT_CODES.items()}


def test_issue28_the_command_line_reads_the_one_exit_table() -> None:
    assert common.EXIT_CODES is status.EXIT_CODES
    assert {str(s): CODE[row] for s, row in status.ATTEMPT_EXIT.items()} == outcome.EXIT_CODES
    # every attempt status but `running` has a row; a run's statuses include the attempt's
    assert set(status.ATTEMPT_EXIT) == set(AttemptStatus) - {AttemptStatus.RUNNING,
                                                             AttemptStatus.CANCELLED}
    assert outcome.exit_code_of(AttemptStatus.CANCELLED, None) == CODE["failed"]
    assert {str(s) for s in AttemptStatus} <= {str(s) for s in RunStatus}


@pytest.mark.parametrize("cls", TREE, ids=lambda c: c.__name__)
def test_issue28_exit_code_and_http_status_agree_for_every_code(cls: type[FrostlineError]) -> None:
    err = _instance(cls, {})
    row = status.row_of(err)
    exit_code = common.exit_code_of(err, default=-1)
    http = status.http_of_error(err)
    # the command line's exit code is the table's (its own row, else the command's default)
    assert exit_code == (-1 if row.exit is None else CODE[row.exit])
    # an input the caller fixes is a 4xx; a 5xx is an outage of what the server calls: the
    # store's (503, with its own exit code) or a model endpoint's (502, a bad gateway)
    if row.exit == "usage":
        assert 400 <= http < 500
    if http >= 500:
        assert (http, row.exit) == (503, "store_unavailable") or (
            http == 502 and issubclass(cls, ModelError))
    # an error that stops an attempt ends it with a status that exits as the error does
    stopped = status.status_of_stop(err)
    attempt_exit = outcome.exit_code_of(stopped, err.to_dict())
    if row.stops_as is not None or row.exit in status.MACHINE_FAULTS:
        assert attempt_exit == exit_code
    else:
        assert (stopped, attempt_exit) == (AttemptStatus.FAILED, CODE["failed"])
    # the answer over HTTP is the table's
    app = FastAPI(exception_handlers=HANDLERS)

    @app.get("/boom")
    def boom() -> None:
        raise err

    with TestClient(app) as client:
        answer = client.get("/boom")
    assert answer.status_code == http
    assert answer.json()["error"]["code"] == cls.code


def test_issue28_a_graph_traversal_exits_by_the_table() -> None:
    from frostline.cli import graph as cli_graph
    from frostline.graph.engine import TraversalStatus as Traversal

    assert set(status.GRAPH_EXIT) == {str(s) for s in Traversal}
    assert {Traversal.ACCEPTED: CODE["ok"], Traversal.REJECTED: CODE["failed"],
                                Traversal.STUCK: CODE["stuck"], Traversal.STEP_LIMIT: CODE["stuck"]} == cli_graph._CODES


def test_issue28_every_row_names_a_registered_error() -> None:
    kinds = [row.kind for row in status.ERRORS]
    assert len(kinds) == len(set(kinds))
    assert all(registered()[k.code] is k for k in kinds)
    # a subclass whose meaning differs is checked before its base
    for i, row in enumerate(status.ERRORS):
        for later in status.ERRORS[i + 1:]:
            assert not issubclass(later.kind, row.kind), (later.kind, row.kind)
