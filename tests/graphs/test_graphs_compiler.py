"""The loop-nest compiler, the kernel cache and the cost model.

References: the source text the generator must produce for hoisting (an intersection placed outside the
loop that does not change it), the disk cache of numba, networkx's transitivity (for the sampled
estimate), and brute force for the emitted partial counts (their sum is inj)."""

import subprocess
import sys

import networkx as nx
import numpy as np
import pytest

from workbench.graphs.compiler import Bind, KernelPlan, describe_plan, generate_source
from workbench.graphs.cost_model import GraphStats, plan_cost, sample_seconds
from workbench.graphs.decompose import decompositions
from workbench.graphs.enumerate import make_schedule, schedule_plan
from workbench.graphs.generators import erdos_renyi, rmat
from workbench.graphs.kernels import compile_plan, precompile, run_kernel
from workbench.graphs.miner import Miner
from workbench.graphs.patterns import parse_pattern


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def test_clique_intersection_is_hoisted_out_of_the_inner_loop():
    plan = schedule_plan(make_schedule(parse_pattern("4-clique"), order=(0, 1, 2, 3)))
    src = generate_source(plan)[0].splitlines()
    inter = next(i for i, l in enumerate(src) if "= intersect(N0, N1" in l)
    loop2 = next(i for i, l in enumerate(src) if l.strip().startswith("for v2 in"))
    # N0 ∩ N1 is computed once per (v0, v1), before the loop over v2, which reuses it
    assert inter < loop2 and _indent(src[inter]) == _indent(src[loop2])
    # the last level is counted, not looped: N2 is scanned against the marked N0 ∩ N1
    assert not any(l.strip().startswith("for v3 in") for l in src)
    assert any("c += mk0[y]" in l for l in src[loop2:])


def test_invariant_partial_set_is_marked_once_and_scanned():
    """Triangles: N(v0) is marked once per v0; each v1 scans its list against the marks (or merges when
    the upper bound stops the scan), instead of merging N(v0) again for every v1."""
    src = generate_source(schedule_plan(make_schedule(parse_pattern("triangle"))))[0]
    assert "mk0[y] = 1" in src and "c += mk0[y]" in src and "break" in src


def test_hoisting_off_recomputes_inside_and_still_counts_right():
    p = parse_pattern("4-clique")
    s = make_schedule(p, order=(0, 1, 2, 3))
    on, off = generate_source(schedule_plan(s))[0], generate_source(schedule_plan(s, hoist=False))[0]
    assert on != off
    g = erdos_renyi(40, 0.3, seed=1).by_degree()
    a = run_kernel(compile_plan(schedule_plan(s)), g)
    assert (
        a
        == run_kernel(compile_plan(schedule_plan(s, hoist=False)), g)
        == sum(1 for c in nx.enumerate_all_cliques(g.to_networkx()) if len(c) == 4)
    )


def test_house_decomposition_uses_a_hoisted_count_table():
    house = parse_pattern("house")
    d = next(
        d for d in decompositions(house) if d.cut == (0, 1) and any(b.table for f in d.kernel.factors for b in f.binds)
    )
    src, tables = generate_source(d.kernel)
    assert tables >= 1 and "[z] += 1" in src and "c = tab" in src
    assert "cut" in describe_plan(d.kernel)


def test_same_shape_plans_share_one_kernel():
    """Vertex names are normalised, so the triangle's plan from two numberings is one source."""
    a = schedule_plan(make_schedule(parse_pattern("0-1,1-2,0-2"), order=(0, 1, 2)))
    b = schedule_plan(make_schedule(parse_pattern("0-1,1-2,0-2"), order=(2, 1, 0)))
    assert generate_source(a)[0] == generate_source(b)[0]


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_compiled_kernels_are_cached_in_process_and_on_disk(tmp_path):
    plan = schedule_plan(make_schedule(parse_pattern("wedge")))
    first = compile_plan(plan, tmp_path)
    again = compile_plan(plan, tmp_path)
    assert first.fn is again.fn and again.compile_seconds == 0.0
    assert list(tmp_path.glob("wbk_*.py")) and list(tmp_path.glob("wbk_*.ok"))
    assert precompile([plan], processes=2, cache_dir=tmp_path) >= 0.0  # already compiled: nothing to do
    code = (
        "import sys; from workbench.graphs.enumerate import make_schedule, schedule_plan; "
        "from workbench.graphs.patterns import parse_pattern; from workbench.graphs.kernels import compile_plan; "
        "k = compile_plan(schedule_plan(make_schedule(parse_pattern('wedge'))), sys.argv[1]); "
        "print(k.from_disk_cache)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.stdout.strip() == "True", out.stderr[-2000:]  # a fresh process loads the machine code


def test_emit_mode_rejects_bridges():
    bind = Bind(0)
    with pytest.raises(ValueError, match="emit mode needs a decomposition plan"):
        generate_source(KernelPlan(cut=(bind,), emit=True))


def test_overflow_is_detected_not_wrapped(monkeypatch):
    """A kernel reports int64 overflow with -1; run_kernel turns that into OverflowError."""
    from workbench.graphs import kernels

    class Fake:
        n_tables, plab = 0, np.full(8, -1, dtype=np.int32)
        fn = staticmethod(lambda *args: -1)

    with pytest.raises(OverflowError, match="exceeds the int64 range"):
        kernels.run_kernel(Fake(), erdos_renyi(10, 0.5, seed=0))


def test_transitivity_estimate_matches_networkx():
    g = rmat(10, 8, seed=2)
    est = GraphStats.of(g).transitivity
    # 10000 uniformly sampled wedges: standard error sqrt(t (1 - t) / 10000) < 0.005; allow 4 of them
    assert abs(est - nx.transitivity(g.to_networkx())) < 0.02


def test_cost_model_grows_with_the_graph_and_ranks_clique_orders_sensibly():
    small, big = GraphStats.of(rmat(8, 8, seed=0)), GraphStats.of(rmat(12, 8, seed=0))
    plan = schedule_plan(make_schedule(parse_pattern("house")))
    assert plan_cost(plan, big) > 4 * plan_cost(plan, small)
    m = Miner(rmat(10, 8, seed=0))
    best = m.plan(parse_pattern("4-star"))
    assert best.kind == "decompose"  # sum C(d, 4) beats enumerating every star


def test_sampling_estimate_is_positive_and_finite():
    g = rmat(9, 8, seed=1).by_degree()
    kernel = compile_plan(schedule_plan(make_schedule(parse_pattern("triangle"), graph=g)))
    est = sample_seconds(kernel, g, sample=64)
    assert 0.0 < est < 10.0


def test_sample_cost_model_picks_a_plan_that_counts_right():
    g = rmat(9, 8, seed=1)
    a = Miner(g, cost_model="sample").count(parse_pattern("tailed-triangle")).count
    assert a == Miner(g).count(parse_pattern("tailed-triangle"), engine="enumerate").count
    with pytest.raises(ValueError, match="cost_model='magic' is not allowed"):
        Miner(g, cost_model="magic")
