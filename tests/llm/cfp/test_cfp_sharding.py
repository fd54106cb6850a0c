"""Placements and resharding plans (reference: a single-process simulation of every rank's shard, moved by the
textbook meaning of each collective), mesh parsing and strategy enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from workbench.llm.cfp.sharding import Mesh, local_shape, parse_mesh, reshard_steps, step_bytes


def shard(t: np.ndarray, pl, mesh: Mesh, coords) -> np.ndarray:
    for m, p in enumerate(pl):
        if isinstance(p, int):
            t = np.array_split(t, mesh.shape[m], axis=p)[coords[m]]
    return t


def simulate(locals_, steps, mesh: Mesh):
    """Apply the steps to every rank's local array (numpy; what each collective means, nothing else)."""
    cur = dict(locals_)
    for st in steps:
        new = {}
        for group in mesh.groups(st.axis):
            parts = [cur[r] for r in group]
            p = len(group)
            for i, r in enumerate(group):
                if st.kind == "allreduce":
                    new[r] = sum(parts)
                elif st.kind == "reducescatter":
                    new[r] = np.array_split(sum(parts), p, axis=st.dim)[i]
                elif st.kind == "allgather":
                    new[r] = np.concatenate(parts, axis=st.dim)
                elif st.kind == "slice":
                    new[r] = np.array_split(parts[i], p, axis=st.dim)[i]
                elif st.kind == "alltoall":
                    new[r] = np.concatenate([np.array_split(q, p, axis=st.dim2)[i] for q in parts], axis=st.dim)
        cur = new
    return cur


def placements(ndim: int, rank: int, partial: bool):
    opts = ["R", *range(rank)] + (["P"] if partial else [])
    return list(itertools.product(opts, repeat=ndim))


@pytest.mark.parametrize("mesh_shape", [(3,), (2, 2), (2, 3)])
def test_every_reshard_lands_on_the_destination_shards(mesh_shape):
    mesh = Mesh(mesh_shape)
    shape = (12, 12, 6 * mesh.size)  # divisible by every product of the mesh's axes
    rng = np.random.default_rng(0)
    full = rng.standard_normal(shape)
    for src in placements(mesh.ndim, 3, partial=True):
        for dst in placements(mesh.ndim, 3, partial=False):
            locals_ = {}
            for r in range(mesh.size):
                c = mesh.coords(r)
                x = shard(full, src_no_p(src), mesh, c)
                # a partial placement: member i of each P-axis holds (i + 1) / sum share of the value
                w = 1.0
                for m, p in enumerate(src):
                    if p == "P":
                        w *= (c[m] + 1) / (mesh.shape[m] * (mesh.shape[m] + 1) / 2)
                locals_[r] = x * w
            steps = reshard_steps(src, dst, shape, mesh)
            out = simulate(locals_, steps, mesh)
            for r in range(mesh.size):
                np.testing.assert_allclose(out[r], shard(full, dst, mesh, mesh.coords(r)), rtol=0, atol=1e-12)
                assert out[r].shape == local_shape(shape, dst, mesh)


def src_no_p(src):
    return tuple("R" if p == "P" else p for p in src)


def test_special_collectives_are_chosen():
    mesh = Mesh((4,))
    shape = (8, 8)
    assert [s.kind for s in reshard_steps(("P",), (0,), shape, mesh)] == ["reducescatter"]
    assert [s.kind for s in reshard_steps(("P",), ("R",), shape, mesh)] == ["allreduce"]
    assert [s.kind for s in reshard_steps((0,), (1,), shape, mesh)] == ["alltoall"]
    assert [s.kind for s in reshard_steps((0,), ("R",), shape, mesh)] == ["allgather"]
    assert [s.kind for s in reshard_steps(("R",), (1,), shape, mesh)] == ["slice"]
    assert reshard_steps((1,), (1,), shape, mesh) == []


def test_step_bytes_follow_comm_counting():
    mesh = Mesh((4,))
    (st,) = reshard_steps(("P",), ("R",), (8, 8), mesh)
    assert step_bytes(st, mesh, 8) == (2 * 3 * 512 // 4, 0)
    (st,) = reshard_steps((0,), ("R",), (8, 8), mesh)
    assert step_bytes(st, mesh, 8) == (3 * 128, 0)  # each rank sends its 2x8 shard to 3 peers
    (st,) = reshard_steps(("R",), (0,), (8, 8), mesh)
    assert step_bytes(st, mesh, 8) == (0, 3 * 128)  # backward all-gathers the gradient shard


@pytest.mark.parametrize(
    "text,devices,message",
    [
        ("2x3", 4, "mesh='2x3' does not match gpus=4"),
        ("axb", None, "mesh='axb' is invalid"),
        ("2x2x2", None, "mesh='2x2x2' is invalid: valid meshes are 1-D"),
        ("0", None, "mesh='0' is invalid"),
    ],
)
def test_bad_mesh_names_the_parameter(text, devices, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse_mesh(text, devices)


def test_mesh_coordinates_and_groups():
    mesh = parse_mesh("2x3", 6)
    assert mesh.coords(4) == (1, 1) and mesh.rank((1, 1)) == 4
    assert mesh.groups(0) == [[0, 3], [1, 4], [2, 5]]
    assert mesh.groups(1) == [[0, 1, 2], [3, 4, 5]]
