"""The gate on hand-built site lists: counterexample kinds, nearest site, frozen map, soundness."""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frostline.contract.gate import (
    FrozenSite,
    GateResult,
    frozen_map,
    gate,
    levenshtein,
    nearest_site,
    rebase,
)
from frostline.contract.records import AttemptRecord, SlotRecord
from frostline.errors import GateStopped, PrefixConflict, ScriptRejected
from frostline.runtime.gate_check import gate_source
from frostline.script import check, sites


@dataclass(frozen=True)
class Site:
    site: str
    capability: str | None
    fingerprint: str
    line: int


def fs(site: str, cap: str = "image.generate", fp: str = "f1", line: int = 3) -> FrozenSite:
    return FrozenSite(site, cap, fp, line, f"    x = await ctx.run({cap!r}, p)  # {site}")


FROZEN = {
    "orchestrate/#0": fs("orchestrate/#0", "storyboard.plan", "fa", 2),
    "orchestrate/#1": fs("orchestrate/#1", "image.generate", "fb", 4),
}


def test_accepts_identical_and_appended_sites():
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.generate", "fb", 4),
            Site("orchestrate/#2", "review.visual", "fc", 9)]
    result = gate(FROZEN, cand)
    assert result == GateResult(True, ())
    assert result.to_dict() == {"accepted": True, "counterexamples": []}
    result.raise_if_stopped()  # no error


def test_accepts_everything_when_nothing_is_frozen():
    assert gate({}, []).accepted
    assert gate({}, [Site("orchestrate/#0", "echo", "x", 1)]).accepted


def test_removed_with_relocated_nearest():
    # the a425 shape: the image call moved into a helper; same capability and fingerprint
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 5),
            Site("orchestrate.gen_one/#0", "image.generate", "fb", 2)]
    result = gate(FROZEN, cand)
    assert not result.accepted
    (ce,) = result.counterexamples
    assert ce.kind == "removed" and ce.site == "orchestrate/#1"
    assert ce.capability == "image.generate" and ce.line == 4
    assert "orchestrate/#1" in ce.source_line
    assert ce.nearest is not None
    assert (ce.nearest.site, ce.nearest.match, ce.nearest.line) == (
        "orchestrate.gen_one/#0", "relocated", 2)
    d = result.to_dict()["counterexamples"][0]
    assert {k: d[k] for k in ("kind", "site", "capability", "line")} == {
        "kind": "removed", "site": "orchestrate/#1", "capability": "image.generate", "line": 4}
    assert d["nearest"]["site"] == "orchestrate.gen_one/#0"
    assert "new callsite" in d["message"]


def test_capability_changed_names_the_new_capability():
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.edit", "fz", 4)]
    (ce,) = gate(FROZEN, cand).counterexamples
    assert ce.kind == "capability_changed"
    assert ce.found_capability == "image.edit"
    assert "image.edit" in ce.message
    # nothing else calls image.generate: the nearest falls back to the closest σ, which is σ itself
    assert ce.nearest is not None and ce.nearest.site == "orchestrate/#1"
    assert ce.nearest.match == "closest"


def test_call_changed_nearest_is_the_same_site():
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.generate", "CHANGED", 4)]
    (ce,) = gate(FROZEN, cand).counterexamples
    assert ce.kind == "call_changed"
    assert ce.nearest is not None
    assert (ce.nearest.site, ce.nearest.match) == ("orchestrate/#1", "same_capability")


def test_call_changed_by_a_shift_points_at_the_relocation():
    # a new image call inserted before the committed one shifts it from #1 to #2
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", "image.generate", "NEW", 3),
            Site("orchestrate/#2", "image.generate", "fb", 5)]
    (ce,) = gate(FROZEN, cand).counterexamples
    assert ce.kind == "call_changed"
    assert ce.nearest is not None and ce.nearest.site == "orchestrate/#2"
    assert ce.nearest.match == "relocated"


