"""The storage MODEL: the read-time law in its two regimes, the calibration recovering a known device, the
loaders' modelled reads against their definitions, and the paper-scale table labelled MODEL.

References: closed forms written out by hand for small cases; a synthetic device with known latency and
bandwidth.
"""

from __future__ import annotations

import numpy as np
import pytest

from workbench.llm.redox import model as M


def test_read_time_latency_and_bandwidth_bound() -> None:
    dev = M.Storage("x", 1e-3, 1e8, 4, "test")
    assert M.read_time(100, 4096, dev, 1) == pytest.approx(100 * (1e-3 + 4096 / 1e8))
    assert M.read_time(100, 4096, dev, 16) == pytest.approx(100 * (1e-3 + 4096 / 1e8) / 4)  # queue depth caps q
    assert M.read_time(10, 1e9, dev, 4) == pytest.approx(10 * 1e9 / 1e8)  # big reads: bandwidth-bound


def test_calibration_recovers_a_known_device() -> None:
    rng = np.random.default_rng(0)
    sizes = np.repeat([4096.0, 65536.0, 1 << 20, 4 << 20], 9)
    seconds = 2e-4 + sizes / 5e8 + rng.normal(0, 1e-7, sizes.size)
    dev = M.calibrate(sizes, seconds)
    assert dev.latency_s == pytest.approx(2e-4, rel=0.02) and dev.bandwidth == pytest.approx(5e8, rel=0.02)
    assert "36 cold reads (4 sizes)" in dev.source


def test_epoch_models_follow_their_definitions() -> None:
    dev = M.STORAGE["hdd"]
    m = M.epoch_models(files=1000, total_bytes=1000 * 100_000, chunk_bytes=10e6, memory_bytes=20e6, storage=dev)
    assert m["redox"].reads == 10 and m["redox"].read_amplification == pytest.approx(1.0)
    assert m["random-files"].reads == 1000
    assert m["random-files"].bytes_read == 1000 * 102_400  # 25 pages of 4 KiB each
    assert m["random-packed"].read_amplification > 1
    assert m["redox"].io_seconds < m["random-files"].io_seconds  # 10 seeks instead of 1000 on a disk
    assert M.speedup(m) == pytest.approx(m["random-files"].epoch_seconds / m["redox"].epoch_seconds)


def test_compute_bound_means_no_speedup() -> None:
    m = M.paper_scale(M.STORAGE["nvme-ssd"], M.DATASETS["imagenet-1k"], gpus=1)
    assert M.speedup(m) == pytest.approx(1.0)
    hdd = M.paper_scale(M.STORAGE["hdd"], M.DATASETS["imagenet-1k"], gpus=8)
    assert M.speedup(hdd) > M.PAPER_SPEEDUP  # a single HDD: the random reader is far slower
    assert M.DATASETS["imagenet-21k"].total_bytes == 1.1e12  # the paper's figure (v2 section 1)


def test_paper_scale_table_is_labelled() -> None:
    from workbench.llm.redox.study import paper_scale_table

    rows = paper_scale_table()
    assert {r["label"] for r in rows} == {"MODEL"}
    assert {r["storage"] for r in rows} == {"hdd", "sata-ssd", "nvme-ssd", "network-fs"}
    assert len(rows) == 12 and all(r["speedup"] > 0 for r in rows)
