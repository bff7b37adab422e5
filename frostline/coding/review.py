"""REVIEW and VALIDATE: a deterministic critic of a patch, and the acceptance policy.

The critic counts verified defects a reader would object to, from the patch and the base alone:
a change larger than `MAX_CHANGED_LINES` lines, more than `MAX_FILES` files touched, a test or
non-Python file touched, a definition removed, a docstring removed. (A patch that reaches REVIEW
has already been applied by EDIT, which refuses test files and unparsable results, so those two
are a second line.) An optional model review (`model_review`) adds the model's concerns as notes;
they are not verified defects, so they never open or close the gate.

With the overfit guards (`frostline.coding.guards`), a degenerate rewrite (a decision rewritten
into a constant, `frostline.coding.overfit`) is a verified defect too, counted in `degenerate`,
and VALIDATE's acceptance rests on a run of the whole visible suite on the patch in force
(`suite`: REGRESSION's when it ran on this patch, else one VALIDATE made): `suite_checked` is
how many tests that run checked, 0 when there was none.

VALIDATE accepts when the failing tests pass, the full suite shows no regression and the review
found no verified defect; when the task's failing tests still fail after a patch that passed
REVIEW, the failure implicates the diagnosis (the rollback goes back to LOCALIZE), otherwise the
patch (back to REPAIR).
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from collections.abc import Mapping
from typing import Any

from frostline.coding.manifest import is_test_file
from frostline.coding.overfit import degenerate
from frostline.coding.workspace import PatchRefused, Workspace

MAX_CHANGED_LINES = 40
MAX_FILES = 3


def _definitions(text: str) -> tuple[set[str], int]:
    """The names a module defines (functions, classes, methods) and how many docstrings."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return set(), 0
    names, docs = set(), 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            docs += ast.get_docstring(node) is not None
    return names, docs


def critic(patch: Mapping[str, Any], ws: Workspace, *, guards: bool = False) -> dict[str, Any]:
    """The Review artifact: `verified_defects` (a count), `notes` (one line each) and
    `degenerate` (the degenerate rewrites, verified defects when `guards` is on)."""
    notes: list[str] = []
    try:
        new = ws.check_patch(patch)
    except PatchRefused as exc:
        return {"verified_defects": 1, "notes": [f"refused: {exc.message}"], "changed_lines": 0,
                "files": 0, "degenerate": 0}
    rewrites = [f"{rel} {why}" for rel, text in sorted(new.items()) if rel.endswith(".py")
                for why in degenerate(ws.base_texts([rel])[rel], text)]
    base = ws.base_texts(list(new))
    changed = 0
    for rel, text in new.items():
        if is_test_file(rel) or not rel.endswith(".py"):
            notes.append(f"touches {rel}, which is not repository source")
        diff = difflib.unified_diff(base[rel].splitlines(), text.splitlines(), lineterm="", n=0)
        changed += sum(1 for d in diff if d[:1] in "+-" and d[:3] not in ("+++", "---"))
        (names_before, docs_before), (names_after, docs_after) = \
            _definitions(base[rel]), _definitions(text)
        for gone in sorted(names_before - names_after):
            notes.append(f"removes the definition {gone} from {rel}")
        lost_docs = docs_before - docs_after
        if lost_docs > 0:
            notes.append(f"removes {lost_docs} docstring(s) from {rel}")
    if changed > MAX_CHANGED_LINES:
        notes.append(f"changes {changed} lines (more than {MAX_CHANGED_LINES}) for one bug")
    if len(new) > MAX_FILES:
        notes.append(f"touches {len(new)} files (more than {MAX_FILES})")
    if guards:
        notes += [f"degenerate rewrite: {r}" for r in rewrites]
    return {"verified_defects": len(notes), "notes": notes, "changed_lines": changed,
            "files": len(new), "degenerate": len(rewrites)}


REVIEW_PROMPT = """You review a one-bug patch to a Python repository. Reply with one JSON object:
{"concerns": ["...", ...]} listing concrete problems the diff introduces (an empty list when
there are none)."""


def model_review(chat: Any, diff: str) -> tuple[list[str], str]:
    """The model's concerns about `diff` (notes only: a model's concern is not a verified
    defect), and an error string when the model failed or answered garbage."""
    try:
        reply = chat.complete([{"role": "system", "content": REVIEW_PROMPT},
                               {"role": "user", "content": diff[:8000]}])
    except Exception as exc:  # the optional review never fails the state
        return [], f"{type(exc).__name__}: {exc}"[:300]
    match = re.search(r"\{.*\}", str(getattr(reply, "text", "")), re.S)
    try:
        concerns = json.loads(match.group(0)).get("concerns", []) if match else None
    except (ValueError, AttributeError):
        concerns = None
    if not isinstance(concerns, list):
        return [], "the model's review was not the JSON asked for"
    return [f"model: {str(c)[:300]}" for c in concerns[:10]], ""


def validate(tests: Mapping[str, Any] | None, regression: Mapping[str, Any] | None,
             review: Mapping[str, Any] | None, suite: Mapping[str, Any] | None = None
             ) -> dict[str, Any]:
    """The ValidationResult of the evidence gathered for the patch in force; with `suite` (the
    overfit guard: a whole-suite run of that patch, `checked` tests, `failed_tests` among
    them) acceptance also needs that run to exist and to fail nothing."""
    reasons: list[str] = []
    checked = int((suite or {}).get("checked", 0) or 0)
    if suite is not None:
        if not checked:
            reasons.append("no run of the whole visible suite checked the patch in force")
        elif suite.get("failed_tests"):
            reasons.append("the whole visible suite fails on the patch in force: "
                           + ", ".join(list(suite["failed_tests"])[:5]))
    if not tests or tests.get("failed", 1) != 0:
        reasons.append("the task's failing tests do not all pass")
    if not regression or regression.get("regressions", 1) != 0:
        reasons.append("the full suite shows regressions")
    elif regression.get("still_failing"):
        reasons.append("tests that failed before the patch still fail")
    if not review or review.get("verified_defects", 1) != 0:
        reasons.append("the review found verified defects")
    implicates = int(tests is not None and tests.get("failed", 0) != 0 and review is not None
                     and review.get("verified_defects", 1) == 0)
    return {"accepted": int(not reasons), "implicates_diagnosis": implicates, "reasons": reasons,
            "suite_checked": checked}
