"""FIITED's paper claims as data (arXiv 2401.04408; only the v1 and v2 abstracts could be read, see
``papers/further/fiited.md``), each with its baseline, assumptions and measure; the verdicts are computed by
:func:`workbench.claims.verdict`.

What the figures rest on:

- The accuracy figures come from real training runs (5 seeds per budget, budgets 0.02, 0.1 and 0.5 of the full table)
  on synthetic Criteo-shaped data whose teacher gives hot ids up to 8 dimensions of information and rare ids
  none beyond a scalar, so narrow tables lose AUC (``benchmarks/recsys/fiited_sweep.py``). "Negligible accuracy
  drop" is the declared accuracy tolerance (:data:`workbench.claims.TOLERANCES`), applied to the paired
  difference to the full table of the same seed. The runs cost minutes, so the measures read the figures the
  benchmark records (``python -m benchmarks.run --only fiited_sweep``).
- An id may drop to no chunk (it reads its feature's shared default vector), so FIITED has no one-chunk floor;
  its bytes are the served table's (chunks, keys, pointers, default vectors). :func:`floor_share` and
  :func:`cap` keep the MODEL of the one-chunk variant (``min_chunks = 1``) for reference.
"""

from __future__ import annotations

from workbench.claims import Assumption, Baseline, Claim, Figure, NotTestedHere, recorded
from workbench.recsys.fiited.model import TableModel

__all__ = ["CLAIMS", "floor_share", "cap"]

TECHNIQUE = "fiited"
PAPER = "arXiv 2401.04408"
BENCH = "benchmarks/recsys/fiited_sweep.py"
LOOKUP_BENCH = "benchmarks/recsys/fiited.py"
DIM = 64  # our full embedding dimension (FiitedConfig.dim)

STRONGEST = Baseline(
    name="the smallest baseline table at equal AUC (uniform, row-prune, mixed-dim, hashing or elem-prune)",
    why="every baseline at every budget of the sweep; the one with the fewest bytes whose paired AUC difference "
    "to the full table is within the declared accuracy tolerance is what a practitioner would pick instead",
)
FULL_WEAKER = Baseline(
    name="full table (d floats per id)",
    why="the paper's reductions are stated against the unpruned table",
    strongest=False,
    stronger="the smallest baseline table at equal AUC (benchmarks/recsys/fiited_sweep.py)",
)

DATA = Assumption(
    name="data",
    value="synthetic Criteo-shaped, 20,000 rows, 5 seeds, budgets 0.02, 0.1, 0.5",
    sourced=False,
    choices=("synthetic Criteo-shaped, 20,000 rows, 5 seeds, budgets 0.02, 0.1, 0.5",),
    why="the paper's public data sets are not named in the abstracts; one recorded sweep (not varied): chunk 16 "
    "of d = 64, load factor 0.8, teacher widths up to 8 graded by frequency",
)
ROWS = (1e6, 1e7, 1e8, 1e9)  # table sizes of the one-chunk MODEL (ids per table)


def floor_share(chunk: int, load_factor: float, dim: int = DIM, rows: float = 1e6) -> float:
    """FIITED's least bytes (one chunk per id plus the pointers) as a share of the full table's."""
    m = TableModel(rows=rows, dim=dim, chunk=chunk, load_factor=load_factor)
    return m.floor_bytes / m.full_bytes


def _versus_best(data: str) -> Figure:
    fi, base = recorded("fiited_sweep.fiited_share"), recorded("fiited_sweep.best_baseline_share")
    low = recorded("fiited_sweep.smallest_budget")
    grid = (
        "; both already at the sweep's smallest budget, so the figure is limited by the grid (a uniform table "
        "rounds down to whole floats per id)"
        if max(fi, base) <= low * 1.01
        else ""
    )
    return Figure(
        base / fi,
        note=f"smallest tables within the accuracy tolerance of the full AUC: FIITED {fi:.4f} of the full bytes "
        f"({1 / fi:.1f}x), best baseline {base:.4f} ({1 / base:.1f}x){grid}",
    )


def _largest_reduction(data: str) -> Figure:
    fi, low = recorded("fiited_sweep.fiited_share"), recorded("fiited_sweep.smallest_budget")
    return Figure(
        1 / fi,
        note=f"FIITED's largest reduction within the accuracy tolerance of the full AUC; the sweep's smallest budget "
        f"is {low:g} ({1 / low:.0f}x)",
    )


