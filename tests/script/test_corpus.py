"""The checker against its corpora: every escape rejected by its rule, every valid script accepted.

The corpora live in tests/corpus (see its README). A failure here names the file, the rules that
fired and the violations, so the fix is either in the checker or in the file's header.
"""

from __future__ import annotations

import re

import pytest

from bench.corpus import CORPUS_DIR, CorpusScript, load
from frostline.capabilities.catalog import DEFAULT_CATALOG
from frostline.capabilities.envelope import Envelope
from frostline.script import check


def _known_gaps() -> set[str]:
    """`kind/name` of every case listed in the Open section of KNOWN_GAPS.md."""
    text = (CORPUS_DIR / "KNOWN_GAPS.md").read_text(encoding="utf-8")
    open_section = text.split("## Open", 1)[1].split("\n## ", 1)[0]
    return {f"{kind}/{name}" for kind, name in
            re.findall(r"`(escapes|valid)/([A-Za-z0-9_]+)\.py`", open_section)}


KNOWN_GAPS = _known_gaps()


def _cases(scripts: list[CorpusScript]) -> list[object]:
    # A listed gap is an expected failure; strict, so a fix shows up as an unexpected pass.
    return [pytest.param(s, id=s.name, marks=pytest.mark.xfail(
                strict=True, reason="listed in tests/corpus/KNOWN_GAPS.md"))
            if f"{s.kind}/{s.name}" in KNOWN_GAPS else pytest.param(s, id=s.name)
            for s in scripts]


ESCAPES = load("escapes")
VALID = load("valid")
RUNTIME_ONLY = load("runtime_only")


def _describe(report) -> str:  # type: ignore[no-untyped-def]
    return "\n".join(f"  {v.rule} {v.severity} {v.line}:{v.col} {v.message}"
                     for v in report.violations) or "  (no violations)"


def test_corpus_sizes() -> None:
    assert len(ESCAPES) >= 60
    assert len(VALID) >= 40
    assert len({s.name for s in ESCAPES}) == len(ESCAPES)


@pytest.mark.parametrize("script", _cases(ESCAPES))
def test_escape_is_rejected_by_its_rule(script: CorpusScript) -> None:
    report = check(script.source, script.envelope)
    errors = {v.rule for v in report.violations if v.severity == "error"}
    assert not report.valid, f"{script.name}: escape accepted\n{_describe(report)}"
    missing = script.missing(errors)
    assert not missing, (f"{script.name}: expected {missing} among the errors, got "
                         f"{sorted(errors)}\n{_describe(report)}")


@pytest.mark.parametrize("script", _cases(VALID))
def test_valid_script_is_accepted(script: CorpusScript) -> None:
    report = check(script.source)
    assert report.valid, f"{script.name}: valid script rejected\n{_describe(report)}"
    assert not [v for v in report.violations if v.severity == "error"]
    # A valid script has at least one capability call and only catalog capabilities.
    assert report.facts.call_expressions >= 1
    assert set(report.facts.capabilities) <= set(DEFAULT_CATALOG.names())


@pytest.mark.parametrize("script", VALID, ids=lambda s: s.name)
def test_valid_script_is_accepted_by_script_rules(script: CorpusScript) -> None:
    # The repair loop runs the script rules only; a valid script must pass them as well.
    assert check(script.source, rules="script").valid


@pytest.mark.parametrize("script", VALID, ids=lambda s: s.name)
def test_valid_script_stays_within_default_budget(script: CorpusScript) -> None:
    bound = check(script.source).facts.spend_bound
    budget = Envelope().budget
    assert bound.usd <= budget.usd
    assert sum(bound.calls.values()) <= budget.calls


def test_valid_scripts_declare_their_args() -> None:
    assert [s.name for s in VALID if s.args is None] == []


@pytest.mark.parametrize("script", RUNTIME_ONLY, ids=lambda s: s.name)
def test_runtime_only_case_passes_every_rule(script: CorpusScript) -> None:
    # The folder claims that no static rule catches these; if one starts to, move the file
    # to escapes/ with its '# expect:' header.
    report = check(script.source)
    assert report.valid, f"{script.name} is now caught statically:\n{_describe(report)}"
    assert script.caught_by in {"memory", "cpu", "schema"}


def test_known_gaps_name_existing_corpus_files() -> None:
    names = {f"{s.kind}/{s.name}" for s in ESCAPES + VALID}
    assert names >= KNOWN_GAPS, KNOWN_GAPS - names


def test_fullwidth_spellings_are_normalized_before_the_rules() -> None:
    # The parser folds compatibility characters (NFKC); the rules must see the folded names.
    nfkc = [s for s in ESCAPES if s.name.startswith("nfkc_")]
    assert len(nfkc) >= 5
    assert all(any(ord(ch) > 127 for ch in s.source) for s in nfkc)
    for script in nfkc:
        assert not check(script.source).valid, script.name


def test_corpus_headers_are_parsed_and_malformed_ones_name_the_file(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from bench.corpus import CorpusError

    (tmp_path / "escapes").mkdir()
    good = tmp_path / "escapes" / "ok.py"
    good.write_text('# expect: R03 R02|R07\n# envelope: {"max_fanout": 4}\nx = 1\n')
    [script] = load("escapes", root=tmp_path)
    assert script.expect == (frozenset({"R03"}), frozenset({"R02", "R07"}))
    assert script.envelope == {"max_fanout": 4}
    assert script.missing({"R03", "R07"}) == []
    assert script.missing({"R02"}) == ["R03"]
    for header, problem in (("# expect: R13\n", "unknown rule"), ("# technique: x\n", "needs"),
                            ('# expect: R01\n# envelope: {"a": \n', "not JSON")):
        good.write_text(header + "x = 1\n")
        with pytest.raises(CorpusError, match=problem) as info:
            load("escapes", root=tmp_path)
        assert "ok.py" in str(info.value)
