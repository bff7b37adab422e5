from __future__ import annotations

import pytest
from graph_helpers import ForbiddenModel

from frostline.graph.graph import Graph, load_graph


@pytest.fixture
def canonical() -> Graph:
    return load_graph("canonical")


@pytest.fixture
def seed() -> Graph:
    return load_graph("seed")


@pytest.fixture
def forbidden_model() -> ForbiddenModel:
    return ForbiddenModel()