def test_all_three_kinds_at_once_sorted_by_line():
    frozen = {
        "orchestrate/#0": fs("orchestrate/#0", "storyboard.plan", "fa", 2),
        "orchestrate/#1": fs("orchestrate/#1", "image.generate", "fb", 4),
        "orchestrate/#2": fs("orchestrate/#2", "review.visual", "fc", 6),
    }
    cand = [Site("orchestrate/#0", "storyboard.plan", "XX", 2),
            Site("orchestrate/#1", "text.generate", "fb", 4)]
    result = gate(frozen, cand)
    assert [c.kind for c in result.counterexamples] == [
        "call_changed", "capability_changed", "removed"]
    with pytest.raises(GateStopped) as info:
        result.raise_if_stopped("run-1")
    err = info.value.to_dict()
    assert err["run_id"] == "run-1" and len(err["counterexamples"]) == 3
    assert "nothing was executed" in err["message"]


def test_removed_with_no_candidate_sites_has_no_nearest():
    (ce,) = gate({"orchestrate/#0": fs("orchestrate/#0")}, []).counterexamples
    assert ce.kind == "removed" and ce.nearest is None


def test_nearest_prefers_same_capability_then_shared_prefix_then_edit_distance():
    frozen = fs("orchestrate/for#0.body/#1", "image.generate", "fb")
    cand = [
        Site("orchestrate/#0", "text.generate", "t", 1),
        Site("orchestrate/if#0.body/#0", "image.generate", "other", 2),
        Site("orchestrate/for#0.body/#0", "image.generate", "other2", 3),
        Site("orchestrate/for#0.body/#7", "text.generate", "t2", 4),
    ]
    near = nearest_site(frozen, cand)
    assert near is not None
    assert (near.site, near.match) == ("orchestrate/for#0.body/#0", "same_capability")
    # no same-capability site: the closest σ by shared segments wins over a shorter string
    near = nearest_site(fs("orchestrate/for#0.body/#1", "video.edit"), [cand[0], cand[3], cand[1]])
    assert near is not None and near.site == "orchestrate/for#0.body/#7"
    assert near.match == "closest"
    # equal shared prefix: the smaller edit distance wins
    near = nearest_site(fs("orchestrate/if#1.body/#1", "video.edit"),
                        [Site("orchestrate/for#5.orelse/#3", "echo", "x", 1),
                         Site("orchestrate/if#0.body/#1", "echo", "y", 2)])
    assert near is not None and near.site == "orchestrate/if#0.body/#1"


def test_levenshtein():
    assert levenshtein("", "") == 0
    assert levenshtein("abc", "") == 3
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("orchestrate/#1", "orchestrate/#2") == 1


# ------------------------------------------------------------------------------ frozen_map


def _attempt(n: int, source: str, sites: list[dict[str, object]]) -> AttemptRecord:
    return AttemptRecord(run_id="r", number=n, source=source, source_digest="d", annotated=source,
                         report={"valid": True, "violations": [], "facts": {"sites": sites}},
                         status="failed")


def _slot(site: str, cap: str, attempt: int, occ: int = 0) -> SlotRecord:
    return SlotRecord("r", site, (), occ, cap, "h", {"ok": True}, {}, attempt)


SRC1 = "async def orchestrate(ctx, args):\n    a = await ctx.run('storyboard.plan', {})\n    b = await ctx.run('image.generate', {})\n"
SRC2 = "async def orchestrate(ctx, args):\n    # moved\n    a = await ctx.run('storyboard.plan', {})\n    b = await ctx.run('image.generate', {})\n    c = await ctx.run('echo', {})\n"


def test_frozen_map_uses_the_first_committing_attempt():
    a1 = _attempt(1, SRC1, [
        {"site": "orchestrate/#0", "capability": "storyboard.plan", "fingerprint": "fa", "line": 2},
        {"site": "orchestrate/#1", "capability": "image.generate", "fingerprint": "fb", "line": 3}])
    a2 = _attempt(2, SRC2, [
        {"site": "orchestrate/#0", "capability": "storyboard.plan", "fingerprint": "fa", "line": 3},
        {"site": "orchestrate/#1", "capability": "image.generate", "fingerprint": "fb", "line": 4},
        {"site": "orchestrate/#2", "capability": "echo", "fingerprint": "fc", "line": 5}])
    slots = [_slot("orchestrate/#1", "image.generate", 2, 1), _slot("orchestrate/#0", "storyboard.plan", 1),
             _slot("orchestrate/#1", "image.generate", 1), _slot("orchestrate/#2", "echo", 2)]
    fm = frozen_map(slots, [a2, a1])
    assert list(fm) == ["orchestrate/#0", "orchestrate/#1", "orchestrate/#2"]
    assert fm["orchestrate/#1"] == FrozenSite(
        "orchestrate/#1", "image.generate", "fb", 3, "    b = await ctx.run('image.generate', {})")
    assert fm["orchestrate/#2"].line == 5 and "echo" in fm["orchestrate/#2"].source_line
    assert frozen_map([], [a1]) == {}


