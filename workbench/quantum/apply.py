"""The one kernel both simulators share: apply a k-qubit matrix to a batch of n-qubit vectors.

A state is ``[..., 2**n]`` in qiskit order (qubit q is bit q of the index). A density matrix is handled as a
vector on ``2n`` *virtual* qubits (``vec(rho)`` row-major: virtual qubit q is column bit q, virtual qubit
``n + q`` is row bit q), on which a channel is a ``4**k x 4**k`` superoperator; see
:mod:`workbench.quantum.density`.

Three ways to apply, all tested against a dense ``kron`` reference:

- :func:`apply_matrix`: one set of target qubits for the whole batch (same circuit, a batch of parameter
  values or of matrices). The target axes are moved last and the batch is one ``matmul``.
- :func:`apply_gathered`: a different set of targets per batch row (a batch of *different* circuits). Each
  row is permuted (``torch.gather``) so its targets become the low bits, multiplied, and permuted back.
- :func:`fuse`: merges consecutive steps whose qubits fit in ``max_qubits`` into one matrix (a product
  of the steps embedded by :func:`embed`), so the state is swept fewer times; gates on disjoint qubits
  commute, so a step may join an earlier block if no block after it touches its qubits.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import torch
from torch import Tensor

__all__ = ["apply_matrix", "apply_gathered", "target_permutation", "embed", "fuse", "Block"]


def apply_matrix(state: Tensor, matrix: Tensor, targets: Sequence[int], num_qubits: int) -> Tensor:
    """``matrix`` applied to ``targets`` of every vector in ``state``.

    state: ``[*batch, 2**n]``; matrix: ``[*mbatch, d, d]`` with ``d = 2**len(targets)`` and ``mbatch``
    broadcastable to ``batch``; targets: qubit indices, ``targets[0]`` the matrix's least significant bit.
    Returns a new ``[*batch, 2**n]`` tensor (differentiable in both inputs).
    """
    k = len(targets)
    n = num_qubits
    batch = state.shape[:-1]
    nb = len(batch)
    if k == 1:  # [*, L, 2, R]: contract the middle axis, no permutation
        t = targets[0]
        s = state.reshape(*batch, 2 ** (n - 1 - t), 2, 2**t)
        out = torch.matmul(matrix.unsqueeze(-3), s)  # [*, 1, 2, 2] @ [*, L, 2, R] -> [*, L, 2, R]
        return out.reshape(*batch, 2**n)
    s = state.reshape(*batch, *([2] * n))
    axes = [nb + n - 1 - t for t in reversed(targets)]  # most significant matrix bit first
    last = list(range(nb + n - k, nb + n))
    s = torch.movedim(s, axes, last)
    shape = s.shape
    s = s.reshape(*batch, -1, 2**k)  # [*, R, d]
    out = torch.matmul(s, matrix.transpose(-1, -2))  # [*, R, d]
    out = torch.movedim(out.reshape(shape), last, axes)
    return out.reshape(*batch, 2**n)


@lru_cache(maxsize=4096)
def _permutation(targets: tuple[int, ...], num_qubits: int) -> np.ndarray:
    rest = [q for q in range(num_qubits) if q not in targets]
    order = list(targets) + rest  # new bit j holds old qubit order[j]
    j = np.arange(2**num_qubits)
    old = np.zeros_like(j)
    for bit, q in enumerate(order):
        old |= ((j >> bit) & 1) << q
    old.setflags(write=False)
    return old


def target_permutation(targets: Sequence[int], num_qubits: int) -> np.ndarray:
    """``perm[j]`` = old index of new index ``j`` when ``targets`` become the low bits (``targets[0]`` bit 0)
    and the other qubits follow in increasing order. Cached; read-only ``[2**n]`` int64."""
    return _permutation(tuple(int(t) for t in targets), int(num_qubits))


def apply_gathered(state: Tensor, matrix: Tensor, perm: Tensor, inverse: Tensor) -> Tensor:
    """Apply a different ``d x d`` matrix on different targets to each row of ``state``.

    state: ``[C, 2**n]``; matrix: ``[C, d, d]``; perm, inverse: ``[C, 2**n]`` int64 rows of
    :func:`target_permutation` and its inverse for each row's targets. Returns ``[C, 2**n]``.
    """
    c, size = state.shape
    d = matrix.shape[-1]
    s = torch.gather(state, 1, perm).reshape(c, size // d, d)  # [C, R, d]: targets are the low bits
    out = torch.matmul(s, matrix.transpose(-1, -2)).reshape(c, size)
    return torch.gather(out, 1, inverse)


def embed(matrix: Tensor, positions: Sequence[int], k: int) -> Tensor:
    """``matrix`` ``[*, d, d]`` on ``positions`` of a k-qubit register, as a ``[*, 2**k, 2**k]`` matrix."""
    if list(positions) == list(range(k)):
        return matrix
    eye = torch.eye(2**k, dtype=matrix.dtype, device=matrix.device)
    rows = apply_matrix(eye.expand(*matrix.shape[:-2], 2**k, 2**k), matrix.unsqueeze(-3), positions, k)
    return rows.transpose(-1, -2)  # row j of ``rows`` is the image of basis vector j


class Block:
    """A fused block: its qubits (sorted) and the steps' ``(qubits, matrix)`` in order."""

    __slots__ = ("qubits", "parts")

    def __init__(self) -> None:
        self.qubits: list[int] = []
        self.parts: list[tuple[tuple[int, ...], Tensor]] = []

    def matrix(self) -> Tensor:
        """The block's matrix on ``self.qubits`` (product of its parts, each embedded)."""
        k = len(self.qubits)
        pos = {q: i for i, q in enumerate(self.qubits)}
        out = None
        for qubits, m in self.parts:
            e = embed(m, [pos[q] for q in qubits], k)
            out = e if out is None else torch.matmul(e, out)
        assert out is not None, "a block has at least one part"
        return out


def fuse(parts: Sequence[tuple[tuple[int, ...], Tensor]], max_qubits: int, *, lookback: int = 4) -> list[Block]:
    """Group ``(qubits, matrix)`` parts into blocks of at most ``max_qubits`` qubits, keeping the order of
    every pair of parts that share a qubit. A part longer than ``max_qubits`` gets its own block."""
    blocks: list[Block] = []
    last: dict[int, int] = {}  # qubit -> index of the last block touching it
    for qubits, m in parts:
        floor = max((last[q] for q in qubits if q in last), default=-1)
        chosen = -1
        stop = max(floor, len(blocks) - 1 - lookback, 0)
        for b in range(len(blocks) - 1, stop - 1, -1):
            if len(set(blocks[b].qubits).union(qubits)) <= max_qubits:
                chosen = b
                break
            if b == floor:
                break
        if chosen < 0:
            blocks.append(Block())
            chosen = len(blocks) - 1
        block = blocks[chosen]
        block.qubits = sorted(set(block.qubits).union(qubits))
        block.parts.append((qubits, m))
        for q in qubits:
            last[q] = chosen
    return blocks
