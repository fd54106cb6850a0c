"""The shared hardware model (reference: the alpha-beta formula ``latency + bytes / bandwidth`` by hand)."""

import dataclasses

import numpy as np
import pytest

from workbench.cluster import (
    PRESETS,
    ClusterSpec,
    link_bandwidth,
    link_latency,
    node_of,
    preset,
    same_node,
    transfer_seconds,
)


def test_defaults_are_the_documented_h800_class_node():
    c = ClusterSpec()
    assert (c.gpu_tflops, c.gpu_memory_gb, c.gpus_per_node) == (400.0, 80.0, 8)
    assert (c.intra_node_bw_gbps, c.inter_node_bw_gbps) == (200.0, 25.0)
    assert c.flops_per_second == 400e12
    assert c.memory_bytes == 80e9
    assert (c.peak_tflops, c.hbm_bw_gbps) == (989.0, 3350.0)  # H100/H800 SXM datasheet
    assert c.peak_flops_per_second == 989e12 and c.hbm_bytes_per_second == 3350e9


def test_presets_are_the_testbeds_and_the_default_is_one_of_them():
    assert PRESETS["h800-sxm-nvlink-ib"] == ClusterSpec()
    a100 = PRESETS["a100-40gb-sxm-nvlink"]
    assert (a100.peak_tflops, a100.gpu_memory_gb, a100.hbm_bw_gbps, a100.intra_node_bw_gbps) == (
        312.0,
        40.0,
        1555.0,
        300.0,
    )
    a100_80 = PRESETS["a100-80gb-pcie4-nvme"]
    assert (a100_80.gpu_memory_gb, a100_80.hbm_bw_gbps, a100_80.ssd_read_bw_gbps) == (80.0, 2039.0, 6.5)
    for spec in PRESETS.values():  # an effective rate never exceeds the datasheet peak
        assert spec.gpu_tflops <= spec.peak_tflops
    # preset() gives a config default's keyword arguments, with changes
    assert ClusterSpec(**preset("a100-40gb-sxm-nvlink")) == a100
    assert ClusterSpec(**preset("a100-40gb-sxm-nvlink", pcie_bw_gbps=12.0)) == dataclasses.replace(
        a100, pcie_bw_gbps=12.0
    )
    with pytest.raises(ValueError, match="preset='tpu' is unknown: valid presets are"):
        preset("tpu")
    with pytest.raises(ValueError, match="are not ClusterSpec fields"):
        preset("a100-40gb-sxm-nvlink", nvlink=900)


def test_frozen_and_keyword_only():
    c = ClusterSpec()
    with pytest.raises(AttributeError):
        c.gpu_tflops = 1.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        ClusterSpec(400.0)  # type: ignore[misc]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"gpus_per_node": 0}, "gpus_per_node=0 is out of range: valid range is 1..1024 (GPUs)"),
        ({"gpu_tflops": -1.0}, "gpu_tflops=-1 is out of range"),
        ({"inter_node_bw_gbps": 0.0}, "inter_node_bw_gbps=0 is out of range"),
        ({"intra_node_latency_us": -3.0}, "intra_node_latency_us=-3 is out of range"),
        ({"gpu_memory_gb": float("nan")}, "gpu_memory_gb=nan is out of range"),
        ({"gpus_per_node": 2.5}, "gpus_per_node=2.5 is not an integer"),
    ],
)
def test_bad_fields_name_field_value_and_range(kwargs, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        ClusterSpec(**kwargs)


def test_from_dict_rejects_unknown_keys_and_coerces_strings():
    assert ClusterSpec.from_dict({"gpus-per-node": "4"}).gpus_per_node == 4
    with pytest.raises(ValueError, match="unknown parameter 'nvlink'"):
        ClusterSpec.from_dict({"nvlink": 900})


def test_node_and_link_classification():
    c = ClusterSpec(gpus_per_node=4)
    assert node_of(7, c) == 1
    assert list(node_of(np.arange(9), c)) == [0, 0, 0, 0, 1, 1, 1, 1, 2]
    assert same_node(0, 3, c) and not same_node(3, 4, c)
    assert link_bandwidth(0, 3, c) == 200e9 and link_bandwidth(3, 4, c) == 25e9
    assert link_latency(0, 1, c) == pytest.approx(5e-6) and link_latency(0, 4, c) == pytest.approx(10e-6)


def test_transfer_seconds_is_alpha_beta_by_hand():
    c = ClusterSpec(
        gpus_per_node=8,
        intra_node_bw_gbps=100.0,
        inter_node_bw_gbps=10.0,
        intra_node_latency_us=2.0,
        inter_node_latency_us=20.0,
    )
    n = 3e9
    assert transfer_seconds(n, 1, 2, c) == pytest.approx(2e-6 + n / 100e9)
    assert transfer_seconds(n, 1, 9, c) == pytest.approx(20e-6 + n / 10e9)
    assert transfer_seconds(n, 5, 5, c) == 0.0  # a rank does not message itself
    assert c.transfer_seconds(0, 1, 9) == 0.0  # no bytes, no message
    got = c.transfer_seconds(np.array([n, n, n]), np.array([0, 0, 0]), np.array([0, 7, 8]))
    np.testing.assert_allclose(got, [0.0, 2e-6 + n / 100e9, 20e-6 + n / 10e9])


def test_message_seconds_broadcasts_over_link_classes():
    c = ClusterSpec()
    got = c.message_seconds(np.array([[1e9], [2e9]]), np.array([False, True]))
    np.testing.assert_allclose(
        got, [[5e-6 + 1e9 / 200e9, 10e-6 + 1e9 / 25e9], [5e-6 + 2e9 / 200e9, 10e-6 + 2e9 / 25e9]]
    )


def test_compute_seconds_and_num_nodes():
    c = ClusterSpec(gpu_tflops=500.0, gpus_per_node=8)
    assert c.compute_seconds(1e15) == pytest.approx(2.0)
    np.testing.assert_allclose(c.compute_seconds(np.array([5e14, 1e15])), [1.0, 2.0])
    assert (c.num_nodes(1), c.num_nodes(8), c.num_nodes(9), c.num_nodes(256)) == (1, 1, 2, 32)
    with pytest.raises(ValueError, match="gpus=0 is invalid"):
        c.num_nodes(0)


def test_bad_ranks_raise():
    c = ClusterSpec()
    with pytest.raises(ValueError, match="rank=-1 is invalid"):
        node_of(-1, c)
    with pytest.raises(ValueError, match="src=1.5 is invalid"):
        same_node(1.5, 2, c)