def test_frozen_map_fails_closed():
    a1 = _attempt(1, SRC1, [
        {"site": "orchestrate/#0", "capability": "storyboard.plan", "fingerprint": "fa", "line": 2}])
    with pytest.raises(PrefixConflict, match="does not describe"):
        frozen_map([_slot("orchestrate/#1", "image.generate", 1)], [a1])
    with pytest.raises(PrefixConflict, match="does not have"):
        frozen_map([_slot("orchestrate/#0", "storyboard.plan", 7)], [a1])
    with pytest.raises(PrefixConflict, match="report has"):
        frozen_map([_slot("orchestrate/#0", "echo", 1)], [a1])
    broken = AttemptRecord("r", 1, SRC1, "d", SRC1, {"valid": False}, "rejected")
    with pytest.raises(PrefixConflict, match="no site list"):
        frozen_map([_slot("orchestrate/#0", "storyboard.plan", 1)], [broken])


# ------------------------------------------------------------------------------ properties

CAPS = st.sampled_from(["image.generate", "storyboard.plan", "echo", None])
SITE_NAMES = st.builds(
    lambda fn, block, j: f"{fn}{block}/#{j}",
    st.sampled_from(["orchestrate", "orchestrate.g0", "orchestrate.g1"]),
    st.sampled_from(["", "/for#0.body", "/for#1.body", "/if#0.body", "/if#0.orelse"]),
    st.integers(0, 5))
CANDIDATE = st.lists(st.builds(Site, SITE_NAMES, CAPS, st.sampled_from(["f1", "f2", "f3"]),
                               st.integers(1, 50)),
                     max_size=12, unique_by=lambda s: s.site)


@st.composite
def frozen_and_candidate(draw: st.DrawFn) -> tuple[dict[str, FrozenSite], list[Site]]:
    frozen_sites = draw(CANDIDATE)
    frozen = {s.site: FrozenSite(s.site, s.capability or "echo", s.fingerprint, s.line, "x")
              for s in frozen_sites}
    # the candidate: a random mixture of kept, edited and dropped frozen sites plus new sites
    cand: dict[str, Site] = {}
    for f in frozen.values():
        action = draw(st.sampled_from(["keep", "keep", "drop", "cap", "fp"]))
        if action == "keep":
            cand[f.site] = Site(f.site, f.capability, f.fingerprint, draw(st.integers(1, 99)))
        elif action == "cap":
            cand[f.site] = Site(f.site, draw(CAPS), f.fingerprint, f.line)
        elif action == "fp":
            cand[f.site] = Site(f.site, f.capability, draw(st.sampled_from(["f1", "f9"])), f.line)
    for extra in draw(CANDIDATE):
        cand.setdefault(extra.site, extra)
    return frozen, draw(st.permutations(list(cand.values())))


@given(frozen_and_candidate())
def test_gate_soundness(case):
    """Accepted ⇒ every frozen site is present with equal capability and fingerprint, and
    stopped ⇒ each counterexample names a frozen site that really differs."""
    frozen, cand = case
    result = gate(frozen, cand)
    by_site = {c.site: c for c in cand}
    intact = all(s in by_site and by_site[s].capability == f.capability
                 and by_site[s].fingerprint == f.fingerprint for s, f in frozen.items())
    assert result.accepted == intact
    assert result.accepted == (not result.counterexamples)
    for ce in result.counterexamples:
        f = frozen[ce.site]
        c = by_site.get(ce.site)
        if ce.kind == "removed":
            assert c is None
        elif ce.kind == "capability_changed":
            assert c is not None and c.capability != f.capability
        else:
            assert c is not None and c.capability == f.capability and c.fingerprint != f.fingerprint
        assert ce.nearest is None or ce.nearest.site in by_site
        if ce.nearest is not None and ce.nearest.match == "relocated":
            n = by_site[ce.nearest.site]
            assert (n.capability, n.fingerprint) == (f.capability, f.fingerprint)
            assert n.site != f.site
    assert len({c.site for c in result.counterexamples}) == len(result.counterexamples)


