"""A graph is data: the shipped JSON files, the builder, and strict validation on load."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from frostline.errors import GraphLoadError
from frostline.graph.builder import GraphBuilder
from frostline.graph.graph import TOP_LEVEL, Graph, load_graph
from frostline.graph.records import GatePredicate, Operator, exists
from frostline.graph.shipped import canonical_graph, seed_graph


@pytest.mark.parametrize("name", ["seed", "canonical"])
def test_shipped_json_equals_the_python_api(name):
    built = {"seed": seed_graph, "canonical": canonical_graph}[name]()
    text = resources.files("frostline.graph").joinpath("graphs", f"{name}.json").read_text()
    assert json.loads(text) == built.to_dict()
    assert load_graph(name).to_dict() == built.to_dict()
    keys = list(json.loads(text))
    assert keys == [k for k in TOP_LEVEL if k in keys]  # written in the documented order
    # every key but a tuned graph's provenance is there; the seed declares nothing tunable
    assert set(TOP_LEVEL) - set(keys) == ({"provenance", "settings", "tunables"} if name == "seed"
                                          else {"provenance"})


def test_round_trip_through_a_file(tmp_path, canonical):
    path = tmp_path / "g.json"
    path.write_text(canonical.dumps())
    assert load_graph(path).to_dict() == canonical.to_dict()
    assert load_graph(str(path)).to_dict() == canonical.to_dict()


def mutate(graph: Graph, fn) -> dict:
    data = copy.deepcopy(graph.to_dict())
    fn(data)
    return data


def load_error(data) -> GraphLoadError:
    with pytest.raises(GraphLoadError) as err:
        Graph.from_dict(data)
    return err.value


def test_missing_and_extra_top_level_keys(canonical):
    err = load_error(mutate(canonical, lambda d: d.pop("budgets")))
    assert err.fields["field"] == "budgets" and "missing" in err.message
    err = load_error(mutate(canonical, lambda d: d.update(owner="me")))
    assert err.fields["field"] == "owner" and "unknown" in err.message


def test_extra_field_in_a_nested_record(canonical):
    def add(d):
        d["transitions"][3]["weight"] = 2
    err = load_error(mutate(canonical, add))
    assert err.fields["field"] == "transitions[3].weight"
    def bad_enum(d):
        d["contracts"]["TEST"]["failure_transitions"][0]["kind"] = "again"
    err = load_error(mutate(canonical, bad_enum))
    assert err.fields["field"] == "contracts.TEST.failure_transitions[0].kind"


def test_an_unenumerated_state_is_not_expressible(canonical):
    def add(d):
        d["transitions"].append({"from": "TEST", "to": "SHIP_IT", "kind": "forward", "guard": [], "reason": ""})
    err = load_error(mutate(canonical, add))
    assert err.fields["field"].startswith("transitions[")
    assert "SHIP_IT" in err.message


def test_terminals_are_sinks(canonical):
    def add(d):
        d["transitions"].append({"from": "TERMINAL_REJECT", "to": "INIT", "kind": "forward",
                                 "guard": [], "reason": ""})
        d["contracts"]["TERMINAL_REJECT"]["transition_guards"].append([])
    err = load_error(mutate(canonical, add))
    assert "terminals are sinks" in err.message


def test_permitted_tools_must_be_in_the_vocabulary(canonical):
    err = load_error(mutate(canonical, lambda d: d["contracts"]["TEST"]["permitted_tools"].append("shell.exec")))
    assert err.fields["field"] == "contracts.TEST.permitted_tools"
    assert "shell.exec" in err.message


def test_guards_must_name_known_artifacts_and_fields(canonical):
    def unknown_artifact(d):
        d["transitions"][1]["guard"][0]["artifact"] = "Vibes"
        d["contracts"]["RECONNAISSANCE"]["transition_guards"][0][0]["artifact"] = "Vibes"
    err = load_error(mutate(canonical, unknown_artifact))
    assert "Vibes" in err.message and err.fields["field"].endswith(".artifact")

    def unknown_property(d):
        d["transitions"][1]["guard"][0]["property"] = "mood"
        d["contracts"]["RECONNAISSANCE"]["transition_guards"][0][0]["property"] = "mood"
    err = load_error(mutate(canonical, unknown_property))
    assert "mood" in err.message and err.fields["field"].endswith(".property")


def test_contracts_must_agree_with_the_transition_list(canonical):
    err = load_error(mutate(canonical, lambda d: d["contracts"]["TEST"]["failure_transitions"].pop()))
    assert err.fields["field"] == "contracts.TEST.failure_transitions"


def test_every_issue_is_reported_at_once(canonical):
    def two(d):
        d["contracts"]["TEST"]["permitted_tools"].append("shell.exec")
        d["lattice"][0]["depends_on"] = ["ValidationResult"]
    err = load_error(mutate(canonical, two))
    fields = [i["field"] for i in err.fields["issues"]]
    assert "contracts.TEST.permitted_tools" in fields and "lattice" in fields


def test_lattice_cycle_and_budgets(canonical):
    err = load_error(mutate(canonical, lambda d: d["lattice"][0].update(depends_on=["Patch"])))
    assert "cycle" in err.message
    err = load_error(mutate(canonical, lambda d: d.update(budgets={"retry": -1, "rollback": 1})))
    assert err.fields["field"] == "budgets.retry"
    err = load_error(mutate(canonical, lambda d: d.update(budgets={"retry": 1})))
    assert err.fields["field"] == "budgets"


def test_bad_json_and_missing_file(tmp_path):
    p = tmp_path / "g.json"
    p.write_text("{not json")
    with pytest.raises(GraphLoadError) as err:
        load_graph(p)
    assert err.value.fields["field"] == "<json>"
    with pytest.raises(GraphLoadError) as err:
        load_graph(tmp_path / "absent.json")
    assert "seed" in err.value.message  # says what to pass instead


def test_builder_makes_the_same_graph_as_json():
    b = GraphBuilder("tiny", states=["INIT", "WORK", "DONE", "FAIL"], terminals=["DONE", "FAIL"],
                     tools=["x.run"])
    b.state("WORK", tools=["x.run"], output={"name": "Out", "required": ["ok"]})
    b.edge("INIT", "WORK")
    b.edge("WORK", "DONE", guard=[GatePredicate("Out", "ok", Operator.EQ, 1)])
    b.edge("WORK", "FAIL", "termination", reason="out_of_budget")
    g = b.budgets(retry=1, rollback=0).build()
    assert Graph.from_dict(json.loads(g.dumps())).to_dict() == g.to_dict()
    assert g.contracts["WORK"].transition_guards == ((GatePredicate("Out", "ok", Operator.EQ, 1),),)
    assert [t.to for t in g.contracts["WORK"].failure_transitions] == ["FAIL"]
    assert g.producers("Out") == ("WORK",)
    assert exists("Out").property == "exists"


def test_text_and_digest_are_the_graphs_and_identify_it(canonical):
    from frostline.contract.identity import digest

    assert canonical.dumps() == json.dumps(canonical.to_dict(), indent=2) + "\n"
    assert canonical.content_digest == digest(canonical.to_dict())
    again = Graph.from_dict(json.loads(canonical.dumps()))
    assert again.content_digest == canonical.content_digest
    changed = copy.deepcopy(canonical.to_dict())
    changed["budgets"]["retry"] += 1
    assert Graph.from_dict(changed).content_digest != canonical.content_digest
