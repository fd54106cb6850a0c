"""FIITED's paper claims as data (arXiv 2401.04408; only the v1 and v2 abstracts could be read, see
``papers/further/fiited.md``), each with its baseline, assumptions and measure; the verdicts are computed by
:func:`workbench.claims.verdict`.

What the figures rest on:

- The accuracy figures come from real training runs (5 seeds per budget, budgets 0.02, 0.1 and 0.5 of the full table
  for every method, ``benchmarks/recsys/fiited_sweep.py``; 0.005 and 0.01 for FIITED and hashing, the only tables
  that go below one float per id, ``benchmarks/recsys/fiited_low.py``) on synthetic Criteo-shaped data whose
  teacher gives hot ids up to 4 dimensions of information and rare ids none beyond a scalar. "Negligible accuracy
  drop" is the declared accuracy tolerance (:data:`workbench.claims.TOLERANCES`), applied to the paired
  difference to the full table of the same seed. The runs cost minutes, so the measures read the figures the
  benchmarks record (``python -m benchmarks.run --only fiited_sweep --only fiited_low``).
- How far down the budget grid goes is a cut-off (:data:`REACH`: the largest reduction swept, 1 / the smallest
  budget): a smallest table "within tolerance" can be no smaller than the grid's smallest budget, so the memory
  figures are computed at each reach of its range and the verdict asks that they have stopped changing.
- An id may drop to no chunk (it reads its feature's shared default vector), so FIITED has no one-chunk floor;
  its bytes are the served table's (chunks, keys, pointers, default vectors). :func:`floor_share` and
  :func:`cap` keep the MODEL of the one-chunk variant (``min_chunks = 1``) for reference.
"""

from __future__ import annotations

from workbench.claims import Assumption, Baseline, Claim, Figure, NotTestedHere, recorded
from workbench.recsys.fiited.model import TableModel

__all__ = ["CLAIMS", "floor_share", "cap", "shares", "low_key", "LOW_BUDGETS", "LOW_METHODS", "REACH"]

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
    value="synthetic Criteo-shaped, 20,000 rows, 5 seeds",
    sourced=False,
    choices=("synthetic Criteo-shaped, 20,000 rows, 5 seeds",),
    why="the paper's public data sets are not named in the abstracts; one recorded sweep (not varied): chunk 16 "
    "of d = 64, load factor 0.8, teacher widths up to 4 graded by frequency (pair term std 6), Adagrad lr 0.02",
)
ROWS = (1e6, 1e7, 1e8, 1e9)  # table sizes of the one-chunk MODEL (ids per table)
#: budgets below the main sweep's 0.02, run for the tables that can go there (benchmarks/recsys/fiited_low.py)
LOW_BUDGETS = (0.005, 0.01)
#: the methods run at LOW_BUDGETS: uniform, row-prune, mixed-dim and elem-prune keep >= 4 B per id (>= 1/64)
LOW_METHODS = ("fiited", "hashing")
REACH = Assumption(
    name="reach",
    value=200.0,
    sourced=False,
    lo=50.0,
    hi=200.0,
    log=True,
    cutoff=True,
    unit="x",
    why="the largest reduction the budget grid reaches (1 / its smallest budget): 50x is the main sweep's 0.02, "
    "100x and 200x add 0.01 and 0.005 for FIITED and hashing; FIITED's least table (one default vector per "
    "feature) is 0.0034 of the full one (294x), so 200x is the last grid point above it",
)


def low_key(method: str, budget: float) -> str:
    """The recorded key of ``method``'s bytes / full at a low budget (NaN: not within the accuracy tolerance)."""
    return f"fiited_low.{method}_share[{budget:g}]"


def _smallest(main_key: str, method: str, reach: float) -> float:
    """The smallest bytes / full within the accuracy tolerance over the grid down to 1 / ``reach``: the main
    sweep's figure and the low budgets at or above 1 / ``reach`` (NaN where none is within it)."""
    values = [recorded(main_key)]
    values += [recorded(low_key(method, b)) for b in LOW_BUDGETS if b >= (1 - 1e-9) / reach]
    values = [v for v in values if v == v]
    return min(values) if values else float("nan")


def shares(reach: float) -> dict[str, float]:
    """FIITED's, the best baseline's and elem-prune's smallest bytes / full within tolerance at ``reach``."""
    return {
        "fiited": _smallest("fiited_sweep.fiited_share", "fiited", reach),
        "best": _smallest("fiited_sweep.best_baseline_share", "hashing", reach),
        "elem": recorded("fiited_sweep.elem_share"),
    }


def floor_share(chunk: int, load_factor: float, dim: int = DIM, rows: float = 1e6) -> float:
    """FIITED's least bytes (one chunk per id plus the pointers) as a share of the full table's."""
    m = TableModel(rows=rows, dim=dim, chunk=chunk, load_factor=load_factor)
    return m.floor_bytes / m.full_bytes


def _versus_best(data: str, reach: float) -> Figure:
    got = shares(reach)
    fi, base = got["fiited"], got["best"]
    grid = (
        "; both at the grid's smallest budget, so the figure is limited by the grid"
        if max(fi, base) <= 1.01 / reach
        else ""
    )
    return Figure(
        base / fi,
        note=f"smallest tables within the accuracy tolerance of the full AUC, grid down to {1 / reach:g}: FIITED "
        f"{fi:.4f} of the full bytes ({1 / fi:.1f}x), best baseline {base:.4f} ({1 / base:.1f}x){grid}",
    )


def _largest_reduction(data: str, reach: float) -> Figure:
    fi = shares(reach)["fiited"]
    return Figure(
        1 / fi,
        note=f"FIITED's largest reduction within the accuracy tolerance of the full AUC; the grid reaches "
        f"{1 / reach:g} ({reach:.0f}x)",
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


def _versus_elem(data: str, reach: float) -> Figure:
    got = shares(reach)
    fi, el = got["fiited"], got["elem"]
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
        assumptions=(DATA, REACH),
        evidence=(BENCH,),
        measure=_versus_best,
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
        assumptions=(DATA, REACH),
        evidence=(BENCH,),
        measure=_largest_reduction,
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
        assumptions=(DATA, REACH),
        evidence=(BENCH,),
        measure=_largest_reduction,
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
        assumptions=(DATA, REACH),
        evidence=(BENCH,),
        measure=_versus_elem,
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
