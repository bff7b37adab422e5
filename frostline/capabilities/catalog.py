"""The capability catalog: what a script may ask for, what it costs, whether it has effects.

The catalog is plain data. `DEFAULT_CATALOG` holds the nine shipped entries and the three
waits (`WAIT_CAPABILITIES`: calls whose result arrives from outside, answered by the host); users build their
own with `Catalog([...])` or `DEFAULT_CATALOG.extended(...)`, or load one from JSON with
`Catalog.from_json`. Nothing in frostline reads a global registry: the catalog is passed in.

Effect classes, the distinction crash handling makes (`Capability.effect`):

- ``read_only`` (``side_effecting=False``): no effect; re-executed after a crash, and a semantic
  repeat only warns under the ``auto`` ledger policy;
- ``idempotent`` (``side_effecting=True, retry_safe=True``): has an effect, but repeating it
  with the same payload adds none (an MCP tool's ``idempotentHint``), so a call left unresolved
  by a crash is retried automatically;
- ``side_effecting``: a call left unresolved fails closed until an operator reconciles it.

`digest()` names a catalog by its content, so an attempt can record the catalog it ran under.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from frostline.errors import CatalogError

ARTIFACT_REF_PATTERN = r"^sha256:[0-9a-f]{64}$"
IMAGE_SIZES = ("512x512", "1024x1024", "1024x1536", "1536x1024")
EFFECTS = ("read_only", "idempotent", "side_effecting")
_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$")


@dataclass(frozen=True)
class Capability:
    """One named external effect.

    Example: ``Capability("echo", side_effecting=True, input_schema={"type": "object"}, price_usd=0.0)``
    """

    name: str
    side_effecting: bool
    input_schema: Mapping[str, Any]
    price_usd: float
    production: bool = True
    idempotency_keys: bool = False
    description: str = ""
    retry_safe: bool = False  # a repeat with the same payload has no further effect
    output_schema: Mapping[str, Any] | None = None  # JSON schema of the result, when declared
    # Each call is preceded by an implicit human approval (`approval = "required"` in the
    # configuration file) and dispatched only once approved.
    approval_required: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME.match(self.name):
            raise CatalogError(
                f"capability name {self.name!r} must be dotted lowercase words, e.g. 'image.generate'",
                capability=self.name,
            )
        if not isinstance(self.price_usd, int | float) or self.price_usd < 0:
            raise CatalogError(f"capability {self.name}: price_usd must be a non-negative number",
                               capability=self.name)
        if not isinstance(self.input_schema, Mapping) or self.input_schema.get("type") != "object":
            raise CatalogError(f"capability {self.name}: input_schema must be a JSON schema of type object",
                               capability=self.name)
        if self.output_schema is not None and not isinstance(self.output_schema, Mapping):
            raise CatalogError(f"capability {self.name}: output_schema must be a JSON schema",
                               capability=self.name)

    @property
    def effect(self) -> str:
        """One of EFFECTS: what a crash in the middle of this call means."""
        if not self.side_effecting:
            return "read_only"
        return "idempotent" if self.retry_safe else "side_effecting"

    def with_effect(self, effect: str) -> Capability:
        """A copy of this capability with the effect class `effect` (one of EFFECTS)."""
        if effect not in EFFECTS:
            raise CatalogError(f"capability {self.name}: effect must be one of "
                               f"{', '.join(EFFECTS)}, not {effect!r}", capability=self.name)
        return replace(self, side_effecting=effect != "read_only",
                       retry_safe=effect == "idempotent")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "side_effecting": self.side_effecting,
            "input_schema": dict(self.input_schema),
            "price_usd": self.price_usd,
            "production": self.production,
            "idempotency_keys": self.idempotency_keys,
            "description": self.description,
            "retry_safe": self.retry_safe,
            "effect": self.effect,
            "output_schema": None if self.output_schema is None else dict(self.output_schema),
            # Only when set, so the digest of every catalog without approvals is unchanged.
            **({"approval_required": True} if self.approval_required else {}),
        }

    @classmethod
    def from_dict(cls, data: Any) -> Capability:
        if not isinstance(data, Mapping):
            raise CatalogError("a capability entry is a JSON object")
        known = {"name", "side_effecting", "input_schema", "price_usd", "production",
                 "idempotency_keys", "description", "retry_safe", "effect", "output_schema",
                 "approval_required"}
        extra = set(data) - known
        if extra:
            raise CatalogError(f"unknown capability field(s): {', '.join(sorted(extra))}")
        missing = {"name", "side_effecting", "input_schema", "price_usd"} - set(data)
        if missing:
            raise CatalogError(f"capability entry is missing: {', '.join(sorted(missing))}")
        fields = {k: v for k, v in data.items() if k != "effect"}  # derived, not stored
        cap = cls(**fields)
        if "effect" in data and data["effect"] != cap.effect:
            raise CatalogError(f"capability {cap.name}: effect {data['effect']!r} contradicts "
                               "side_effecting/retry_safe", capability=cap.name)
        return cap


@dataclass(frozen=True)
class Catalog:
    """An immutable, ordered set of capabilities keyed by name."""

    entries: tuple[Capability, ...] = field(default_factory=tuple)
    _index: dict[str, Capability] = field(default_factory=dict, repr=False, compare=False)

    def __init__(self, entries: Iterable[Capability] = ()) -> None:
        items = tuple(entries)
        index: dict[str, Capability] = {}
        for cap in items:
            if cap.name in index:
                raise CatalogError(f"capability {cap.name} is declared twice", capability=cap.name)
            index[cap.name] = cap
        object.__setattr__(self, "entries", items)
        # Looked up on every call the broker admits (replays included), so a dict, not a scan.
        object.__setattr__(self, "_index", index)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._index

    def __getitem__(self, name: str) -> Capability:
        cap = self._index.get(name)
        if cap is None:
            raise CatalogError(
                f"unknown capability {name!r}; known: {', '.join(self.names())}", capability=name
            )
        return cap

    def __iter__(self) -> Iterator[Capability]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, name: str) -> Capability | None:
        return self._index.get(name)

    def names(self) -> list[str]:
        return [c.name for c in self.entries]

    def extended(self, *caps: Capability) -> Catalog:
        """Return a new catalog with `caps` added (a name already present is replaced)."""
        replaced = {c.name for c in caps}
        return Catalog([c for c in self.entries if c.name not in replaced] + list(caps))

    def to_json(self) -> str:
        return json.dumps([c.to_dict() for c in self.entries], indent=2)

    def entries_json(self) -> list[dict[str, Any]]:
        """Every entry as JSON data, sorted by name (the form an attempt records)."""
        return [c.to_dict() for c in sorted(self.entries, key=lambda c: c.name)]

    def digest(self) -> str:
        """'sha256:<hex>' of the sorted entries' canonical JSON: equal catalogs, equal digest."""
        return catalog_digest(self.entries_json())

    @classmethod
    def from_json(cls, text: str) -> Catalog:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CatalogError(f"catalog is not JSON: {exc}") from exc
        if not isinstance(data, list):
            raise CatalogError("a catalog file is a JSON list of capability objects")
        return cls(Capability.from_dict(d) for d in data)


