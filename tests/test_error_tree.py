"""Issue 28 §1: one error tree. Every FrostlineError subclass is defined in frostline.errors,
registered under a code of its own, and comes back from its JSON shape as itself."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import frostline
from frostline import errors
from frostline.errors import FrostlineError, ProviderCrashed, ProviderError, RunExists
from frostline.service.error_handlers import HANDLERS


def _import_all() -> None:
    for mod in pkgutil.walk_packages(frostline.__path__, "frostline."):
        if mod.name.endswith("__main__") or ".scripts" in mod.name:
            continue
        try:
            importlib.import_module(mod.name)
        except ImportError:  # an optional extra that is not installed
            continue


def _tree() -> list[type[FrostlineError]]:
    _import_all()
    found: list[type[FrostlineError]] = [FrostlineError]
    todo = [FrostlineError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("frostline.") and sub not in found:
                found.append(sub)
                todo.append(sub)
    return found


TREE = _tree()


def test_issue28_every_error_is_defined_in_errors_py() -> None:
    elsewhere = [f"{c.__module__}.{c.__qualname__}" for c in TREE
                 if c.__module__ != "frostline.errors"]
    assert elsewhere == []
    # and no module declares one where the walk could miss it (a module not imported)
    names = {c.__name__ for c in TREE}
    for path in Path(frostline.__file__).parent.rglob("*.py"):
        if path.name == "errors.py" and path.parent.name == "frostline":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "")
                         for b in node.bases}
                assert not bases & names, f"{path}: class {node.name} is an error"


def test_issue28_every_error_is_registered_under_a_code_of_its_own() -> None:
    registered = errors.registered()
    for cls in TREE:
        assert "code" in cls.__dict__, f"{cls.__name__} declares no code of its own"
        assert registered[cls.code] is cls
    codes = [c.code for c in TREE]
    assert len(codes) == len(set(codes))
    # and the docstring's tree names each of them
    assert all(c.__name__ in (errors.__doc__ or "") for c in TREE)


def test_issue28_a_second_class_cannot_take_a_code() -> None:
    with pytest.raises(TypeError, match="taken by"):
        type("Impostor", (FrostlineError,), {"code": "run_not_found"})


def _instance(cls: type[FrostlineError], fields: dict[str, Any]) -> FrostlineError:
    if cls is errors.LimitExceeded:
        return cls("slow down", limit="runs", retry_after_s=3)
    return cls("it went wrong", **fields)


@pytest.mark.parametrize("cls", TREE, ids=lambda c: c.__name__)
def test_issue28_every_error_round_trips_as_itself(cls: type[FrostlineError]) -> None:
    err = _instance(cls, {"operation": "create_run", "outcome": "none", "run_id": "r1"})
    back = FrostlineError.from_dict(err.to_dict())
    assert type(back) is cls
    assert back.to_dict() == err.to_dict()
    assert back.code == err.to_dict()["code"] == cls.code
    if cls is not errors.StoreUnavailable and not issubclass(cls, errors.StoreUnavailable):
        assert (back.message, back.fields) == (err.message, err.fields)


def test_issue28_from_dict_keeps_what_old_records_say() -> None:
    # a record with only a type (hand-built before the registry) still comes back as it
    back = FrostlineError.from_dict({"type": "UnknownWait", "message": "no wait"})
    assert type(back) is errors.UnknownWait and back.message == "no wait"
    # a provider's own subclass travels as the nearest registered class
    assert type(FrostlineError.from_dict({"type": "MyError", "code": "provider"})) is ProviderError
    # what no class claims falls back to the caller's default
    assert type(FrostlineError.from_dict({"type": "Nope", "code": "nope"}, ProviderError)) \
        is ProviderError
    assert type(FrostlineError.from_dict({"code": "nope"})) is FrostlineError
    # a constructor that builds its message is not run again
    tests = errors.TestsDidNotRun("collection failed")
    assert FrostlineError.from_dict(tests.to_dict()).message == tests.message


def test_issue28_a_provider_exception_has_one_code() -> None:
    err = ProviderCrashed("provider for x failed: KeyError: 'k'")
    assert isinstance(err, ProviderError)
    assert err.code == err.to_dict()["code"] == "provider_exception"
    # and no error can carry a second code in its fields
    with pytest.raises(TypeError, match="class's"):
        ProviderError("x", code="provider_exception")


def test_issue28_orphans_and_crashes_are_named_errors() -> None:
    for code, cls in (("orphans", errors.OrphansFound), ("crashed", errors.HostCrashed)):
        assert errors.registered()[code] is cls and issubclass(cls, errors.RunError)


def test_issue28_run_name_taken_in_a_race_is_409(store) -> None:
    # The route checks the name first; a creation that slips past it meets the store's own
    # refusal, which must answer as the route's check does: 409, code `exists`.
    app = FastAPI(exception_handlers=HANDLERS)

    @app.post("/race")
    def race() -> None:
        store.create_run("twice", {}, owner="alice")
        store.create_run("twice", {}, owner="alice")

    with TestClient(app) as client:
        answer = client.post("/race")
    assert answer.status_code == 409
    body = answer.json()["error"]
    assert body["code"] == "exists" and body["type"] == RunExists.__name__
