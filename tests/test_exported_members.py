"""The public surface, pinned (issue 28 §6, like httpx's tests/test_exported_members.py): every
package under frostline/ declares what it exports in `__all__`, the lists below are those
declarations exactly, every declared name exists, nothing the package defines itself is left
undeclared, and the root package exports exactly the names docs/python-api.md documents.

Changing a package's exports means changing its entry here, on purpose."""

from __future__ import annotations

import importlib
import re
import types
from pathlib import Path

import pytest

import frostline

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "frostline"

EXPORTS: dict[str, list[str]] = {
    "frostline": ["AsyncFrostline", "Authored", "Client", "Frostline", "__version__", "open",
                  "open_async"],
    "frostline.capabilities": ["ARTIFACT_REF_PATTERN", "DEFAULT_CATALOG", "IMAGE_SIZES",
                               "Artifact", "CallContext", "Capability", "Catalog", "Envelope",
                               "ProviderError", "capability"],
    "frostline.cli": ["COMMANDS", "LazyGroup", "main"],
    "frostline.contract": [],
    "frostline.demo": [],
    "frostline.embedded": ["default_log_path", "execute", "local_providers", "make_runner",
                           "open_capabilities", "repair"],
    "frostline.graph": [
        "ArtifactFreshness", "Budgets", "CheckResult", "Engine", "Freshness", "GatePredicate",
        "Graph", "GraphBuilder", "GraphRejected", "IllegalTool", "IllegalTransition", "Lattice",
        "WorkflowLedger", "LocalToolRouter", "MemorySink", "ModelClient", "Operator", "RunCounters",
        "RunResult", "SafetyInvariant", "SlotLimits", "SlotModel", "SlotReply", "SlotRequest",
        "StateContext", "StateContract", "EventLogSink", "TerminationReason", "ToolBoundary",
        "ToolCall", "ToolRouter", "Transition", "TransitionKind", "TraversalStatus", "check",
        "evaluate_gate", "exists", "load_graph", "model_body",
    ],
    "frostline.coding": [],
    "frostline.coding.tasks": [],
    "frostline.mcp": ["build_server"],
    "frostline.providers": [],
    "frostline.repair": ["ChatClient", "Completion", "ModelClient", "ModelError", "OpenAIChatClient",
                         "ReplayClient", "ReplayPolicy", "Usage", "client_from_spec",
                         "extract_code"],
    "frostline.runtime": [],
    "frostline.script": ["RULES", "Facts", "Prior", "Report", "SiteInfo", "SpendBound",
                         "Violation", "annotate", "check", "check_bytes", "fingerprint", "sites"],
    "frostline.service": [],
    "frostline.service.routes": [],
    "frostline.store": ["DEFAULT_URL", "ENV_VAR", "AttemptRecord", "CallRecord", "CallStatus",
                        "Event", "RunRecord", "SlotRecord", "Store", "open_store"],
    "frostline.testing": ["Delegating", "DirectTransport", "FaultyStore", "InProcessRunner"],
    "frostline.worker": ["JournaledStore", "LockJournal", "ProcrastinateQueue", "WorkerHost",
                         "WorkerSettings", "open_worker_store", "submit_attempt",
                         "submit_graph"],
}


def _packages() -> list[str]:
    found = []
    for init in sorted(PACKAGE_DIR.rglob("__init__.py")):
        parts = init.parent.relative_to(ROOT).parts
        if "__pycache__" in parts:
            continue
        found.append(".".join(parts))
    return found


def test_issue28_every_package_is_pinned():
    packages = set(_packages())
    assert packages - set(EXPORTS) == set(), (
        "a package without an entry in EXPORTS: declare its `__all__` and pin it here")
    assert set(EXPORTS) - packages == set(), "EXPORTS pins a package that no longer exists"


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_issue28_package_exports_are_pinned(name):
    module = importlib.import_module(name)
    declared = getattr(module, "__all__", None)
    assert declared is not None, f"{name} has no __all__: say what it exports"
    assert sorted(declared) == sorted(EXPORTS[name]), (
        f"{name}.__all__ changed: update EXPORTS if that is intended")
    assert len(set(declared)) == len(declared), f"{name}.__all__ names a member twice"
    for member in declared:
        assert getattr(module, member, None) is not None, f"{name}.{member} does not exist"


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_issue28_what_a_package_defines_it_declares(name):
    """A class, function or constant a package's `__init__` defines itself is public only if
    it is in `__all__`; an undeclared one must start with an underscore."""
    module = importlib.import_module(name)
    undeclared = []
    for member, value in vars(module).items():
        if member.startswith("_") or member in module.__all__:
            continue
        if isinstance(value, types.ModuleType):
            continue
        if getattr(value, "__module__", None) == name:
            undeclared.append(member)
    assert undeclared == [], f"{name} defines {undeclared} without declaring them in __all__"


def _documented_root_names() -> list[str]:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    section = re.search(r"^## What `import frostline` exports\n(.*?)(?=^## |\Z)", text,
                        re.S | re.M)
    assert section, "docs/python-api.md lost its section `What import frostline exports`"
    return re.findall(r"^\| `([A-Za-z_][A-Za-z0-9_]*)` \|", section.group(1), re.M)


def test_issue28_the_root_exports_exactly_what_the_docs_document():
    documented = _documented_root_names()
    assert sorted(documented) == sorted(frostline.__all__)
    for member in documented:
        assert hasattr(frostline, member), f"frostline.{member} is documented but missing"
    with pytest.raises(AttributeError):
        frostline.not_an_export  # noqa: B018  (the lazy __getattr__ refuses the rest)
