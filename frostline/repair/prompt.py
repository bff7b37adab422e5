"""Prompt assembly for the repair loop.

The model sees everything it needs to write a candidate that the host will accept, and nothing
it could use to escape the contract: the capability catalog (only the granted capabilities),
a short skill document (the language, the five primitives, the rules, the frozen-site rule),
the frozen sites with their source lines, the committed script, the structured failure of the
last attempt, and, from the second rewrite on, the previous candidate with the reasons it was
refused. Each prompt is rebuilt from scratch rather than grown as a conversation, so its size
stays bounded whatever the number of rewrites.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from frostline.capabilities.catalog import Catalog
from frostline.repair.signatures import render_signatures

if TYPE_CHECKING:
    from frostline.contract.gate import FrozenSite
    from frostline.repair.feedback import RewriteFeedback

Message = dict[str, str]

_SYSTEM_HEAD = (
    "You revise orchestration scripts for frostline, a runtime that executes model-written "
    "workflow scripts and charges for every capability call. Follow the skill document exactly."
)


@cache
def skill() -> str:
    """The skill document shipped with the package (frostline/repair/skill.md)."""
    return resources.files("frostline.repair").joinpath("skill.md").read_text(encoding="utf-8")


def render_catalog(catalog: Catalog, grants: Collection[str] | None = None) -> str:
    """One line per granted capability: name, effect class, price and payload fields (a
    compact listing; the prompts show `render_signatures`, the typed stubs)."""
    lines = []
    for cap in catalog:
        if grants is not None and cap.name not in grants:
            continue
        schema = cap.input_schema
        props: Mapping[str, Any] = schema.get("properties", {}) or {}
        required = set(schema.get("required", []) or [])
        fields = ", ".join(
            f"{name}{'' if name in required else '?'}: {_type_of(spec)}"
            for name, spec in props.items()) or "any JSON object"
        effect = "side-effecting" if cap.side_effecting else "read-only"
        lines.append(f"- `{cap.name}` ({effect}, ${cap.price_usd:g}/call): payload {{{fields}}}"
                     + (f" — {cap.description}" if cap.description else ""))
    return "\n".join(lines) if lines else "(no capability is granted)"


def _type_of(spec: Any) -> str:
    if not isinstance(spec, Mapping):
        return "any"
    kind = spec.get("type", "any")
    if "enum" in spec:
        return " | ".join(json.dumps(v) for v in spec["enum"])
    if kind == "integer" and ("minimum" in spec or "maximum" in spec):
        return f"integer {spec.get('minimum', '')}..{spec.get('maximum', '')}"
    if kind == "string" and "pattern" in spec:
        return "artifact ref (sha256:…)" if "sha256" in spec["pattern"] else "string"
    return str(kind)


def render_frozen(frozen: Mapping[str, FrozenSite]) -> str:
    """The frozen sites in source order, each with its committed source line."""
    if not frozen:
        return "(none: nothing has been committed yet, every call may change)"
    rows = sorted(frozen.values(), key=lambda f: (f.line, f.site))
    return "\n".join(
        f"- {f.site} — {f.capability}, line {f.line}: `{f.source_line.strip()}`" for f in rows)


def render_feedback(feedback: RewriteFeedback) -> str:
    """Why the previous candidate was refused, in the order the host checked it."""
    parts = [f"Your previous candidate (rewrite {feedback.n}) was refused: {feedback.reason}."]
    for v in feedback.violations:
        if v.get("severity", "error") != "error":
            continue
        hint = f" Fix: {v['hint']}" if v.get("hint") else ""
        parts.append(f"- {v.get('rule')} at line {v.get('line')}: {v.get('message')}.{hint}")
    for ce in feedback.counterexamples:
        parts.append(f"- gate {ce.get('kind')}: {ce.get('message') or ce.get('site')}")
    if feedback.candidate is not None:
        parts.append("The refused candidate was:\n```python\n"
                     + feedback.candidate.rstrip("\n") + "\n```")
    return "\n".join(parts)


# The prompt's note on a run whose relocation policy is `rebind` (docs/contract.md).
RELOCATION_REBIND = (
    "## Relocation policy of this run: rebind\n\n"
    "Moving a frozen call is allowed when its request is unchanged: you may move it into a "
    "helper, wrap it in a block, or compute its payload another way, as long as it sends the "
    "same capability with the same payload, and every moved call is reached before any new "
    "call. A dry replay checks this before anything is spent and replays the moved calls for "
    "free; a changed payload is still refused.")


def build_messages(*, catalog: Catalog, frozen: Mapping[str, FrozenSite],
                   committed_source: str, failure: Mapping[str, Any] | None,
                   previous: RewriteFeedback | None = None,
                   grants: Collection[str] | None = None,
                   relocation: str = "stop") -> list[Message]:
    """The chat messages for one rewrite.

    Example: ``client.complete(build_messages(catalog=cat, frozen=fm, committed_source=src,
    failure=attempt.error))``
    """
    system = "\n\n".join([
        _SYSTEM_HEAD,
        skill().strip(),
        "## Capability catalog (granted to this run)\n\nEach stub documents one capability; "
        "call it as its docstring's `Call:` line shows.\n\n```python\n"
        + render_signatures(catalog, grants).rstrip("\n") + "\n```",
    ])
    failure_text = (json.dumps(dict(failure), indent=2, sort_keys=True, default=str)
                    if failure else "(no structured failure was recorded)")
    sections = [
        "The script below ran and failed. Write a corrected script.",
        "## Frozen sites (committed and paid for; keep each call exactly as it is)\n\n"
        + render_frozen(frozen),
        "## Committed script\n\n```python\n" + committed_source.rstrip("\n") + "\n```",
        "## Failure of the last attempt\n\n```json\n" + failure_text + "\n```",
    ]
    if relocation == "rebind":
        sections.append(RELOCATION_REBIND)
    if previous is not None:
        sections.append("## Feedback on your previous candidate\n\n" + render_feedback(previous))
    sections.append("Reply with the complete revised script in one ```python code block.")
    return [{"role": "system", "content": system},
            {"role": "user", "content": "\n\n".join(sections)}]


# ------------------------------------------------------------------------------- authoring
_AUTHOR_HEAD = (
    "You write orchestration scripts for frostline, a runtime that executes model-written "
    "workflow scripts and charges for every capability call. Follow the skill document "
    "exactly; the checker rejects a script that breaks a rule, and you will be shown why.")

# What the prompt quotes back of a refused draft and of its findings: each prompt is rebuilt
# from scratch, and these caps keep it bounded whatever the model wrote.
MAX_QUOTED_DRAFT = 16_000
MAX_QUOTED_VIOLATIONS = 20


def authoring_skill() -> str:
    """The skill document without its repair section (there is nothing frozen to keep yet)."""
    return skill().split("\n## Revising", 1)[0].strip()


def build_author_messages(*, task: str, catalog_python: str, envelope: Mapping[str, Any],
                          args: Mapping[str, Any] | None,
                          previous: RewriteFeedback | None = None) -> list[Message]:
    """The chat messages for one authoring draft: the skill, the catalog as typed stubs, the
    envelope, the task and, after a refusal, the refused draft with the checker's findings.

    Example: ``build_author_messages(task="a fox video", catalog_python=render_signatures(cat),
    envelope=Envelope().to_dict(), args=None)``
    """
    system = "\n\n".join([
        _AUTHOR_HEAD,
        authoring_skill(),
        "## Capability catalog (granted to this run)\n\nEach stub documents one capability; "
        "call it as its docstring's `Call:` line shows.\n\n```python\n"
        + catalog_python.rstrip("\n") + "\n```",
    ])
    sections = [
        "## Task\n\n" + task.strip(),
        "## Envelope (what the run may spend)\n\n```json\n"
        + json.dumps(dict(envelope), indent=2, sort_keys=True, default=str) + "\n```",
        "## Arguments\n\n"
        + ("The script receives `args` =\n```json\n"
           + json.dumps(dict(args), indent=2, sort_keys=True, default=str) + "\n```"
           if args else "The script receives `args` = {} (no arguments were given)."),
    ]
    if previous is not None:
        sections.append("## Why your previous draft was refused\n\n"
                        + render_counterexample(previous))
    sections.append("Write `async def orchestrate(ctx, args)` for the task. Reply with the "
                    "complete script in one ```python code block.")
    return [{"role": "system", "content": system},
            {"role": "user", "content": "\n\n".join(sections)}]


def render_counterexample(feedback: RewriteFeedback) -> str:
    """A refused draft as the checker saw it: each finding's rule, line and hint, then the
    draft (both capped)."""
    parts = [f"Draft {feedback.n} was refused: {feedback.reason}."]
    errors = [v for v in feedback.violations if v.get("severity", "error") == "error"]
    for v in errors[:MAX_QUOTED_VIOLATIONS]:
        hint = f" Fix: {v['hint']}" if v.get("hint") else ""
        parts.append(f"- {v.get('rule')} at line {v.get('line')}: {v.get('message')}.{hint}")
    if len(errors) > MAX_QUOTED_VIOLATIONS:
        parts.append(f"- … and {len(errors) - MAX_QUOTED_VIOLATIONS} more finding(s)")
    if feedback.candidate is not None:
        draft = feedback.candidate.rstrip("\n")
        if len(draft) > MAX_QUOTED_DRAFT:
            draft = draft[:MAX_QUOTED_DRAFT] + "\n# … (cut: the draft was longer)"
        parts.append("The refused draft was:\n```python\n" + draft + "\n```")
    return "\n".join(parts)
