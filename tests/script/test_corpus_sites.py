"""Over every corpus script: check()'s sites equal sites(), and annotation keeps lines."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from frostline.script import annotate, check, sites

CORPUS = sorted((Path(__file__).resolve().parents[1] / "corpus").rglob("*.py"))


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_check_sites_match_sites_and_annotation(path: Path) -> None:
    src = path.read_text(encoding="utf-8")
    report = check(src)
    if report.violations and report.violations[0].rule == "R00":
        return
    expected = [(s.site, s.fingerprint, s.line, s.col) for s in sites(src)]
    assert [(s.site, s.fingerprint, s.line, s.col) for s in report.facts.sites] == expected
    if "_site" in src:
        return  # annotate() rejects scripts that carry their own _site (R10)
    out = annotate(src)
    assert [(n.lineno, n.end_lineno) for n in ast.walk(ast.parse(out)) if isinstance(n, ast.stmt)] \
        == [(n.lineno, n.end_lineno) for n in ast.walk(ast.parse(src)) if isinstance(n, ast.stmt)]
    assert [(s.site, s.fingerprint, s.line) for s in sites(out)] == [e[:3] for e in expected]


def test_corpus_is_present() -> None:
    assert len(CORPUS) >= 100


@pytest.mark.parametrize("path", CORPUS[::7], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fast_dump_equals_ast_dump(path: Path) -> None:
    from frostline.script.sites import dump

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return
    for node in ast.walk(tree):
        assert dump(node) == ast.dump(node, include_attributes=False)
