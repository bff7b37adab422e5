"""``check``: the static checker of the script language (rules R00–R12, docs/script.md).

It parses the script once and never executes it. Phases:

1. the parse boundary (frostline.script.source) turns every malformed input into R00;
2. one walk (frostline.script.rules) collects violations, symbol tables, loops, containers
   and a cost tree;
3. resolution (frostline.script.resolve) decides what needs the whole script: free names,
   bounds, set iteration, unconsumed awaitables, recursion;
4. σ assignment (frostline.script.sites) and the static spend bound (frostline.script.spend);
5. with ``rules="all"``, the envelope rule R11: capability names must be string literals in
   the catalog and granted by the envelope, and the spend bound must fit the envelope's
   budget (USD and calls). ``rules="script"`` skips R11; the repair loop runs script rules
   only, and the host runs everything before a run starts.

The width cap of R05 is the envelope's ``max_fanout`` (64 without an envelope). At most
``MAX_VIOLATIONS`` violations are reported, sorted by position.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any

from frostline.capabilities.catalog import DEFAULT_CATALOG, Catalog
from frostline.capabilities.envelope import Envelope
from frostline.script.allowlists import DEFAULT_MAX_FANOUT, MAX_VIOLATIONS
from frostline.script.bounds import Bounds
from frostline.script.report import Facts, Report, SpendBound, Violation
from frostline.script.resolve import resolve
from frostline.script.rules import Analyzer
from frostline.script.sites import assign_sites
from frostline.script.source import SourceError, decode_source, parse_source, source_lines
from frostline.script.spend import Prior, new_spend, spend_bound
from frostline.script.walk import WalkState


def check(source: str, envelope: Envelope | dict[str, Any] | None = None, *,
          rules: str = "all", catalog: Catalog = DEFAULT_CATALOG,
          prior: Prior | None = None) -> Report:
    """Check a script statically and return every violation plus the facts.

    Args:
        source: the script text.
        envelope: an Envelope or its JSON dict; None means every catalog capability, the
            default budget and a max fanout of 64. A malformed dict raises EnvelopeError.
        rules: "all" (script and envelope rules) or "script" (skip R11).
        catalog: the capability catalog prices and names come from.
        prior: what the run did before this attempt (the identities committed per site, the
            dollars and calls spent). With it, R11 bounds the *new* spend (replays of the
            frozen prefix cost nothing) against what is left of the budget, and the facts
            carry `new_spend`; without it, the whole bound against the whole budget.

    Example: ``check(src).valid``; ``check(src, {"budget": {"usd": 1}}).violations``
    """
    if rules not in ("all", "script"):
        raise ValueError(f"rules must be 'all' or 'script', not {rules!r}")
    env = envelope if isinstance(envelope, Envelope) or envelope is None else \
        Envelope.from_dict(envelope, catalog)
    try:
        # The walk bounds its own depth, which saves a separate depth pass.
        tree = parse_source(source, check_depth=False)
        lines = source_lines(source)
        max_fanout = env.max_fanout if env is not None else DEFAULT_MAX_FANOUT
        an = Analyzer(tree, lines).run()
        bounds = Bounds(an.module)
        resolve(an, bounds, max_fanout)
        site_pairs = assign_sites(tree, lines, an.contains, an.site_keywords > 0, an.leaf_runs)
    except SourceError as exc:
        return _rejected(exc)
    except RecursionError:  # a last resort: every walk is bounded, this should not happen
        return _rejected(SourceError("script nests too deeply to analyse",
                                     "flatten deeply nested expressions"))
    entry = an.module.functions.get("orchestrate")
    spend = spend_bound(entry, bounds, catalog)
    fresh = None if prior is None else new_spend(
        entry, bounds, catalog, {id(call): info.site for call, info in site_pairs}, prior)
    if rules == "all":
        _envelope_rules(an, env or Envelope(), catalog, spend, fresh, prior)
    facts = _facts(an, bounds, site_pairs, spend, fresh)
    violations = _finish(an.violations)
    return Report(valid=not any(v.severity == "error" for v in violations),
                  violations=violations, facts=facts)


def _facts(an: WalkState, bounds: Bounds, site_pairs: list[tuple[ast.Call, Any]],
           spend: SpendBound, fresh: SpendBound | None) -> Facts:
    capabilities: Counter[str] = Counter()
    for _, info in site_pairs:
        if info.capability is not None:
            capabilities[info.capability] += 1
    loops = [{"function": r.func.qual, "line": r.line, "kind": r.kind, "bound": bounds.loop(r)}
             for r in an.module.loops if r.kind in ("for", "while", "comprehension")]
    containers = [{"function": r.func.qual, "line": r.line, "primitive": r.kind,
                   "width": bounds.loop(r)} for r in an.containers]
    return Facts(capabilities=dict(sorted(capabilities.items())),
                 call_expressions=len(site_pairs), sites=[info for _, info in site_pairs],
                 loops=loops, containers=containers, spend_bound=spend, new_spend=fresh)


def check_bytes(data: bytes, envelope: Envelope | dict[str, Any] | None = None, *,
                rules: str = "all", catalog: Catalog = DEFAULT_CATALOG) -> Report:
    """Like check(), for raw bytes: decoded as strict UTF-8, anything else is R00."""
    try:
        source = decode_source(data)
    except SourceError as exc:
        return _rejected(exc)
    return check(source, envelope, rules=rules, catalog=catalog)


def _rejected(exc: SourceError) -> Report:
    violation = Violation("R00", "error", exc.line, exc.col, exc.message, exc.hint)
    return Report(valid=False, violations=[violation], facts=Facts())


def _envelope_rules(an: WalkState, env: Envelope, catalog: Catalog, spend: SpendBound,
                    fresh: SpendBound | None, prior: Prior | None) -> None:
    granted = env.grant_set(catalog)
    for call in an.run_calls:
        first = call.args[0] if call.args else None
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            an.report("R11", first or call, "the capability name is not a string literal",
                      'name the capability literally: `await ctx.run("image.generate", {...})`')
        elif first.value not in catalog:
            an.report("R11", first, f"capability {first.value!r} is not in the catalog",
                      "use one of: " + ", ".join(catalog.names()))
        elif first.value not in granted:
            an.report("R11", first, f"capability {first.value!r} is not granted by the "
                      "envelope", "use one of the granted capabilities: "
                      + ", ".join(sorted(granted)))
    if not spend.bounded:
        return
    entry = an.module.functions.get("orchestrate")
    target: ast.AST = entry.node if entry is not None and entry.node is not None else an.tree
    for problem, hint in budget_problems(spend if fresh is None else fresh, env, prior):
        an.report("R11", target, problem, hint)


def budget_problems(bound: SpendBound, env: Envelope,
                    prior: Prior | None = None) -> list[tuple[str, str]]:
    """Why `bound` does not fit the budget, as (message, hint) pairs: the whole budget without
    `prior`; with it, what is left of the budget after what the run already spent, for the
    attempt's new calls (`bound` is then its `new_spend`)."""
    budget = env.budget
    out = []
    if prior is None:
        if bound.total_calls > budget.calls:
            out.append((f"the script can make up to {bound.total_calls} capability calls, "
                        f"above the envelope's budget of {budget.calls}", _CALLS_HINT))
        if bound.usd > budget.usd + 1e-9:
            out.append((f"the script can spend up to ${bound.usd:.4f}, above the envelope's "
                        f"budget of ${budget.usd:.4f}", _USD_HINT))
        return out
    calls_left, usd_left = budget.calls - prior.calls, budget.usd - prior.usd
    if bound.total_calls > calls_left:
        out.append((f"beyond the replays of its frozen prefix the script can make up to "
                    f"{bound.total_calls} new capability calls, above the {max(calls_left, 0)} "
                    f"left of the budget's {budget.calls} ({prior.calls} already made)",
                    _CALLS_HINT))
    if bound.usd > usd_left + 1e-9:
        out.append((f"beyond the replays of its frozen prefix the script can spend up to "
                    f"${bound.usd:.4f}, above the ${max(usd_left, 0.0):.4f} left of the "
                    f"budget's ${budget.usd:.4f} (${prior.usd:.4f} already spent)", _USD_HINT))
    return out


_CALLS_HINT = "lower the loop bounds or fanout widths, or raise budget.calls"
_USD_HINT = "lower the loop bounds or fanout widths, or raise budget.usd"


def _finish(violations: list[Violation]) -> list[Violation]:
    unique = list(dict.fromkeys(violations))
    unique.sort(key=lambda v: (v.line, v.col, v.rule))
    return unique[:MAX_VIOLATIONS]
