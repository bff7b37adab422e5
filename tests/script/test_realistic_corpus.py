"""The precision study's corpus (tests/corpus/realistic): scripts written the way models write.

Every file is a valid script: it runs to completion with its ``# args:`` on the local
providers. The checker accepts all but the few listed in ``REJECTED``, each for a reason
docs/script.md ("Rejections that stay") gives; the test pins both sets, so a change to the
checker that accepts or rejects one more of them shows up here, and β on this corpus is
``len(REJECTED) / len(REALISTIC)``.

Executing the corpus takes about two minutes, so by default a hash-selected sample of 12 runs
(10 accepted, 2 rejected);
FROSTLINE_FULL_CORPUS=1 runs the rest. An accepted script runs under the checker and stays
within its static spend bound; a rejected one runs with the checker skipped, which shows that
it is a false rejection and not a broken script.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.corpus import CorpusScript, load
from bench.mutation import select_bases
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import execute
from frostline.script import check
from frostline.store import Store, open_store
from frostline.testing import InProcessRunner

REALISTIC = load("realistic")

#: Rejections that stay, with the rule that fires (docs/script.md says why each must stay).
REJECTED = {
    # `assert 1 <= n <= 4` then `range(n)`: an assert is not a bound
    "assert_inputs": {"R03"},
    # comprehensions over `text.split(...)` of a provider's text: no static length
    "blog_post_illustrations": {"R03"},
    "recipe_steps": {"R03"},
    "sorted_unique_keywords": {"R03"},
    # the same, and a name bound twice (`chosen = xs[:4]`, then `chosen = [topic]`)
    "text_outline_then_images": {"R03"},
}

# Ten accepted scripts and two rejected ones, hash-selected.
SAMPLE = sorted(select_bases([s for s in REALISTIC if s.name not in REJECTED], 10, seed=0)
                + select_bases([s for s in REALISTIC if s.name in REJECTED], 2, seed=0),
                key=lambda s: s.name)
REST = [s for s in REALISTIC if s not in SAMPLE]


def test_the_corpus_is_large_enough_and_declares_its_args() -> None:
    assert len(REALISTIC) >= 100
    assert [s.name for s in REALISTIC if s.args is None] == []
    assert set(REJECTED) <= {s.name for s in REALISTIC}


def test_the_checker_accepts_all_but_the_documented_rejections() -> None:
    rejected: dict[str, set[str]] = {}
    for script in REALISTIC:
        report = check(script.source)
        errors = {v.rule for v in report.violations if v.severity == "error"}
        if errors:
            rejected[script.name] = errors
        else:
            assert report.facts.call_expressions >= 1, script.name
    assert rejected == REJECTED


def test_the_accepted_scripts_pass_the_script_rules_and_the_default_budget() -> None:
    for script in REALISTIC:
        if script.name in REJECTED:
            continue
        assert check(script.source, rules="script").valid, script.name
        bound = check(script.source).facts.spend_bound
        assert bound.bounded and bound.total_calls <= 1000 and bound.usd <= 10.0, script.name


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp("realistic") / "frostline.db"
    opened = open_store(f"sqlite:///{path}")
    yield opened
    opened.close()


def _runs(store: Store, script: CorpusScript) -> None:
    report = check(script.source)
    outcome = execute(store, f"realistic-{script.name}", script.source, args=script.args,
                      providers=LocalProviders(), runner=InProcessRunner(),
                      skip_checker=script.name in REJECTED)
    assert outcome.status == "succeeded", (script.name, outcome.error, outcome.denials)
    assert outcome.executed >= 1
    if script.name not in REJECTED:
        assert outcome.executed <= report.facts.spend_bound.total_calls, script.name
        assert outcome.spend_usd <= report.facts.spend_bound.usd + 1e-9, script.name


@pytest.mark.parametrize("script", SAMPLE, ids=lambda s: s.name)
def test_a_sampled_script_runs_end_to_end(store: Store, script: CorpusScript) -> None:
    _runs(store, script)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("FROSTLINE_FULL_CORPUS") != "1",
                    reason="set FROSTLINE_FULL_CORPUS=1 to execute the whole realistic corpus")
@pytest.mark.parametrize("script", REST, ids=lambda s: s.name)
def test_the_rest_of_the_corpus_runs_end_to_end(store: Store, script: CorpusScript) -> None:
    _runs(store, script)
