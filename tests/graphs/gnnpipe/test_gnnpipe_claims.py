"""GNNPipe's claims: they evaluate, their computed verdicts are pinned (with why that is the honest outcome), and
each inferred assumption's sweep moves the figure (or the test says why not)."""

from __future__ import annotations

import pytest

from tests.conftest import require_shared_data
from workbench.claims import evaluate, recorded
from workbench.graphs.gnnpipe.claims import CLAIMS

BY_KEY = {c.key: c for c in CLAIMS}
MODEL_KEYS = [k for k in BY_KEY if k.endswith(("_v1", "_v2"))]


def _has(key: str) -> bool:
    try:
        recorded(key)
    except Exception:  # noqa: BLE001 - NotTestedHere: the benchmark has not been recorded
        return False
    return True


@pytest.mark.slow
@pytest.mark.parametrize("key", MODEL_KEYS)
def test_paper_scale_claims_are_not_reproduced_against_metis(key):
    """At the paper's depths (16-64 layers) against METIS partitions the model's ratios stay far below the
    abstract's: volume up to ~3-6x (not 22.9x), time below 1x on average (GNNPipe's fill and full-graph
    transfers cost more than METIS halos). The 22.89x needs random partitions or ~460 layers (METIS-like)."""
    ev = evaluate(BY_KEY[key])
    assert ev.verdict.status in ("not reproduced", "refuted"), ev.verdict
    if key.startswith("time_avg"):
        assert ev.verdict.status == "refuted"  # below 1x at every grid point: slower than graph parallelism
    assert ev.at_source.ours < BY_KEY[key].paper * 0.85


def test_volume_up_to_depends_on_depth_but_never_reaches_the_paper():
    require_shared_data()  # live evaluation reads Planetoid
    ev = evaluate(BY_KEY["volume_max_v2"])
    layers = {p.value: p.ours for p in ev.sweeps["layers"]}
    assert layers[16] < 1.0 < layers[64] < 22.89 * 0.85  # the sweep moves the figure, linearly in depth
    assert ev.verdict.status == "not reproduced"
    hidden = {p.value: p.ours for p in ev.sweeps["hidden"]}
    # the width barely moves the volume ratio: both sides move d floats per vertex (only the all-reduce differs)
    assert max(hidden.values()) == pytest.approx(min(hidden.values()), rel=0.01)
    assert len({round(p.ours, 6) for p in ev.sweeps["gpus"]}) > 1
    assert len({round(p.ours, 6) for p in ev.sweeps["model"]}) > 1


def test_measured_volume_factor_is_not_reproduced_at_the_projects_scale():
    require_shared_data()  # live evaluation reads Planetoid
    """Counted bytes on Cora at L = 16, P = 4 (the notebook's setting): GNNPipe moves more bytes than graph
    parallelism with METIS parts (0.83x); only P = 2 gets above 1x, nowhere near the factor 16."""
    ev = evaluate(BY_KEY["volume_factor_measured"])
    assert ev.at_source.ours == pytest.approx(0.829, abs=0.01)
    assert ev.verdict.status == "not reproduced"
    for name in ("dataset", "workers", "hidden"):
        assert len({round(p.ours, 6) for p in ev.sweeps[name]}) > 1, name


@pytest.mark.parametrize("key", ["time_measured", "accuracy"])
def test_recorded_claims_read_the_benchmark(key):
    """Wall-clock time and multi-process accuracy runs are not repeated by the scoreboard: the benchmark
    records them. Without a record the claim says which command records it."""
    ev = evaluate(BY_KEY[key])
    if not _has(f"gnnpipe.{'epoch_speedup' if key == 'time_measured' else 'accuracy_gap'}"):
        assert ev.verdict.status == "not tested here" and "benchmarks.run" in ev.verdict.detail
    else:
        assert ev.verdict.status != "not tested here"


def test_bytes_crossover_claim_depends_on_depth_and_names_the_crossover():
    require_shared_data()  # live evaluation reads Planetoid
    """Counted bytes at the project's scale: at L = 16 on Cora with 4 processes GNNPipe moves more than graph
    parallelism with METIS parts (0.83x); it moves fewer from L = 21 on, inside the paper's 16-64 layers, so the
    verdict depends on the depth (and the note names the crossover)."""
    ev = evaluate(BY_KEY["volume_below_graph_parallel_measured"])
    assert ev.verdict.status == "depends on" and ev.verdict.detail.startswith("layers"), ev.verdict
    assert ev.at_source.ours == pytest.approx(0.829, abs=0.01) and "from L = 21" in ev.at_source.note
    layers = {p.value: p.ours for p in ev.sweeps["layers"]}
    assert layers[16] < 1.0 < layers[64]
    assert {p.value: p.ours > 1 for p in ev.sweeps["workers"]}[2]  # two processes: fewer bytes already at L = 16


def test_paper_maxima_exist_only_in_the_model_beyond_the_papers_depths():
    require_shared_data()  # live evaluation reads Planetoid
    """The abstract's 22.89x (volume) is reached by the model with METIS-like partitions only hundreds of layers
    deep; the depth assumption stays inside the paper's 16-64 layers."""
    ev = evaluate(BY_KEY["volume_max_v2"])
    assert ev.at_source.note.startswith("MODEL only") and BY_KEY["volume_max_v2"].scale == "model"
    need = int(ev.at_source.note.split("reaches 22.89x at L = ")[1].split(" ")[0])
    assert need > 64
    layers = next(a for a in BY_KEY["volume_max_v2"].assumptions if a.name == "layers")
    assert (layers.lo, layers.hi, layers.value) == (16, 64, 64)