def cap(dim: int, chunks: int, load_factor: float) -> Figure:
    """MODEL: FIITED's largest reduction against the full table (one chunk per id), maximised over table sizes."""
    best = max(
        ROWS, key=lambda r: TableModel(rows=r, dim=dim, chunk=dim // chunks, load_factor=load_factor).max_reduction
    )
    m = TableModel(rows=best, dim=dim, chunk=dim // chunks, load_factor=load_factor)
    return Figure(m.max_reduction, note=f"at {best:.0e} ids, d = {dim}, {chunks} chunks of {dim // chunks}")


def _industrial() -> float:
    raise NotTestedHere("the two industry models and their months of data are not public")


def _versus_elem(data: str) -> Figure:
    fi, el = recorded("fiited_sweep.fiited_share"), recorded("fiited_sweep.elem_share")
    return Figure(el / fi, note=f"elem-prune {el:.4f} vs FIITED {fi:.4f} of the full bytes at the full AUC")


CLAIMS: tuple[Claim, ...] = (
    Claim(
        technique=TECHNIQUE,
        key="public_low",
        text="public CTR data: tables 2.1x smaller with negligible accuracy drop (low end of 2.1x-800x), "
        "measured against the smallest baseline table at equal AUC",
        kind="speedup",
        paper=2.1,
        paper_source=f"{PAPER} v2, abstract",
        unit="x",
        baseline=STRONGEST,
        assumptions=(DATA,),
        evidence=(BENCH,),
        measure=lambda data: _versus_best(data),
        scale="measured",
    ),
    Claim(
        technique=TECHNIQUE,
        key="public_max_v2",
        text="public CTR data: tables up to 800x smaller with negligible accuracy drop",
        kind="speedup",
        paper=800.0,
        paper_source=f"{PAPER} v2, abstract",
        unit="x",
        baseline=FULL_WEAKER,
        assumptions=(DATA,),
        evidence=(BENCH,),
        measure=lambda data: _largest_reduction(data),
        scale="measured",
        up_to=True,
    ),
    Claim(
        technique=TECHNIQUE,
        key="public_max_v1",
        text="public CTR data: up to 99.75 % of embeddings pruned (= 400x) without significant accuracy loss",
        kind="speedup",
        paper=400.0,
        paper_source=f"{PAPER} v1, abstract ('up to 93.75 %-99.75 %'; 99.75 % = 400x)",
        unit="x",
        baseline=FULL_WEAKER,
        assumptions=(DATA,),
        evidence=(BENCH,),
        measure=lambda data: _largest_reduction(data),
        scale="measured",
        up_to=True,
    ),
    Claim(
        technique=TECHNIQUE,
        key="industrial",
        text="two industry models, months of data: embedding size reduced by more than 65 % at preserved quality",
        kind="gain",
        paper=0.65,
        paper_source=f"{PAPER} v1, v2, abstract",
        unit="",
        baseline=FULL_WEAKER,
        assumptions=(),
        evidence=(BENCH,),
        measure=_industrial,
    ),
    Claim(
        technique=TECHNIQUE,
        key="beats_sota",
        text="outperforms a state-of-the-art in-training embedding pruning method (bytes at equal AUC; "
        "1 = parity, the abstract gives no figure)",
        kind="speedup",
        paper=1.0,
        paper_source=f"{PAPER} v1, v2, abstract (method unnamed)",
        unit="x",
        baseline=Baseline(
            name="elem-prune (our inferred stand-in for the unnamed method)",
            why="magnitude pruning of single elements during training, at FIITED's budget",
            strongest=False,
            stronger="the smallest baseline table at equal AUC",
        ),
        assumptions=(DATA,),
        evidence=(BENCH,),
        measure=lambda data: _versus_elem(data),
    ),
    Claim(
        technique=TECHNIQUE,
        key="throughput",
        text="improves throughput (our measure: the VHPI lookup against nn.EmbeddingBag on the same ids; "
        "1 = parity, the abstract gives no figure)",
        kind="speedup",
        paper=1.0,
        paper_source=f"{PAPER} v2, abstract ('while improving model throughput')",
        unit="x",
        baseline=Baseline(name="nn.EmbeddingBag (dense table)", why="what a DLRM looks up its features with"),
        assumptions=(),
        evidence=(LOOKUP_BENCH,),
        measure=lambda: recorded("fiited.lookup_speedup"),
    ),
)
