"""The authoring loop: from a task to a script the checker accepts.

The model reads the skill document, the catalog of the configuration in force as typed Python
stubs (frostline.repair.signatures) and the envelope, and writes
`async def orchestrate(ctx, args)`. Each reply is judged as the host would judge a script it is
asked to run: the code block is extracted (prose without code is refused) and every checker
rule runs, the envelope's included (R11: granted capabilities, the static spend bound against
the budget). A refused draft goes back to the model as a structured counterexample (each
finding's rule, line and hint, and the draft), in a prompt rebuilt from scratch so its size
stays bounded. The first draft plus at most `max_rewrites` rewrites are asked for.

Shaped like the repair loop (frostline.repair.loop): a generator that yields prompts and takes
replies, so it is tested against scripted replies, and driven by any model client::

    loop = author_loop(task)
    messages = next(loop)
    messages = loop.send(reply)            # ... until StopIteration(AuthorResult)

Running an accepted script is the caller's decision (`frostline author --run`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.errors import DefinitionError, FrostlineError
from frostline.repair.completion import ChatClient, Reply
from frostline.repair.extract import extract_code
from frostline.repair.feedback import RewriteFeedback, Usage
from frostline.repair.prompt import Message, build_author_messages
from frostline.repair.signatures import render_signatures
from frostline.script import check

MAX_TASK_CHARS = 20_000
DEFAULT_MAX_REWRITES = 2


@dataclass(frozen=True)
class AuthorTask:
    """What the model is asked to write a script for, and under which catalog and envelope."""

    task: str
    catalog: Catalog = DEFAULT_CATALOG
    envelope: Envelope | None = None
    args: Mapping[str, Any] | None = None
    max_rewrites: int = DEFAULT_MAX_REWRITES

    def __post_init__(self) -> None:
        if not isinstance(self.task, str) or not self.task.strip():
            raise DefinitionError("the task is empty: say what the script should do, e.g. "
                                  "'a 4-shot storyboard and one image per shot for args.brief'",
                                  field="task")
        if len(self.task) > MAX_TASK_CHARS:
            raise DefinitionError(f"the task is {len(self.task)} characters; the cap is "
                                  f"{MAX_TASK_CHARS} (the prompt must stay bounded)",
                                  field="task")
        if not isinstance(self.max_rewrites, int) or isinstance(self.max_rewrites, bool) \
                or self.max_rewrites < 0:
            raise DefinitionError("max_rewrites must be an integer >= 0, got "
                                  f"{self.max_rewrites!r}", field="max_rewrites")


@dataclass(frozen=True)
class Draft:
    """The verdict on one reply: the checker's findings, the tokens the endpoint reported and
    the wall time of the model call (None when the caller did not time it)."""

    n: int
    ok: bool
    reason: str
    violations: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=dict)
    wall_s: float | None = None
    candidate: str | None = None

    def feedback(self) -> RewriteFeedback:
        return RewriteFeedback(self.n, self.ok, self.reason, self.violations, [], self.usage,
                               self.candidate)

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "ok": self.ok, "reason": self.reason,
                "violations": list(self.violations), "usage": dict(self.usage),
                "wall_s": None if self.wall_s is None else round(self.wall_s, 6),
                "candidate": self.candidate}


@dataclass(frozen=True)
class AuthorResult:
    """The accepted script (None when every draft was refused) and every draft's verdict."""

    accepted: str | None
    rewrites: list[Draft]
    usage_total: Usage

    @property
    def wall_s(self) -> float:
        return sum(d.wall_s or 0.0 for d in self.rewrites)

    def to_dict(self) -> dict[str, Any]:
        return {"accepted": self.accepted, "rewrites": [d.to_dict() for d in self.rewrites],
                "usage_total": dict(self.usage_total), "wall_s": round(self.wall_s, 6)}


@dataclass(frozen=True)
class TimedReply:
    """A reply with the wall time of the call that produced it (what `author` sends)."""

    text: str
    usage: Any
    wall_s: float


def author_loop(task: AuthorTask) -> Generator[list[Message], str | Reply, AuthorResult]:
    """The loop as a generator: yields prompts, receives replies, returns the AuthorResult."""
    envelope = task.envelope or Envelope()
    grants = envelope.grant_set(task.catalog)
    catalog_python = render_signatures(task.catalog, grants)
    shown = _envelope_shown(envelope)
    drafts: list[Draft] = []
    previous: Draft | None = None
    for n in range(1, task.max_rewrites + 2):
        try:
            reply = yield build_author_messages(
                task=task.task, catalog_python=catalog_python, envelope=shown, args=task.args,
                previous=previous.feedback() if previous is not None else None)
        except FrostlineError as exc:  # the model call failed: its error tells what was paid
            exc.fields.setdefault("author", AuthorResult(None, drafts, _total(drafts)).to_dict())
            raise
        draft = judge(n, reply, task)
        drafts.append(draft)
        if draft.ok:
            return AuthorResult(draft.candidate, drafts, _total(drafts))
        previous = draft
    return AuthorResult(None, drafts, _total(drafts))


def judge(n: int, reply: str | Reply, task: AuthorTask) -> Draft:
    """Check one reply: a code block, then every checker rule under the task's envelope."""
    text, usage, wall_s = _unpack(reply)
    code = extract_code(text)
    if code is None:
        return Draft(n, False, "no code block: reply with the complete script in one "
                     "```python code block", usage=usage, wall_s=wall_s)
    report = check(code, task.envelope, rules="all", catalog=task.catalog)
    violations = [v.to_dict() for v in report.violations]
    if not report.valid:
        rules = ", ".join(sorted({v.rule for v in report.errors}))
        return Draft(n, False, f"the checker rejected it ({rules})", violations, usage,
                     wall_s, code)
    return Draft(n, True, "accepted", violations, usage, wall_s, code)


def author(client: ChatClient, task: AuthorTask, *,
           clock: Callable[[], float] = time.monotonic) -> AuthorResult:
    """Drive `author_loop` with a model client (at most 1 + `task.max_rewrites` calls), timing
    each call with `clock`. A model error (frostline.repair.ModelError) propagates, carrying
    the report of the drafts before it under `author` (what was paid, and why each was refused).

    Example: ``author(model_client("openai:gpt-4o-mini"), AuthorTask("a fox video")).accepted``
    """
    loop = author_loop(task)
    try:
        messages = next(loop)
        while True:
            started = clock()
            try:
                reply = client.complete(messages)
            except FrostlineError as exc:
                loop.throw(exc)  # adds the drafts so far (`author`) to the error, re-raised
                raise
            messages = loop.send(TimedReply(reply.text, reply.usage, clock() - started))
    except StopIteration as stop:
        result: AuthorResult = stop.value
        return result


def _envelope_shown(envelope: Envelope) -> dict[str, Any]:
    shown = envelope.to_dict()
    if envelope.grants is None:
        shown["grants"] = "every capability of the catalog"
    return shown


def _unpack(reply: str | Reply) -> tuple[str, Usage, float | None]:
    if isinstance(reply, str):
        return reply, {}, None
    usage: Any = getattr(reply, "usage", None)
    to_dict = getattr(usage, "to_dict", None)
    if callable(to_dict):
        usage = to_dict()
    wall = getattr(reply, "wall_s", None)
    return (reply.text, dict(usage) if isinstance(usage, Mapping) else {},
            float(wall) if isinstance(wall, int | float) else None)


def _total(drafts: list[Draft]) -> Usage:
    total: Usage = {}
    for d in drafts:
        for key, value in d.usage.items():
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[key] = total.get(key, 0) + value
    return total