@given(CANDIDATE, CANDIDATE, st.randoms())
def test_preserving_edits_are_always_accepted(frozen_sites, extra, rnd):
    """Keeping every frozen site (any line, any order) and adding new sites is always accepted."""
    frozen = {s.site: FrozenSite(s.site, s.capability or "echo", s.fingerprint, s.line, "x")
              for s in frozen_sites}
    cand = [Site(f.site, f.capability, f.fingerprint, rnd.randint(1, 500)) for f in frozen.values()]
    cand += [e for e in extra if e.site not in frozen]
    rnd.shuffle(cand)
    assert gate(frozen, cand).accepted


# ------------------------------------------------------------------------------ real sources

SCRIPTS = Path(__file__).parent / "scripts"


def read(name: str) -> str:
    return (SCRIPTS / f"{name}.py").read_text()


def frozen_of(source: str) -> dict[str, FrozenSite]:
    """The maximal prefix: every capability call of `source` committed."""
    lines = source.splitlines()
    return {s.site: FrozenSite(s.site, s.capability or "", s.fingerprint, s.line,
                               lines[s.line - 1]) for s in sites(source)}


def apply(source: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert source.count(old) == 1, f"edit anchor {old!r} must occur once"
        source = source.replace(old, new)
    return source


# Table VII of the paper: seven deterministic edits on each script; the expected verdicts are
# the same on every script (cc = call_changed, rm = removed, yes = accepted).
TABLE_VII_EXPECTED = {
    "literal in payload": "call_changed",
    "computed payload": "call_changed",
    "statement outside the call": "yes",
    "insert a non-call statement": "yes",
    "wrap in a new block": "removed",
    "delete a call": "removed",
    "append a new call": "yes",
}
APPEND = '    caption = await ctx.run("text.generate", {"prompt": "a caption"})\n'
TABLE_VII_EDITS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "fanout_review": {
        "literal in payload": [('"shots": 4}', '"shots": 5}')],
        "computed payload": [('{"prompt": s["prompt"], "size"', '{"prompt": s["prompt"].upper(), "size"')],
        "statement outside the call": [('shots = plan["shots"][:4]', 'shots = plan["shots"][:3]')],
        "insert a non-call statement": [('    shots = plan', '    note = "retry"\n    shots = plan')],
        "wrap in a new block": [(
            '    review = await ctx.run("review.visual", {"image": images[0]["ref"]})\n',
            '    review = None\n    if images:\n'
            '        review = await ctx.run("review.visual", {"image": images[0]["ref"]})\n')],
        "delete a call": [(
            '    review = await ctx.run("review.visual", {"image": images[0]["ref"]})\n',
            '    review = None\n')],
        "append a new call": [('    return {"images"', APPEND + '    return {"images"')],
    },
    "scout_helper": {
        "literal in payload": [('"shots": 4}', '"shots": 6}')],
        "computed payload": [('{"prompt": s["prompt"]}', '{"prompt": s["prompt"] + " at dusk"}')],
        "statement outside the call": [('plan["shots"][:4]', 'plan["shots"][:3]')],
        "insert a non-call statement": [('    return await', '    count = len(plan["shots"])\n    return await')],
        "wrap in a new block": [
            ('    return await ctx.parallel(\n        [ctx.run(', '    if plan["shots"]:\n        return await ctx.parallel(\n            [ctx.run('),
            ('[:4]])\n', '[:4]])\n    return []\n')],
        "delete a call": [
            ('    return await ctx.parallel(\n        [ctx.run("image.generate", {"prompt": s["prompt"]}) for s in plan["shots"][:4]])\n',
             '    return plan\n')],
        "append a new call": [('    return await ctx.parallel(', '    images = await ctx.parallel('),
                              ('[:4]])\n', '[:4]])\n' + APPEND + '    return images\n')],
    },
    "sequential_loop": {
        "literal in payload": [('"size": "1024x1024"', '"size": "512x512"')],
        "computed payload": [('{"prompt": line, ', '{"prompt": line.strip(), ')],
        "statement outside the call": [('splitlines()[:4]', 'splitlines()[:3]')],
        "insert a non-call statement": [('    images = []\n', '    images = []\n    count = 0\n')],
        "wrap in a new block": [(
            '        image = await ctx.run("image.generate", {"prompt": line, "size": "1024x1024"})\n'
            '        images.append(image)\n',
            '        if line:\n'
            '            image = await ctx.run("image.generate", {"prompt": line, "size": "1024x1024"})\n'
            '            images.append(image)\n')],
        "delete a call": [(
            '    text = await ctx.run("text.generate", {"prompt": "Four shots for " + args["brief"]})\n',
            '    text = {"text": args["brief"]}\n')],
        "append a new call": [('    return images', APPEND + '    return images')],
    },
}


