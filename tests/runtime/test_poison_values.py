"""Issue 26: poison values in an attempt (a script's result, a provider's result or message, a
payload, a timer) end the attempt or the call with a named error, once, on both stores; what
was refused is not stored and every later read of the run works."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from frostline.capabilities.provider import CallContext, Provider, ProviderResult
from frostline.errors import ProviderError
from frostline.providers.local import LocalProviders
from frostline.runtime.runners import ChildProcessRunner
from frostline.service.operations import run_detail
from frostline.store import Store
from tests.runtime.helpers import run
from tests.store.helpers import Raw

RETURNS = {
    "nul": 'return {"s": "a\\x00b"}',
    "nul_key": 'return {"a\\x00": 1}',
    "surrogate": 'return ["\\ud800"]',
    "deep": "x = 1\n    for i in range(300):\n        x = [x]\n    return x",
}


@pytest.mark.parametrize("kind", sorted(RETURNS))
def test_issue26_a_result_no_store_holds_fails_the_attempt_once(store: Store, kind: str) -> None:
    source = f"async def orchestrate(ctx, args):\n    {RETURNS[kind]}\n"
    out = run(store, "r", source, LocalProviders())
    assert out.status == "failed" and out.result is None
    code = "result_too_deep" if kind == "deep" else "value_not_storable"
    assert out.error is not None and out.error["code"] == code
    [attempt] = store.list_attempts("r")
    assert (attempt.status, attempt.result, attempt.error["code"]) == ("failed", None, code)
    assert store.get_run("r").status == "failed"  # type: ignore[union-attr]
    assert run_detail(store, store.get_run("r"))["attempts"][0]["status"] == "failed"  # type: ignore[arg-type]
    # The run goes on: a repaired script's attempt succeeds.
    assert run(store, "r", "async def orchestrate(ctx, args):\n    return 1\n",
               LocalProviders()).status == "succeeded"


def test_issue26_a_nul_result_over_the_real_sandbox_pipe(store: Store) -> None:
    out = run(store, "r", f"async def orchestrate(ctx, args):\n    {RETURNS['nul']}\n",
              LocalProviders(), runner=ChildProcessRunner())
    assert out.status == "failed" and out.error["code"] == "value_not_storable"  # type: ignore[index]
    assert out.error["at"] == 'the string at $["s"]'  # type: ignore[index]


class Poisoned:
    """`echo` answers with a NUL in its result, or fails with a NUL in its message."""

    def __init__(self, inner: Provider) -> None:
        self.inner = inner

    def capabilities(self) -> frozenset[str]:
        return self.inner.capabilities()

    def honours_idempotency_keys(self, capability: str) -> bool:
        return False

    async def invoke(self, capability: str, payload: Mapping[str, Any],
                     ctx: CallContext) -> ProviderResult:
        if payload.get("fail"):
            raise ProviderError("upstream said: bad\x00byte \udc80", status=400)
        return ProviderResult({"text": "a\x00b"}, {})


def test_issue26_a_provider_result_no_store_holds_stops_the_run(store: Store) -> None:
    source = 'async def orchestrate(ctx, args):\n    return await ctx.run("echo", {"n": 1})\n'
    out = run(store, "r", source, Poisoned(LocalProviders()))
    # The provider was paid and its result never committed: the run is unresolved until
    # reconciled, and the error says why the commit was refused.
    assert out.status == "unresolved" and out.error["code"] == "unresolved"  # type: ignore[index]
    assert out.error["cause"]["code"] == "value_not_storable"  # type: ignore[index]
    assert store.list_slots("r") == []  # nothing committed of it


def test_issue26_a_provider_message_is_kept_with_what_no_store_holds_replaced(
        store: Store) -> None:
    source = ('async def orchestrate(ctx, args):\n    try:\n'
              '        await ctx.run("echo", {"n": 1, "fail": True})\n'
              '    except Exception as e:\n        return "caught"\n')
    out = run(store, "r", source, Poisoned(LocalProviders()))
    assert out.status == "succeeded" and out.result == "caught"
    [call] = store.list_calls("r")
    assert call.error is not None and "bad\ufffdbyte \ufffd" in call.error["message"]


def test_issue26_a_script_error_quoting_a_nul_is_recorded(store: Store) -> None:
    source = 'async def orchestrate(ctx, args):\n    raise ValueError("x\\x00y")\n'
    out = run(store, "r", source, LocalProviders())
    assert out.status == "failed"
    [attempt] = store.list_attempts("r")
    assert attempt.status == "failed" and "x\ufffdy" in str(attempt.error)


def test_issue26_a_payload_no_store_holds_is_a_catchable_denial(store: Store,
                                                                tmp_path: Path) -> None:
    log = tmp_path / "p.jsonl"
    source = ('async def orchestrate(ctx, args):\n    try:\n'
              '        await ctx.run("echo", {"n": 1, "s": "a\\x00"})\n'
              '    except Exception as e:\n        return "denied"\n')
    out = run(store, "r", source, LocalProviders(log_path=log))
    assert out.status == "succeeded" and out.result == "denied"
    assert out.provider_calls == 0 and not log.exists()
    assert "NUL" in out.denials[0]["message"]


@pytest.mark.parametrize("until", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00",
                                   "2030-13-45T00:00:00Z"])
def test_issue26_a_timer_no_reader_could_show_is_refused(store: Store, until: str) -> None:
    source = ('async def orchestrate(ctx, args):\n'
              f'    return await ctx.run("timer.sleep", {{"until": "{until}"}})\n')
    out = run(store, "r", source, LocalProviders())
    assert out.status == "failed" and out.error["code"] == "payload_invalid"  # type: ignore[index]
    assert store.list_waits("r") == []
    assert run_detail(store, store.get_run("r"))["waits"] == []  # type: ignore[arg-type]


def test_issue26_a_write_the_database_refuses_fails_the_attempt(store: Store,
                                                                store_url: str) -> None:
    store.create_run("r", {})
    raw = Raw(store_url)
    try:
        if raw.backend == "sqlite":
            raw.execute("CREATE TRIGGER poison BEFORE UPDATE ON attempts WHEN NEW.status = "
                        "'succeeded' BEGIN SELECT RAISE(ABORT, 'no'); END")
        else:
            raw.execute("CREATE FUNCTION poison() RETURNS trigger AS $$ BEGIN IF NEW.status = "
                        "'succeeded' THEN RAISE EXCEPTION 'no' USING ERRCODE = '22000'; END IF; "
                        "RETURN NEW; END $$ LANGUAGE plpgsql")
            raw.execute("CREATE TRIGGER poison BEFORE UPDATE ON attempts FOR EACH ROW "
                        "EXECUTE FUNCTION poison()")
    finally:
        raw.close()
    out = run(store, "r", "async def orchestrate(ctx, args):\n    return 1\n", LocalProviders())
    assert out.status == "failed" and out.error["code"] == "store_refused"  # type: ignore[index]
    [attempt] = store.list_attempts("r")
    assert attempt.status == "failed" and attempt.error["code"] == "store_refused"
    assert store.get_run("r").status == "failed"  # type: ignore[union-attr]
