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
    """One line per granted capability: name, effect class, price and payload fields."""
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
        "## Capability catalog (granted to this run)\n\n" + render_catalog(catalog, grants),
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