@pytest.mark.parametrize("script", sorted(TABLE_VII_EDITS))
@pytest.mark.parametrize("edit", list(TABLE_VII_EXPECTED))
def test_table_vii(script: str, edit: str) -> None:
    original = read(script)
    candidate = apply(original, *TABLE_VII_EDITS[script][edit])
    report = check(candidate, rules="script")
    assert report.valid, [v.to_dict() for v in report.violations]  # a realistic edit
    result = gate_source(frozen_of(original), candidate)
    expected = TABLE_VII_EXPECTED[edit]
    if expected == "yes":
        assert result.accepted, result.to_dict()
    else:
        assert not result.accepted
        assert {c.kind for c in result.counterexamples} == {expected}, result.to_dict()


def test_a425_relocation_is_removed_with_the_helper_as_nearest():
    original = read("scout_helper")
    result = gate_source(frozen_of(original), read("a425_repair"))
    assert not result.accepted
    (ce,) = result.counterexamples
    assert (ce.kind, ce.site, ce.capability) == ("removed", "orchestrate/#1", "image.generate")
    assert ce.line == 7 and 'ctx.run("image.generate"' in ce.source_line
    assert ce.nearest is not None and ce.nearest.match == "relocated"
    assert ce.nearest.site != "orchestrate/#1" and ce.nearest.line == 5
    # and the relocation keeps the capability multiset: only the gate sees the difference
    assert check(read("a425_repair"), rules="script").facts.capabilities == \
        check(original, rules="script").facts.capabilities


def test_gate_source_refuses_unparsable_candidates():
    with pytest.raises(ScriptRejected, match=r"does not parse.*line 2") as info:
        gate_source(frozen_of(read("scout_helper")), "async def orchestrate(ctx, args):\n    return (\n")
    assert info.value.fields["rule"] == "R00"
    with pytest.raises(ScriptRejected, match="does not parse"):
        gate_source({}, "x = '\0'")


def test_capability_changed_from_source():
    original = read("sequential_loop")
    candidate = original.replace('"text.generate", {"prompt": "Four', '"storyboard.plan", {"prompt": "Four')
    (ce,) = gate_source(frozen_of(original), candidate).counterexamples
    assert ce.kind == "capability_changed" and ce.found_capability == "storyboard.plan"


def test_frozen_map_from_a_real_report():
    """The stored report is Report.to_dict() of the checker: frozen_map reads it as is."""
    source = read("fanout_review")
    report = check(source).to_dict()
    attempt = AttemptRecord("r", 1, source, "d", source, report, "failed")
    slots = [_slot("orchestrate/#0", "storyboard.plan", 1),
             SlotRecord("r", "orchestrate/#1", (2,), 0, "image.generate", "h", {}, {}, 1)]
    fm = frozen_map(slots, [attempt])
    assert fm == {k: v for k, v in frozen_of(source).items() if k in fm}
    assert set(fm) == {"orchestrate/#0", "orchestrate/#1"}
    assert gate_source(fm, source).accepted


# ------------------------------------------------------------------------------ properties on source


def _comment_and_blank_noise(source: str, rnd: random.Random) -> str:
    out = []
    for line in source.splitlines():
        if rnd.random() < 0.3:
            out.append(rnd.choice(["", "# a comment", "    # indented comment", "   "]))
        out.append(line + (rnd.choice(["", "  # trailing"]) if line.strip() and rnd.random() < 0.2
                           and not line.rstrip().endswith((",", "(", "[")) else ""))
    return "\n".join(out) + "\n"


