"""The valid corpus executed end to end: the runtime, the local providers and a SQLite store.

A valid script must not only pass the checker but run: every one succeeds with its declared
``# args:``, spends no more than the checker's static spend bound, and a second attempt of the
same source under the same run replays every committed identity and executes nothing. The
runtime-only ``schema`` case is refused by the broker before any provider call.

Executing the whole corpus takes about a minute, so by default a hash-selected subset of 12 runs;
set FROSTLINE_FULL_CORPUS=1 to run the rest as well. The runtime, the providers and the store are
the project's own modules: a broken import of any of them fails these tests, it never skips them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.corpus import CorpusScript, load
from bench.mutation import select_bases
from frostline.providers.local import LocalProviders
from frostline.runtime.execute import AttemptOutcome, execute
from frostline.script import check
from frostline.store import Store, open_store
from frostline.testing import InProcessRunner

VALID = load("valid")
DEFAULT = select_bases(VALID, 12, seed=0)
REST = [s for s in VALID if s not in DEFAULT]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    path: Path = tmp_path_factory.mktemp("corpus") / "frostline.db"
    opened = open_store(f"sqlite:///{path}")
    yield opened
    opened.close()


def _run(store: Store, run_id: str, script: CorpusScript) -> AttemptOutcome:
    return execute(store, run_id, script.source, args=script.args,
                   providers=LocalProviders(), runner=InProcessRunner())


@pytest.mark.parametrize("script", DEFAULT, ids=lambda s: s.name)
def test_valid_script_runs_within_its_bound_and_replays(store: Store,
                                                        script: CorpusScript) -> None:
    _runs_within_bound_and_replays(store, script)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("FROSTLINE_FULL_CORPUS") != "1",
                    reason="set FROSTLINE_FULL_CORPUS=1 to execute the whole valid corpus")
@pytest.mark.parametrize("script", REST, ids=lambda s: s.name)
def test_rest_of_valid_corpus_runs_and_replays(store: Store, script: CorpusScript) -> None:
    _runs_within_bound_and_replays(store, script)


def _runs_within_bound_and_replays(store: Store, script: CorpusScript) -> None:
    bound = check(script.source).facts.spend_bound
    run_id = f"corpus-{script.name}"
    first = _run(store, run_id, script)
    assert first.status == "succeeded", (first.status, first.error, first.logs)
    assert 1 <= first.executed <= sum(bound.calls.values())
    assert first.spend_usd <= bound.usd + 1e-9
    again = _run(store, run_id, script)
    assert again.status == "succeeded", (again.status, again.error)
    assert (again.executed, again.replayed) == (0, first.executed)
    assert again.result == first.result


def test_oversized_payload_is_refused_before_dispatch(store: Store) -> None:
    script = next(s for s in load("runtime_only") if s.caught_by == "schema")
    outcome = _run(store, f"corpus-{script.name}", script)
    assert outcome.status == "failed"
    assert outcome.provider_calls == 0 and outcome.executed == 0
    assert [d["type"] for d in outcome.denials] == ["PayloadInvalid"]
