import pytest
from hypothesis import given
from hypothesis import strategies as st

from frostline.contract.identity import Identity, digest
from frostline.contract.prefix import Prefix, load_prefix
from frostline.contract.records import SlotRecord
from frostline.errors import PrefixConflict, StoreUnavailable
from frostline.testing import FaultyStore


def slot(site="orchestrate/#0", path=(), occ=0, cap="echo", payload=None, attempt=1, run="r"):
    payload = {"n": 1} if payload is None else payload
    return SlotRecord(run, site, path, occ, cap, digest(payload), payload, {}, attempt)


def test_prefix_maps_identities_to_records_and_lists_frozen_sites():
    p = Prefix.from_slots("r", [slot(occ=1), slot(occ=0), slot(site="orchestrate/#1",
                                                             cap="text.generate")])
    assert [str(i) for i in p.identities()] == ["orchestrate/#0@:0", "orchestrate/#0@:1",
                                                "orchestrate/#1@:0"]
    assert p.frozen_sites() == {"orchestrate/#0": "echo", "orchestrate/#1": "text.generate"}
    assert p.get(Identity("orchestrate/#0", (), 1)).occurrence == 1
    assert Identity("orchestrate/#9", (), 0) not in p and len(p) == 3


def test_agreeing_duplicates_fold_into_one_entry():
    p = Prefix.from_slots("r", [slot(attempt=1), slot(attempt=2)])
    assert len(p) == 1 and p.conflicts == ()


def test_conflicting_duplicates_raise_in_strict_mode_and_are_listed_otherwise():
    a, b = slot(payload={"n": 1}, attempt=1), slot(payload={"n": 2}, attempt=2)
    with pytest.raises(PrefixConflict) as err:
        Prefix.from_slots("r", [a, b])
    assert err.value.fields["identity"] == "orchestrate/#0@:0"
    loose = Prefix.from_slots("r", [b, a], strict=False)
    assert loose.conflicts == ("orchestrate/#0@:0",)
    assert loose.get(Identity("orchestrate/#0", (), 0)).attempt == 1  # the earliest wins


def test_a_slot_of_another_run_is_a_conflict():
    with pytest.raises(PrefixConflict):
        Prefix.from_slots("r", [slot(run="other")])


def test_load_prefix_reads_the_store_and_fails_closed(store):
    store.create_run("r", {})
    store.start_attempt("r", source="s", annotated="s", report={})
    ident = Identity("orchestrate/#0", (1,), 0)
    call = store.begin_call("r", 1, ident, "echo", digest({"n": 1}))
    store.commit_call(call, SlotRecord("r", ident.site, ident.path, 0, "echo", digest({"n": 1}),
                                       {"n": 1}, {}, 1))
    assert load_prefix(store, "r").identities() == [ident]
    with pytest.raises(StoreUnavailable):
        load_prefix(FaultyStore(store), "r")


@given(st.lists(st.tuples(st.sampled_from(["a/#0", "a/#1", "b/#0"]),
                          st.lists(st.integers(0, 3), max_size=2), st.integers(0, 3)),
                max_size=20))
def test_prefix_identities_are_sorted_and_unique(keys):
    slots = [slot(site=s, path=tuple(p), occ=o) for s, p, o in keys]
    ids = Prefix.from_slots("r", slots).identities()
    assert ids == sorted(set(ids)) and set(ids) == {Identity(s, tuple(p), o) for s, p, o in keys}
