"""CTR data: the shared samples read through the registry (corrupt files refused with their name and line), the
synthetic generator (deterministic, Criteo's shape, planted labels: the oracle AUC from scikit-learn's
``roc_auc_score`` equals a brute-force pairwise AUC), the Zipf exponents fitted on the sample."""

import numpy as np
import pytest

from workbench.recsys.dlrm import evaluate
from workbench.recsys.samples import load_sample
from workbench.recsys.synthetic import (
    CRITEO_CARDINALITIES,
    CRITEO_ZIPF,
    SyntheticSpec,
    generate,
    load_or_generate,
    scaled_cardinalities,
)
from workbench.recsys.zipf import fit_zipf_exponent, zipf_sampler


@pytest.mark.parametrize("name,rows,features", [("criteo", 200, 26), ("avazu", 100, 21), ("movielens", 200, 7)])
def test_samples_load(name, rows, features):
    data = load_sample(name)
    assert data.sparse.shape == (rows, features)
    assert set(np.unique(data.label)) <= {0.0, 1.0}
    assert all(data.sparse[:, j].max() < c for j, c in enumerate(data.cardinalities))


def test_corrupt_sample_is_refused_naming_the_file(tmp_path, monkeypatch):
    folder = tmp_path / "ctr"
    folder.mkdir()
    for name in ("criteo_sample.txt", "avazu_sample.txt", "movielens_sample.txt", "LICENSE"):
        (folder / name).write_text("label,I1\n1,2\n")
    (folder / "criteo_sample.txt").write_text("label,I1,C1\n0,1,ab\n1,2\n")
    with pytest.raises(ValueError, match=r"criteo_sample.txt line 3 has 2 fields.*corrupt"):
        load_sample("criteo", tmp_path)
    (folder / "criteo_sample.txt").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match=r"criteo_sample.txt is not UTF-8"):
        load_sample("criteo", tmp_path)


def test_generator_is_deterministic_and_criteo_shaped():
    spec = SyntheticSpec(rows=5001, vocab_scale=0.001, seed=3)
    a, b = generate(spec), generate(spec)
    assert np.array_equal(a.data.sparse, b.data.sparse) and np.array_equal(a.data.label, b.data.label)
    assert a.data.sparse.shape == (5001, 26) and a.data.dense.shape == (5001, 13)
    assert a.data.cardinalities == scaled_cardinalities(0.001)
    assert all(a.data.sparse[:, f].max() < c for f, c in enumerate(a.data.cardinalities))
    assert 0.2 < a.data.label.mean() < 0.3  # Criteo's CTR is 0.256


def test_oracle_auc_from_sklearn_equals_brute_force_pairs():
    d = generate(SyntheticSpec(rows=701, vocab_scale=0.0005, seed=1))
    auc, _ = evaluate(d.data.label, d.probability.astype(np.float64))
    pos, neg = d.probability[d.data.label == 1], d.probability[d.data.label == 0]
    diff = pos[:, None] - neg[None, :]
    brute = (np.sum(diff > 0) + 0.5 * np.sum(diff == 0)) / diff.size
    assert auc == pytest.approx(brute, abs=1e-12)
    assert 0.65 < auc < 0.999  # the planted signal is strong (pair term std 6): near-separable, not perfect


def test_cached_file_round_trips_and_a_corrupt_one_is_refused(tmp_path):
    spec = SyntheticSpec(rows=300, vocab_scale=0.0005)
    made = load_or_generate(spec, tmp_path)
    again = load_or_generate(spec, tmp_path)
    assert np.array_equal(made.data.sparse, again.data.sparse)
    (path,) = tmp_path.glob("ctr-*.npz")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ValueError, match=r"dataset file .*ctr-.*\.npz is corrupt.*delete it"):
        load_or_generate(spec, tmp_path)


@pytest.mark.slow  # >0.6 s: keeps the fast lane (-m "not slow") under a minute
def test_zipf_fit_recovers_a_known_exponent():
    rng = np.random.default_rng(0)
    ids = zipf_sampler(50_000, 1.1)(rng, 400)
    assert abs(fit_zipf_exponent(ids, 50_000).s - 1.1) < 0.25


@pytest.mark.slow
def test_fitted_exponents_are_the_stated_ones():
    data = load_sample("criteo")
    fitted = [
        fit_zipf_exponent(data.sparse[:, j], max(CRITEO_CARDINALITIES[j], data.cardinalities[j])).s for j in range(26)
    ]
    assert tuple(fitted) == CRITEO_ZIPF


def test_teacher_width_grows_with_frequency():
    """Reference: the closed form floor(K min(1, n / full_count)^grade) per rank, non-increasing in rank, K for
    the hottest id of a small field, 0 for the rarest of a large one; grade 0 gives every id K (flat)."""
    from workbench.recsys.synthetic import teacher_dims
    from workbench.recsys.zipf import zipf_probabilities

    spec = SyntheticSpec(rows=40_000, vocab_scale=0.0002, teacher_dim=8, full_count=1000.0, grade=1.0)
    widths = teacher_dims(spec)
    for f, (n, s) in enumerate(zip(spec.cardinalities, spec.exponents)):
        want = np.floor(8 * np.minimum(1, 40_000 * zipf_probabilities(n, s) / 1000.0))
        assert np.array_equal(widths[f], want.astype(np.int64))
        assert np.all(np.diff(widths[f]) <= 0)
    assert widths[5][0] == 8 and widths[2][-1] == 0  # C6 (24 values) hottest; C3 (largest) rarest
    flat = teacher_dims(SyntheticSpec(rows=1000, grade=0.0, teacher_dim=8))
    assert all(np.all(w == 8) for w in flat)


def test_generated_widths_follow_the_ids_and_the_statistics_name_their_sources():
    from workbench.recsys.synthetic import SOURCES, statistics_rows, teacher_dims

    spec = SyntheticSpec(rows=2000, vocab_scale=0.0005, seed=2)
    made = generate(spec)
    counts = [np.bincount(made.data.sparse[:, f], minlength=c) for f, c in enumerate(spec.cardinalities)]
    offsets = np.concatenate([[0], np.cumsum(spec.cardinalities)[:-1]])
    for f in (5, 8):  # small fields: the most frequent id is rank 1, the widest
        hottest = int(np.argmax(counts[f]))
        assert made.teacher_dims[offsets[f] + hottest] == teacher_dims(spec)[f][0]
    rows = statistics_rows(spec)
    assert len(rows) == 27 and rows[2][1] == f"{CRITEO_CARDINALITIES[2]:,}" and rows[-1][0] == "click rate"
    assert set(SOURCES) == {"cardinality", "zipf", "ctr"} and "Criteo" in SOURCES["cardinality"]
