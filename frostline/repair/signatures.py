"""The capability catalog rendered for a model as typed Python signatures with docstrings.

Code-writing models write best against an API they can read as code. Each capability becomes
one `async def` stub whose keyword-only parameters are the payload schema's fields (typed:
``Literal[...]`` for enums, ``int`` with its range in the docstring, ``str`` for an artifact
ref), whose docstring says how to call it (``await ctx.run("name", {...})``), what it costs,
its effect class and whether a person approves each call. The rendering is valid Python (a
test parses it), so a model can treat it as a module it imports from. The same text is what
`frostline catalog --python` prints and what the authoring and repair prompts quote.

Capability names are dotted (``image.generate``); the stub's name replaces the dots with
underscores, and the docstring's call line carries the real name. A payload field whose name
is not a Python identifier (``from``, ``dry-run``) turns the stub's parameters into one
``payload: dict[str, Any]`` with the fields listed in the docstring.
"""

from __future__ import annotations

import keyword
from collections.abc import Collection, Mapping
from typing import Any

from frostline.capabilities.catalog import Capability, Catalog

_HEADER = '''"""frostline capabilities: call each with `await ctx.run("<name>", {payload})`.

The stubs below only document names, payloads, prices and effects: never call a stub
directly and never import this module in a script.
"""
from typing import Any, Literal'''

_EFFECT_TEXT = {
    "read_only": "read_only (no effect; re-run after a crash)",
    "idempotent": "idempotent (has an effect; a repeat with the same payload adds none)",
    "side_effecting": "side_effecting (has an effect; never repeated without a person)",
}

_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool",
            "null": "None", "object": "dict[str, Any]"}


def render_signatures(catalog: Catalog, grants: Collection[str] | None = None) -> str:
    """The catalog (only `grants` when given) as a Python module of typed, documented stubs.

    Example: ``ast.parse(render_signatures(DEFAULT_CATALOG))``
    """
    stubs = [render_stub(cap) for cap in catalog if grants is None or cap.name in grants]
    if not stubs:
        stubs = ["# (no capability is granted)"]
    return "\n\n\n".join([_HEADER, *stubs]) + "\n"


def stub_name(name: str) -> str:
    """The Python name of a capability's stub: dots become underscores."""
    ident = name.replace(".", "_")
    return ident + "_" if keyword.iskeyword(ident) else ident


def render_stub(cap: Capability) -> str:
    """One capability as an `async def` with a docstring."""
    schema = cap.input_schema
    props: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    plain = all(isinstance(k, str) and k.isidentifier() and not keyword.iskeyword(k)
                for k in props)
    if props and plain:
        params = ", ".join(
            f"{k}: {annotation(v)}" + ("" if k in required else " = ...")
            for k, v in props.items())
        signature = f"*, {params}"
    else:
        signature = "payload: dict[str, Any]"
    returns = annotation(cap.output_schema) if cap.output_schema else "dict[str, Any]"
    fields = ", ".join(f'"{k}": ...' for k in props if k in required) or "..."
    lines = [cap.name + (f": {cap.description}" if cap.description else ""), ""]
    lines.append(f'Call: await ctx.run("{cap.name}", {{{fields}}})')
    lines.append(f"Price: ${cap.price_usd:g} per call.")
    lines.append(f"Effect: {_EFFECT_TEXT.get(cap.effect, cap.effect)}.")
    lines.append("Approval: a person approves each call before it is dispatched."
                 if cap.approval_required else "Approval: none.")
    notes = [f"    {k}{'' if k in required else ' (optional)'}: {note}"
             for k, v in props.items() if (note := _note(v))]
    if notes or (props and not plain):
        lines += ["", "Payload:"]
        lines += notes or [f"    {k}{'' if k in required else ' (optional)'}: "
                           f"{annotation(v)}" for k, v in props.items()]
    body = "\n".join(f"    {text}" if (text := _docstring_safe(line)) else ""
                     for line in lines).lstrip()
    return f'async def {stub_name(cap.name)}({signature}) -> {returns}:\n    """{body}\n    """'


def annotation(spec: Any) -> str:
    """The Python type of a JSON schema (a fallback of `Any` where the schema says little)."""
    if not isinstance(spec, Mapping):
        return "Any"
    if "enum" in spec and isinstance(spec["enum"], list) and spec["enum"]:
        return "Literal[" + ", ".join(_literal(v) for v in spec["enum"]) + "]"
    for key in ("anyOf", "oneOf"):
        if isinstance(spec.get(key), list) and spec[key]:
            return " | ".join(dict.fromkeys(annotation(s) for s in spec[key]))
    kind = spec.get("type")
    if isinstance(kind, list):
        parts = [annotation({**spec, "type": k}) for k in kind if isinstance(k, str)]
        return " | ".join(dict.fromkeys(parts)) or "Any"
    if kind == "array":
        return f"list[{annotation(spec.get('items'))}]"
    return _SCALARS.get(kind, "Any") if isinstance(kind, str) else "Any"


def _note(spec: Any) -> str:
    """What a field's type does not say: its range, pattern, length or description."""
    if not isinstance(spec, Mapping):
        return ""
    parts: list[str] = []
    if "minimum" in spec or "maximum" in spec:
        parts.append(f"{spec.get('minimum', '')}..{spec.get('maximum', '')}")
    pattern = spec.get("pattern")
    if isinstance(pattern, str):
        parts.append("an artifact ref 'sha256:<64 hex>'" if "sha256" in pattern
                     else f"matches {pattern}")
    if "maxLength" in spec:
        parts.append(f"at most {spec['maxLength']} characters")
    if "maxItems" in spec:
        parts.append(f"at most {spec['maxItems']} items")
    if isinstance(spec.get("description"), str) and spec["description"]:
        parts.append(spec["description"])
    return "; ".join(str(p) for p in parts)


def _literal(value: Any) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, int | float | str):
        return repr(value)
    return "Any"


def _docstring_safe(line: str) -> str:
    # A description is data from a configuration or an MCP server: keep it inside the string.
    text = " ".join(line.splitlines()) if line.strip() else ""
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