class _InsertNonCalls(ast.NodeTransformer):
    """Insert `_k = k` assignments at random positions of every statement list."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd, self.k = rnd, 0

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for name in ("body", "orelse"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt) \
                    and not isinstance(node, ast.Module):
                pos = self.rnd.randint(0, len(body))
                if pos == 0 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    pos = 1  # keep a docstring first
                self.k += 1
                body.insert(pos, ast.parse(f"k{self.k} = {self.k}").body[0])
        return node


@given(st.sampled_from(["fanout_review", "scout_helper", "sequential_loop"]), st.randoms(),
       st.booleans(), st.booleans())
@settings(max_examples=60, deadline=None)
def test_invariance_preserving_edits_are_accepted(name, rnd, insert, reformat):
    """Lemma 1: comments, blank lines, formatting, non-call statements and an appended call
    never change a committed σ or fingerprint, so the gate accepts."""
    original = read(name)
    candidate = original
    if insert or reformat:
        tree = ast.parse(candidate)
        if insert:
            tree = _InsertNonCalls(rnd).visit(tree)
        candidate = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    candidate = _comment_and_blank_noise(candidate, rnd)
    # append a new call at the very end of orchestrate (before its final return)
    lines = candidate.rstrip("\n").split("\n")
    ret = max(i for i, ln in enumerate(lines) if ln.startswith("    return"))
    if "ctx." in "".join(lines[ret:]):  # the return holds a frozen call: keep it first
        lines[ret] = lines[ret].replace("    return ", "    result = ", 1)
        lines += [APPEND.rstrip("\n"), "    return result"]
    else:
        lines.insert(ret, APPEND.rstrip("\n"))
    candidate = "\n".join(lines) + "\n"
    assert gate_source(frozen_of(original), candidate).accepted, candidate


class _Mutate(ast.NodeTransformer):
    """One random structural mutation: drop, wrap, or change a literal of a statement."""

    def __init__(self, rnd: random.Random) -> None:
        self.rnd = rnd

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        self.generic_visit(node)
        body = node.body
        i = self.rnd.randrange(len(body))
        kind = self.rnd.choice(["drop", "wrap", "literal", "swap"])
        if kind == "drop" and len(body) > 1:
            del body[i]
        elif kind == "wrap":
            body[i] = ast.If(test=ast.Name("args", ast.Load()), body=[body[i]], orelse=[])
        elif kind == "swap" and len(body) > 1:
            j = self.rnd.randrange(len(body))
            body[i], body[j] = body[j], body[i]
        else:
            for sub in ast.walk(body[i]):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, int) and not isinstance(sub.value, bool):
                    sub.value += 1
                    break
        return node


@given(st.sampled_from(["fanout_review", "scout_helper", "sequential_loop"]), st.randoms())
@settings(max_examples=60, deadline=None)
def test_gate_soundness_on_mutated_sources(name, rnd):
    """Accepted ⇔ every frozen σ is in the candidate with the same capability and fingerprint."""
    original = read(name)
    candidate = ast.unparse(ast.fix_missing_locations(_Mutate(rnd).visit(ast.parse(original))))
    result = gate_source(frozen_of(original), candidate)
    now = {s.site: s for s in sites(candidate)}
    intact = all(s in now and now[s].capability == f.capability
                 and now[s].fingerprint == f.fingerprint
                 for s, f in frozen_of(original).items())
    assert result.accepted == intact


def test_rebase_quotes_lines_of_the_later_script():
    original = read("sequential_loop")
    frozen = frozen_of(original)
    later = apply(original, ('    images = []\n', '    images = []\n    count = 0\n    note = ""\n'),
                  ('splitlines()[:4]', 'splitlines()[:3]'))
    moved = rebase(frozen, later, sites(later))
    loop_site = "orchestrate/for#0.body/#0"
    assert frozen[loop_site].line == 9 and moved[loop_site].line == 11
    assert moved[loop_site].source_line == frozen[loop_site].source_line
    assert moved["orchestrate/#0"] == frozen["orchestrate/#0"]
    # a site the later script changed keeps its committed description
    changed = later.replace('"size": "1024x1024"', '"size": "512x512"')
    assert rebase(frozen, changed, sites(changed))[loop_site] == frozen[loop_site]
    assert rebase(frozen, "", [])[loop_site] == frozen[loop_site]


def test_capability_changed_to_a_non_literal_name():
    cand = [Site("orchestrate/#0", "storyboard.plan", "fa", 2),
            Site("orchestrate/#1", None, "fb", 4)]
    (ce,) = gate(FROZEN, cand).counterexamples
    assert ce.kind == "capability_changed" and ce.found_capability is None
    assert "not a string literal" in ce.message
    assert gate(FROZEN, cand).to_dict()["counterexamples"][0]["found_capability"] is None
