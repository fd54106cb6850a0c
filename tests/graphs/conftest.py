"""Fixtures of the graph-mining tests: small seeded graphs with hubs, triangles and 4-cycles."""

import pytest

from workbench.graphs.generators import erdos_renyi, grid, rmat
from workbench.graphs.graph import from_edges


@pytest.fixture(scope="session")
def small_graphs():
    """name -> graph: dense random, skewed R-MAT (hubs), a grid, and a star+clique with a pendant."""
    star_clique = from_edges([0, 0, 0, 0, 0, 1, 1, 2, 5, 6], [1, 2, 3, 4, 5, 2, 3, 3, 6, 7], name="star-clique")
    return {
        "er-14-0.4": erdos_renyi(14, 0.4, seed=7),
        "rmat-5-3": rmat(5, 3, seed=1),
        "grid-3-4": grid(3, 4),
        "star-clique": star_clique,
    }
