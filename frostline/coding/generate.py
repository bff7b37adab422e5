"""GENERATE behind one interface: candidate patches for the plan's edit sites.

Two generators answer a `GenerationRequest` with candidate patches, each a list of
SEARCH/REPLACE edits relative to the base snapshot:

- `TemplateGenerator` (deterministic, no model: the empty-L path) applies the single-site
  operators of `frostline.coding.templates` at each site, in plan order;
- `ModelGenerator` asks an OpenAI-compatible chat model for `n` samples of SEARCH/REPLACE
  blocks. It is the state's single L entry: the GENERATE body calls it only through the
  `patch.generate` tool, so in a durable run the broker commits its reply under the call's
  structural identity and a resumed run replays it instead of asking the model again.

A candidate the request already tried (same digest) is never offered again.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from frostline.coding.templates import line_edits
from frostline.contract.identity import digest
from frostline.repair.completion import ChatClient

MAX_TEMPLATE_CANDIDATES = 160
_BLOCK = re.compile(r"(?P<file>[^\s`]+\.py)\s*\n(?:```[a-z]*\n)?<<<<<<< SEARCH\n(?P<search>.*?)\n?"
                    r"=======\n(?P<replace>.*?)\n?>>>>>>> REPLACE", re.S)


@dataclass(frozen=True)
class GenerationRequest:
    """What a generator sees: the ordered sites, the base text of their files, the diagnosis,
    the failing tests' messages, the digests of patches already tried, and how many samples."""

    sites: Sequence[Mapping[str, Any]]
    texts: Mapping[str, str]
    diagnosis: Mapping[str, Any] = field(default_factory=dict)
    failures: Sequence[Mapping[str, Any]] = ()
    exclude: frozenset[str] = frozenset()
    n: int = 1


@dataclass
class GenerationResult:
    candidates: list[dict[str, Any]]
    model_calls: int = 0
    tokens: int = 0
    malformed: int = 0
    error: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "model_calls": self.model_calls,
                "tokens": self.tokens, "malformed": self.malformed, "error": self.error}


class Generator(Protocol):
    name: str

    def generate(self, request: GenerationRequest) -> GenerationResult: ...


def patch_digest(edits: Sequence[Mapping[str, str]]) -> str:
    return digest([{"file": e["file"], "search": e["search"], "replace": e["replace"]}
                   for e in edits])


def candidate(edits: Sequence[Mapping[str, str]], generator: str, operator: str,
              site: str) -> dict[str, Any]:
    clean = [{"file": e["file"], "search": e["search"], "replace": e["replace"]} for e in edits]
    return {"edits": clean, "generator": generator, "operator": operator, "site": site,
            "digest": patch_digest(clean)}


class TemplateGenerator:
    """Single-site operator edits at each plan site (see `templates`)."""

    name = "template"

    def generate(self, request: GenerationRequest) -> GenerationResult:
        out: list[dict[str, Any]] = []
        for site in request.sites:
            file, line = str(site["file"]), int(site["line"])
            text = request.texts.get(file)
            if text is None:
                continue
            for e in line_edits(file, text, line):
                c = candidate([e], self.name, e["operator"], f"{file}:{line}")
                if c["digest"] not in request.exclude:
                    out.append(c)
                if len(out) >= MAX_TEMPLATE_CANDIDATES:
                    return GenerationResult(out)
        return GenerationResult(out)


SYSTEM = """You fix one bug in a Python repository. Answer with SEARCH/REPLACE blocks only:

path/to/file.py
<<<<<<< SEARCH
exact lines copied from the file
=======
the replacement lines
>>>>>>> REPLACE

SEARCH must match the file exactly. Never edit a test file. Keep the change minimal."""


def _excerpt(text: str, line: int, radius: int = 12) -> str:
    lines = text.splitlines()
    lo, hi = max(line - radius, 1), min(line + radius, len(lines))
    return "\n".join(f"{n:5d}  {lines[n - 1]}" for n in range(lo, hi + 1))


def prompt(request: GenerationRequest) -> list[dict[str, Any]]:
    """The messages of one sample: the diagnosis, the failures, the code around each site."""
    parts = [f"Diagnosis: {request.diagnosis.get('root_cause', '')}", "Failing tests:"]
    for f in list(request.failures)[:5]:
        parts.append(f"- {f.get('test')}: {str(f.get('message', ''))[:300]}")
    for site in list(request.sites)[:4]:
        file = str(site["file"])
        if file in request.texts:
            parts.append(f"\n{file} around line {site['line']} ({site.get('function', '')}):\n"
                         + _excerpt(request.texts[file], int(site["line"])))
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]


def parse_blocks(text: str) -> list[dict[str, str]]:
    """SEARCH/REPLACE blocks of a reply (an empty list when there is none)."""
    return [{"file": m.group("file").strip(), "search": m.group("search") + "\n",
             "replace": m.group("replace") + "\n" if m.group("replace") else ""}
            for m in _BLOCK.finditer(text)]


class ModelGenerator:
    """`n` samples of SEARCH/REPLACE edits from a chat model; malformed samples are counted
    and dropped, and one more sample is asked for each (at most `n` extra)."""

    name = "model"

    def __init__(self, model: ChatClient, *, rerequests: int = 1) -> None:
        self.model = model
        self.rerequests = rerequests

    def generate(self, request: GenerationRequest) -> GenerationResult:
        result = GenerationResult([])
        messages = prompt(request)
        budget = request.n + min(self.rerequests, request.n)
        while len(result.candidates) < request.n and result.model_calls < budget:
            result.model_calls += 1
            try:
                reply = self.model.complete(messages)
            except Exception as exc:  # a provider error ends the sampling, on the record
                result.error = f"{type(exc).__name__}: {exc}"[:500]
                break
            usage = getattr(reply, "usage", None)
            result.tokens += int(getattr(usage, "total_tokens", 0) or 0)
            edits = parse_blocks(str(getattr(reply, "text", "")))
            if not edits:
                result.malformed += 1
                continue
            c = candidate(edits, self.name, "model", str(request.sites[0]["file"])
                          if request.sites else "")
            if c["digest"] not in request.exclude and all(
                    c["digest"] != o["digest"] for o in result.candidates):
                result.candidates.append(c)
        return result
