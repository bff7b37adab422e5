from hypothesis import given
from hypothesis import strategies as st

from frostline.capabilities.envelope import OrphanPolicy
from frostline.contract.identity import Identity
from frostline.contract.orphans import find_orphans, orphan_report

ids = st.builds(Identity, st.sampled_from(["a/#0", "a/#1"]),
                st.lists(st.integers(0, 2), max_size=2).map(tuple), st.integers(0, 3))


def test_orphans_are_committed_identities_not_invoked():
    c = [Identity("a/#0", (), 0), Identity("a/#0", (), 1), Identity("a/#0", (), 2)]
    report = orphan_report(c, [c[0]], "warn")
    assert report.texts() == ["a/#0@:1", "a/#0@:2"] and not report.fails_run
    stop = orphan_report(c, [c[0]], OrphanPolicy.STOP)
    assert stop.fails_run and stop.to_dict()["policy"] == "stop"
    assert not orphan_report(c, c, "stop").fails_run


@given(st.lists(ids), st.lists(ids))
def test_orphans_partition_the_prefix(committed, invoked):
    orphans = find_orphans(committed, invoked)
    assert set(orphans) == set(committed) - set(invoked)
    assert list(orphans) == sorted(orphans)