def catalog_digest(entries: list[dict[str, Any]]) -> str:
    """The digest of recorded catalog entries, as `Catalog.digest` computes it."""
    text = json.dumps(entries, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _obj(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    props = {**required, **(optional or {})}
    return {"type": "object", "properties": props, "required": sorted(required),
            "additionalProperties": False}


_STR = {"type": "string", "minLength": 1, "maxLength": 20000}
_REF = {"type": "string", "pattern": ARTIFACT_REF_PATTERN}

_EVENT = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"}
_INSTANT = {"type": "string", "maxLength": 64,
            "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$"}
_YEAR_S = 366 * 24 * 3600

# The waits: read-only (reading an answer again has no effect), priced 0, counted against the
# `calls` budget like any call. No provider serves them: the host answers from the store.
WAIT_ENTRIES = (
    Capability("human.approve", False,
               _obj({"ask": _STR}, {"for": {"type": "string", "minLength": 1, "maxLength": 200},
                                    "data": {}}),
               0.0, description="Wait for a person's approval; result: {approved, by, reason, at}."),
    Capability("event.wait", False,
               _obj({"event": _EVENT},
                    {"timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": _YEAR_S}}),
               0.0, description="Wait for a named event; result: its JSON body, or "
               "{\"timed_out\": true, ...} after timeout_s."),
    Capability("timer.sleep", False,
               {"type": "object", "additionalProperties": False,
                "properties": {"seconds": {"type": "number", "minimum": 0, "maximum": _YEAR_S},
                               "until": _INSTANT},
                "oneOf": [{"required": ["seconds"]}, {"required": ["until"]}]},
               0.0, description="Sleep durably for seconds, or until an ISO instant; result: "
               "{woke_at, due_at}."),
)
WAIT_CAPABILITIES = frozenset(c.name for c in WAIT_ENTRIES)

DEFAULT_CATALOG = Catalog([
    Capability("storyboard.plan", False,
               _obj({"brief": _STR, "shots": {"type": "integer", "minimum": 1, "maximum": 64}},
                    {"style": _STR}),
               0.002, description="Plan a storyboard of N shots from a brief."),
    Capability("image.generate", True,
               # The size is a free string here on purpose: the provider, like a real API,
               # rejects an unsupported size with a 400 (the paper's E5 failure).
               _obj({"prompt": _STR, "size": {"type": "string", "minLength": 1, "maxLength": 32}},
                    {"seed": {"type": "integer", "minimum": 0, "maximum": 2**31 - 1}}),
               0.02, description=f"Generate one image; supported sizes: {', '.join(IMAGE_SIZES)}."),
    Capability("image.edit", True, _obj({"image": _REF, "prompt": _STR}), 0.02,
               description="Edit a stored image."),
    Capability("review.visual", False, _obj({"image": _REF}, {"criteria": _STR}), 0.001,
               description="Review an image; returns statistics and a verdict."),
    Capability("text.generate", False,
               _obj({"prompt": _STR}, {"max_tokens": {"type": "integer", "minimum": 1, "maximum": 32768}}),
               0.001, description="Generate text from a prompt."),
    Capability("video.generate", True,
               _obj({"prompt": _STR, "duration_s": {"type": "integer", "minimum": 1, "maximum": 60}}),
               0.50, production=False, description="Generate a video clip (catalog-only, dry run)."),
    Capability("video.edit", True, _obj({"video": _REF, "prompt": _STR}), 0.60, production=False,
               description="Edit a stored video (catalog-only, dry run)."),
    Capability("audio.generate", True,
               _obj({"prompt": _STR, "duration_s": {"type": "integer", "minimum": 1, "maximum": 600}}),
               0.05, production=False, description="Generate audio (catalog-only, dry run)."),
    Capability("echo", True, {"type": "object"}, 0.0,
               description="Return the payload; counts real executions (tests and examples)."),
    *WAIT_ENTRIES,
])
