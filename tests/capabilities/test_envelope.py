import pytest

from frostline.capabilities import DEFAULT_CATALOG, Envelope
from frostline.capabilities.envelope import LedgerPolicy, OrphanPolicy
from frostline.errors import EnvelopeError


def test_defaults():
    env = Envelope.from_dict({})
    assert env.grants is None
    assert env.grant_set() == frozenset(DEFAULT_CATALOG.names())
    assert (env.budget.usd, env.budget.calls) == (10.0, 1000)
    assert (env.concurrency, env.max_fanout) == (8, 64)
    assert env.ledger_policy is LedgerPolicy.AUTO and env.orphan_policy is OrphanPolicy.WARN


def test_round_trip():
    data = {"grants": ["echo", "image.generate"], "budget": {"usd": 1.5, "calls": 3},
            "concurrency": 2, "max_fanout": 4, "ledger_policy": "deny", "orphan_policy": "stop"}
    env = Envelope.from_dict(data)
    assert Envelope.from_dict(env.to_dict()) == env
    assert env.granted("echo") and not env.granted("text.generate")


@pytest.mark.parametrize(
    "data,key",
    [
        ({"grant": []}, "grant"),
        ({"grants": "echo"}, "grants"),
        ({"grants": ["nope.cap"]}, "grants"),
        ({"budget": {"usd": -1}}, "budget.usd"),
        ({"budget": {"usd": float("nan")}}, "budget.usd"),
        ({"budget": {"calls": 1.5}}, "budget.calls"),
        ({"budget": {"dollars": 1}}, "budget.dollars"),
        ({"budget": 3}, "budget"),
        ({"concurrency": 0}, "concurrency"),
        ({"concurrency": True}, "concurrency"),
        ({"max_fanout": 10**9}, "max_fanout"),
        ({"ledger_policy": "maybe"}, "ledger_policy"),
        ({"orphan_policy": "ignore"}, "orphan_policy"),
        ([], ""),
    ],
)
def test_bad_values_name_the_key(data, key):
    with pytest.raises(EnvelopeError) as err:
        Envelope.from_dict(data)
    assert err.value.fields["key"] == key
    if key:
        assert key.split(".")[-1] in err.value.message


def test_from_json_malformed():
    with pytest.raises(EnvelopeError, match="not valid JSON"):
        Envelope.from_json("{")
