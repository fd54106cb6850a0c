"""Gate matrices and the apply kernel. References: ``qiskit.quantum_info.Operator`` of each qiskit gate
(qiskit's own matrices and qubit order), and a dense Kronecker-product reference for the kernel."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from qiskit.circuit.library import get_standard_gate_name_mapping
from qiskit.quantum_info import Operator

from workbench.quantum.apply import apply_gathered, apply_matrix, embed, fuse, target_permutation
from workbench.quantum.gates import GATES, gate_matrix

MAPPING = get_standard_gate_name_mapping()


@pytest.mark.parametrize("name", sorted(GATES))
@pytest.mark.parametrize("dtype, tol", [(torch.complex128, 1e-14), (torch.complex64, 1e-6)])  # dtype round-off
def test_gate_matrix_equals_qiskit_operator(name, dtype, tol):
    gate = GATES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    for _ in range(3):
        angles = rng.uniform(-7, 7, gate.num_params)
        op = MAPPING[name] if not gate.num_params else type(MAPPING[name])(*angles)
        real = torch.float64 if dtype == torch.complex128 else torch.float32
        ours = gate_matrix(name, [torch.tensor(a, dtype=real) for a in angles], dtype=dtype)
        assert np.abs(ours.numpy() - Operator(op).data).max() <= tol


def test_batched_angles_give_one_matrix_each():
    theta = torch.linspace(-3, 3, 5, dtype=torch.float64)
    batch = gate_matrix("crx", [theta])
    assert batch.shape == (5, 4, 4)
    for i in range(5):
        assert torch.allclose(batch[i], gate_matrix("crx", [theta[i]]), atol=0, rtol=0)


def _dense(matrix: np.ndarray, targets: tuple[int, ...], n: int) -> np.ndarray:
    """The full 2**n matrix of ``matrix`` on ``targets`` (targets[0] least significant), by definition."""
    k = len(targets)
    full = np.zeros((2**n, 2**n), dtype=complex)
    for col in range(2**n):
        sub_in = sum(((col >> t) & 1) << j for j, t in enumerate(targets))
        rest = col & ~sum(1 << t for t in targets)
        for sub_out in range(2**k):
            row = rest | sum(((sub_out >> j) & 1) << t for j, t in enumerate(targets))
            full[row, col] += matrix[sub_out, sub_in]
    return full


@pytest.mark.parametrize("n, targets", [(1, (0,)), (3, (2,)), (3, (0, 2)), (3, (2, 0)), (5, (1, 4, 3)), (5, (3, 1))])
def test_apply_matrix_equals_dense_reference(n, targets):
    rng = np.random.default_rng(n + len(targets))
    d = 2 ** len(targets)
    m = rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d))
    state = rng.normal(size=(4, 2**n)) + 1j * rng.normal(size=(4, 2**n))
    out = apply_matrix(torch.tensor(state), torch.tensor(m)[None], targets, n).numpy()
    assert np.abs(out - state @ _dense(m, targets, n).T).max() < 1e-12
    # per-row targets (gather path) give the same
    perm = torch.as_tensor(target_permutation(targets, n).copy()).expand(4, -1)
    inverse = torch.argsort(perm, dim=1)
    gathered = apply_gathered(torch.tensor(state), torch.tensor(m).expand(4, d, d), perm, inverse).numpy()
    assert np.abs(gathered - out).max() < 1e-12


def test_embed_and_fuse_keep_the_product():
    rng = np.random.default_rng(7)
    n = 4
    parts = []
    for targets in [(0,), (1, 2), (3,), (2,), (0, 3), (1,), (2, 3), (0,)]:
        d = 2 ** len(targets)
        parts.append((targets, torch.tensor(rng.normal(size=(d, d)) + 1j * rng.normal(size=(d, d)))[None]))
    total = np.eye(2**n)
    for targets, m in parts:
        total = _dense(m[0].numpy(), targets, n) @ total
    for width in (1, 2, 3, 4):
        fused = np.eye(2**n)
        for block in fuse(parts, width):
            assert len(block.qubits) <= max(width, max(len(q) for q, _ in block.parts))
            fused = _dense(block.matrix()[0].numpy(), tuple(block.qubits), n) @ fused
        assert np.abs(fused - total).max() < 1e-10
    m = parts[1][1]
    assert np.abs(embed(m, (2, 0), 3)[0].numpy() - _dense(m[0].numpy(), (2, 0), 3)).max() < 1e-14
