"""Redox's claims (workbench/llm/redox/claims.py): each evaluates, its computed verdict is pinned with the reason it
is the honest outcome, and every inferred assumption's sweep moves the figure (or the test says why it cannot).

The verdicts and sweeps are read from the committed records (VERDICTS.json), which tests/test_claims_contract.py
checks against a fresh evaluation; the figures are recomputed here only where a test compares one with an
independent computation."""

import pytest

import workbench.claims as wc
from workbench.claims import committed
from workbench.llm.redox import study
from workbench.llm.redox.claims import CLAIMS

BY_KEY = {c.key: c for c in CLAIMS}
RECORDS = {r["key"]: r for r in committed("redox")}


def test_claims_are_declared_with_existing_evidence():
    assert list(BY_KEY) == [
        "speedup_end_to_end",
        "speedup_vs_block_shuffle",
        "chunk_read_once",
        "randomness",
        "convergence",
    ]
    assert [c.key for c in wc.claims_of("redox")] == list(BY_KEY)
    for c in CLAIMS:
        for ev in c.evidence:
            path, _, name = ev.partition("::")
            assert not name or f"def {name}(" in open(path).read(), ev


def test_speedup_is_against_a_weaker_baseline_and_depends_on_the_storage_kind():
    r = RECORDS["speedup_end_to_end"]
    # the comparison is with the PyTorch loader, weaker than block shuffle over the same chunks (the MODEL gives
    # Redox 1.0x over it), so the rule says not reproduced whatever the storage; the sweep still shows where the
    # paper's figure would come from: on NVMe (and SATA SSD) the PyTorch loader keeps up with 8 GPUs (1.0x), on
    # an HDD every small random read pays a seek (20.3x)
    assert r["status"] == "not reproduced" and "weaker than block shuffle" in r["verdict"]
    assert [p["meets"] for p in r["sensitivity"]["storage"] if p["value"] == "hdd"] == [True]
    by = {p["value"]: p["ours"] for p in r["sensitivity"]["storage"]}
    assert by["nvme-ssd"] == pytest.approx(1.0, abs=0.01) and by["hdd"] > 20
    # even where it meets 4.57x the baseline is weaker than the block shuffle over the same chunks (the MODEL gives
    # Redox 1.0x over it): a reproduced verdict is impossible
    assert not BY_KEY["speedup_end_to_end"].baseline.strongest
    # every inferred setting moves the figure somewhere; on NVMe only the GPU count does (the loader is not the
    # bottleneck), so the others are checked on an HDD
    assert len({round(p["ours"], 6) for p in r["sensitivity"]["gpus"]}) > 1
    c = BY_KEY["speedup_end_to_end"]
    a = c.measure(**{**c.settings, "storage": "hdd", "chunk_mb": 16.0}).value
    b = c.measure(**{**c.settings, "storage": "hdd", "chunk_mb": 256.0}).value
    assert a != pytest.approx(b, rel=1e-6)
    # the memory budget is no assumption of this figure: the MODEL's page cache serves only the random reader over
    # packed files, not the random file reader the claim compares with
    assert "memory_fraction" not in c.settings


def test_speedup_over_block_shuffle_is_measured_against_the_strongest_baseline():
    c, r = BY_KEY["speedup_vs_block_shuffle"], RECORDS["speedup_vs_block_shuffle"]
    assert c.baseline.strongest and "block shuffle" in c.baseline.name
    # the figure is the benchmark's recorded ratio (cold epochs, K chunks each), and the note carries the bytes
    # read and the first batch beside it
    assert r["ours"] == pytest.approx(
        wc.recorded("redox.items_per_s_over_block_shuffle"), rel=1e-4
    )  # stored to 6 digits
    assert "bytes read block shuffle / Redox" in r["ours_note"]
    # both read every chunk once, whole: the bytes are the same, so Redox cannot be up to 4.57x faster; the
    # verdict is refuted (no faster at all) or not reproduced (faster, but far from 4.57x)
    assert wc.recorded("redox.amplification_block_shuffle_over_redox") == pytest.approx(1.0, abs=0.01)
    assert r["status"] in ("refuted", "not reproduced")


def test_chunk_read_once_is_reproduced():
    r = RECORDS["chunk_read_once"]
    # the protocol holds at every K: each chunk loaded once, all its records served inside its residency window.
    # The figure is 1 at every K by construction (a property, not a trend), so the sweep cannot move it
    assert r["status"] == "reproduced"
    assert {p["ours"] for p in r["sensitivity"]["resident"]} == {1.0}


def test_randomness_depends_on_the_layout_on_disk():
    r = RECORDS["randomness"]
    # with labels mixed on disk Redox's per-batch label KL is within RandomSampler's at every K; with chunks
    # sorted by class a batch drawn from K chunks holds few classes: the claim holds only for shuffled data
    assert r["status"] == "depends on" and "layout" in r["verdict"]
    assert all(p["meets"] for p in r["sensitivity"]["resident"])
    assert [p["meets"] for p in r["sensitivity"]["layout"] if p["value"] == "class-sorted"] == [False]
    assert len({round(p["ours"], 6) for p in r["sensitivity"]["resident"]}) > 1
    assert "block shuffle" in r["ours_note"]


@pytest.mark.slow  # trains the digits MLP: a few seconds
def test_convergence_is_the_learning_summary():
    c = BY_KEY["convergence"]
    assert c.settings == {"resident": 1, "layout": "shipped"}  # the summary below is at these settings
    curves = study.learning_curves("shipped", seeds=2, runs=(("full-shuffle", 1), ("redox", 1)))
    s = {r["order"]: r["final_mean"] for r in study.learning_summary(curves)}
    assert c.measure(**c.settings).value == pytest.approx(1 - (s["full-shuffle"] - s["redox"]))


def test_convergence_depends_on_the_layout_on_disk():
    r = RECORDS["convergence"]
    # labels mixed on disk: every K reaches the full shuffle's accuracy within 1 point; sorted by class, K = 1
    # trains on one class at a time and fails (block shuffle at the same K too: the note)
    assert r["status"] == "depends on" and "layout" in r["verdict"]
    assert all(p["meets"] for p in r["sensitivity"]["resident"])
    assert [p["meets"] for p in r["sensitivity"]["layout"] if p["value"] == "class-sorted"] == [False]
    assert "block shuffle" in r["ours_note"]
