"""Density-matrix simulation in torch, with noise: batched over parameter sets or over different circuits.

``rho`` is held as ``vec(rho)`` ``[B, 4**n]`` (row-major), i.e. a vector on 2n virtual qubits (virtual q =
column bit q, virtual n+q = row bit q). Every instruction becomes one superoperator: its unitary
``U (x) conj U`` (or Kraus sum), followed by the noise channel that :class:`~workbench.quantum.noise.NoiseSpec`
attaches to it, so gate and noise are one ``4**k x 4**k`` matrix applied by the shared kernel.

- :func:`run_density`: one circuit structure, a batch of parameter values (``[B, d, d]`` matrices on fixed
  targets; autograd flows through). Steps may be fused (``fuse_qubits``).
- :func:`run_density_circuits`: a batch of *different* bound circuits (the regime of dataset generation).
  Each circuit's superoperators are fused into blocks on ``block_qubits`` qubits (padded with identity), all
  circuits' blocks are built with a few batched tensor calls, and the batch advances one block per step with
  per-row targets (:func:`~workbench.quantum.apply.apply_gathered`).

Readout errors act on the final probabilities (:func:`apply_readout`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.apply import apply_gathered, apply_matrix, fuse, target_permutation
from workbench.quantum.channels import kraus_superop, unitary_superop, virtual_targets
from workbench.quantum.circuit import Program, Step
from workbench.quantum.gates import GATES, gate_matrix
from workbench.quantum.noise import NoiseSpec

__all__ = [
    "run_density",
    "run_density_circuits",
    "apply_readout",
    "diagonal",
    "MAX_DENSITY_QUBITS",
    "check_density_size",
]

MAX_DENSITY_QUBITS = 13
#: batch * 4**n above this is refused (2**27 complex128 entries = 2 GiB, before temporaries)
MAX_DENSITY_ELEMENTS = 2**27


def check_density_size(num_qubits: int, batch: int) -> None:
    """ValueError when an n-qubit density-matrix batch would not fit."""
    if num_qubits > MAX_DENSITY_QUBITS:
        raise ValueError(
            f"num_qubits={num_qubits} is too many for the density-matrix simulator: valid range is "
            f"0..{MAX_DENSITY_QUBITS}"
        )
    if batch * 4**num_qubits > MAX_DENSITY_ELEMENTS:
        raise ValueError(
            f"batch={batch} x 4**{num_qubits} entries is too large: valid range is batch * 4**n <= "
            f"2**{MAX_DENSITY_ELEMENTS.bit_length() - 1}; use a smaller batch"
        )


class _NoiseTensors:
    """Torch copies of a spec's channels, made once per (spec, instruction, qubits) in one call."""

    def __init__(self, dtype: torch.dtype, device: torch.device | str | None) -> None:
        self.dtype, self.device = dtype, device
        self.cache: dict[tuple, Tensor | None] = {}

    def get(self, spec: NoiseSpec | None, name: str, qubits: tuple[int, ...]) -> Tensor | None:
        if spec is None or not name:
            return None
        key = (id(spec), name, qubits)
        if key not in self.cache:
            s = spec.channel(name, qubits)
            self.cache[key] = None if s is None else torch.as_tensor(s, device=self.device).to(self.dtype)
        return self.cache[key]


def _step_superop(step: Step, noise: NoiseSpec | None, tensors: _NoiseTensors) -> Tensor:
    s = kraus_superop(step.matrix) if step.kraus else unitary_superop(step.matrix)  # [B|1, d^2, d^2]
    n = tensors.get(noise, step.name, step.qubits)
    return s if n is None else torch.matmul(n, s)


def run_density(
    steps: Sequence[Step],
    num_qubits: int,
    *,
    batch: int = 1,
    noise: NoiseSpec | None = None,
    dtype: torch.dtype = torch.complex128,
    device: torch.device | str | None = None,
    initial: Tensor | None = None,
    fuse_qubits: int | None = None,
) -> Tensor:
    """Apply ``steps`` (each followed by its noise channel) to ``|0><0|`` (or ``initial`` ``[B or 1, 2**n, 2**n]``).

    Returns ``rho`` ``[B, 2**n, 2**n]``. fuse_qubits: fuse steps on up to this many qubits into one
    superoperator (None: 2 when ``batch * 4**n >= 4**6``, else 1; measured on 2 CPU cores: a 5-qubit noisy ansatz
    at 256 parameter sets runs 6x faster fused, one 5-qubit circuit 2x slower, 3-qubit fusion is slower).
    """
    check_density_size(num_qubits, batch)
    n = num_qubits
    d = 2**n
    if initial is None:
        rho = torch.zeros(batch, d * d, dtype=dtype, device=device)
        rho[:, 0] = 1
    else:
        rho = initial.to(dtype).reshape(-1, d * d).expand(batch, d * d)
    tensors = _NoiseTensors(dtype, device)
    parts = [(virtual_targets(s.qubits, n), _step_superop(s, noise, tensors)) for s in steps if s.qubits]
    if fuse_qubits is None:
        fuse_qubits = 2 if batch * 4**n >= 4**6 else 1
    if fuse_qubits > 1:
        parts = [(tuple(b.qubits), b.matrix()) for b in fuse(parts, 2 * fuse_qubits)]
    for targets, superop in parts:
        rho = apply_matrix(rho, superop, targets, 2 * n)  # [B, 4**n]
    return rho.reshape(batch, d, d)


def diagonal(rho: Tensor) -> Tensor:
    """Real diagonal ``[..., 2**n]`` of density matrices ``[..., 2**n, 2**n]`` (the outcome probabilities)."""
    return torch.diagonal(rho, dim1=-2, dim2=-1).real


def apply_readout(probs: Tensor, confusion: Tensor | np.ndarray | None, num_qubits: int) -> Tensor:
    """Readout errors on probabilities ``[B, 2**n]``: ``confusion`` ``[n, 2, 2]`` or per row ``[B, n, 2, 2]``
    (``A[q, measured, prepared]``); None returns ``probs`` unchanged."""
    if confusion is None:
        return probs
    a = torch.as_tensor(confusion, device=probs.device).to(probs.dtype)
    for q in range(num_qubits):
        probs = apply_matrix(probs, a[..., q, :, :], (q,), num_qubits)
    return probs


# ---- many different circuits at once -------------------------------------------------------------------
def _op_superops(
    programs: Sequence[Program],
    noises: Sequence[NoiseSpec | None],
    dtype: torch.dtype,
    device: torch.device | str | None,
) -> tuple[list[tuple[int, Any]], dict[int, Tensor], list[int]]:
    """Every op of every circuit with its superoperator (gate, then noise), built per gate name.

    Returns ``ops`` (circuit index, :class:`Op`), ``superops[k]`` ``[N_k, 4**k, 4**k]`` per arity k, and
    ``row[i]``: op i's row in ``superops[len(op.qubits)]``.
    """
    ops: list[tuple[int, Any]] = []
    for c, program in enumerate(programs):
        for op in program.ops:
            if op.parametric:
                raise ValueError(
                    f"circuit {c} has free parameters: bind them (circuit.assign_parameters) before "
                    "simulating a list of different circuits"
                )
            if op.qubits:
                ops.append((c, op))
    by_name: dict[str, list[int]] = defaultdict(list)
    for i, (_, op) in enumerate(ops):
        by_name[op.name].append(i)
    real = torch.float64 if dtype == torch.complex128 else torch.float32
    pieces: dict[int, list[Tensor]] = defaultdict(list)  # arity -> superop chunks
    order: dict[int, list[int]] = defaultdict(list)  # arity -> op indices in chunk order
    for name, idx in by_name.items():
        k = len(ops[idx[0]][1].qubits)
        if name == "reset":
            kraus = torch.tensor([[[1, 0], [0, 0]], [[0, 1], [0, 0]]], dtype=dtype, device=device)
            mats = kraus_superop(kraus[:, None]).expand(len(idx), 4, 4)
        elif name == "unitary":
            for i in idx:  # arities may differ
                u = torch.as_tensor(ops[i][1].matrix, device=device).to(dtype)
                pieces[len(ops[i][1].qubits)].append(unitary_superop(u)[None])
                order[len(ops[i][1].qubits)].append(i)
            continue
        elif GATES[name].num_params:
            angles = np.array([[a.const for a in ops[i][1].angles] for i in idx], dtype=np.float64)
            columns = list(torch.from_numpy(angles.T.copy()).to(device=device, dtype=real))
            mats = unitary_superop(gate_matrix(name, columns, dtype=dtype, device=device))  # [N, d2, d2]
        else:
            mats = unitary_superop(gate_matrix(name, dtype=dtype, device=device)).expand(len(idx), -1, -1)
        pieces[k].append(mats)
        order[k].extend(idx)
    superops = {k: torch.cat(v) for k, v in pieces.items()}
    row = [0] * len(ops)
    for _k, idx in order.items():
        for r, i in enumerate(idx):
            row[i] = r
    # noise: one batched matmul per arity, with the distinct channels stacked
    tensors = _NoiseTensors(dtype, device)
    for k, idx in order.items():
        channels: dict[int, int] = {}
        stack: list[Tensor] = []
        rows, which = [], []
        for i in idx:
            c, op = ops[i]
            n = tensors.get(noises[c], op.name, op.qubits)
            if n is None:
                continue
            if id(n) not in channels:
                channels[id(n)] = len(stack)
                stack.append(n)
            rows.append(row[i])
            which.append(channels[id(n)])
        if rows:
            r = torch.tensor(rows, device=device)
            noisy = torch.matmul(torch.stack(stack)[torch.tensor(which, device=device)], superops[k][r])
            superops[k] = superops[k].index_copy(0, r, noisy)
    return ops, superops, row


def _pair_superop(a: Tensor, b: Tensor) -> Tensor:
    """Independent one-qubit superoperators ``a`` on q0 and ``b`` on q1 (``[M, 4, 4]`` each) as one
    two-qubit superoperator ``[M, 16, 16]`` (index bits, low to high: col q0, col q1, row q0, row q1)."""
    m = a.shape[0]
    # a[m, r0, c0, r0', c0'], b[m, r1, c1, r1', c1'] -> out[m, r1, r0, c1, c0, r1', r0', c1', c0']
    out = torch.einsum("mpqst,muvwx->mupvqwsxt", a.reshape(m, 2, 2, 2, 2), b.reshape(m, 2, 2, 2, 2))
    return out.reshape(m, 16, 16)


def _chain_products(chains: list[list[int]], s1: Tensor, dtype: torch.dtype, device: Any) -> Tensor:
    """Products of one-qubit superoperators: chain j is ``s1[rows]`` applied in order; ``[J + 1, 4, 4]``
    (the last entry is the identity, for 'no chain')."""
    out = torch.eye(4, dtype=dtype, device=device).expand(len(chains) + 1, 4, 4).clone()
    depth = max((len(c) for c in chains), default=0)
    for level in range(depth):
        at = [j for j, c in enumerate(chains) if len(c) > level]
        idx = torch.tensor(at, device=device)
        rows = torch.tensor([chains[j][level] for j in at], device=device)
        out[idx] = torch.matmul(s1[rows], out[idx])
    return out


def _pair_blocks(
    ops: list[tuple[int, Any]],
    superops: dict[int, Tensor],
    row: list[int],
    count: int,
    n: int,
    dtype: torch.dtype,
    device: Any,
) -> tuple[Tensor, list[list[tuple[int, tuple[int, int]]]]]:
    """Fuse each circuit (one- and two-qubit ops only, ``n >= 2``) into two-qubit blocks: every two-qubit op
    absorbs the pending one-qubit chains on its qubits (``S2 @ (chain_q0 (x) chain_q1)``); chains left at
    the end are paired up. Returns block superoperators ``[N + 1, 16, 16]`` (last: identity) and, per
    circuit, its blocks as ``(block index, (q0, q1))`` in order."""
    chains: list[list[int]] = []
    two_rows: list[int] = []  # per block: row in superops[2], or -1 (two chains only)
    chain_a: list[int] = []
    chain_b: list[int] = []
    per_circuit: list[list[tuple[int, tuple[int, int]]]] = [[] for _ in range(count)]

    def add(c: int, two: int, a: int, b: int, qubits: tuple[int, int]) -> None:
        per_circuit[c].append((len(two_rows), qubits))
        two_rows.append(two)
        chain_a.append(a)
        chain_b.append(b)

    def flush(c: int, pending: dict[int, int]) -> None:
        left = sorted(pending)
        for j in range(0, len(left), 2):
            q0 = left[j]
            q1 = left[j + 1] if j + 1 < len(left) else next(q for q in range(n) if q != q0)
            add(c, -1, pending[q0], pending.get(q1, -1) if j + 1 < len(left) else -1, (q0, q1))
        pending.clear()

    pending: dict[int, int] = {}
    current = ops[0][0] if ops else 0
    for i, (c, op) in enumerate(ops):
        if c != current:
            flush(current, pending)
            current = c
        if len(op.qubits) == 1:
            q = op.qubits[0]
            if q not in pending:
                pending[q] = len(chains)
                chains.append([])
            chains[pending[q]].append(row[i])
        else:
            q0, q1 = op.qubits
            add(c, row[i], pending.pop(q0, -1), pending.pop(q1, -1), (q0, q1))
    flush(current, pending)

    none = len(chains)  # index of the identity chain
    chain_mats = (
        _chain_products(chains, superops[1], dtype, device)
        if 1 in superops
        else torch.eye(4, dtype=dtype, device=device)[None]
    )
    a = torch.tensor([none if x < 0 else x for x in chain_a], device=device)
    b = torch.tensor([none if x < 0 else x for x in chain_b], device=device)
    blocks = _pair_superop(chain_mats[a], chain_mats[b])  # [N, 16, 16]
    has_two = [j for j, r in enumerate(two_rows) if r >= 0]
    if has_two:
        idx = torch.tensor(has_two, device=device)
        rows = torch.tensor([two_rows[j] for j in has_two], device=device)
        blocks[idx] = torch.matmul(superops[2][rows], blocks[idx])
    eye = torch.eye(16, dtype=dtype, device=device)[None]
    return torch.cat([blocks, eye]), per_circuit


def _general_blocks(
    ops: list[tuple[int, Any]],
    superops: dict[int, Tensor],
    row: list[int],
    count: int,
    n: int,
    block_qubits: int,
    dtype: torch.dtype,
    device: Any,
) -> tuple[Tensor, list[list[tuple[int, tuple]]], int]:
    """Any arities: greedy fusion (:func:`~workbench.quantum.apply.fuse`) into blocks of k qubits (padded),
    each built by applying its ops to the identity, level by level. Returns blocks ``[N + 1, 4**k, 4**k]``,
    per-circuit ``(block index, qubits)`` and k."""
    k = max([min(block_qubits, n)] + [len(op.qubits) for _, op in ops])
    per_op: list[list[int]] = [[] for _ in range(count)]
    for i, (c, _) in enumerate(ops):
        per_op[c].append(i)
    per_circuit: list[list[tuple[int, tuple]]] = [[] for _ in range(count)]
    work: dict[tuple, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    total = 0
    for c, idx in enumerate(per_op):
        for block in fuse([(ops[i][1].qubits, i) for i in idx], k):  # type: ignore[misc]  # fuse groups any payload: here op indices, not matrices
            qubits = block.qubits + [q for q in range(n) if q not in block.qubits][: k - len(block.qubits)]
            pos = {q: j for j, q in enumerate(qubits)}
            for level, (oq, i) in enumerate(block.parts):
                positions = tuple(pos[q] for q in oq) + tuple(k + pos[q] for q in oq)
                rows, at = work[(level, positions, len(oq))]
                rows.append(row[i])
                at.append(total)
            per_circuit[c].append((total, tuple(qubits)))
            total += 1
    size = 4**k
    blocks_t = torch.eye(size, dtype=dtype, device=device).expand(total + 1, size, size).clone()  # transposed
    for (_, positions, arity), (rows, at) in sorted(work.items(), key=lambda kv: kv[0][0]):
        b = torch.tensor(at, device=device)
        mats = superops[arity][torch.tensor(rows, device=device)]
        blocks_t[b] = apply_matrix(blocks_t[b], mats[:, None], positions, 2 * k)
    return blocks_t.transpose(-1, -2), per_circuit, k


def run_density_circuits(
    programs: Sequence[Program],
    noises: Sequence[NoiseSpec | None],
    *,
    dtype: torch.dtype = torch.complex128,
    device: torch.device | str | None = None,
    block_qubits: int = 2,
    chunk: int = 256,
) -> Tensor:
    """Density matrices ``[C, 2**n, 2**n]`` of ``C`` different bound circuits of equal width ``n``, each under
    its own noise (``noises[c]``, None for ideal), ``chunk`` circuits at a time. See the module docstring."""
    if not programs:
        raise ValueError("programs is empty: pass at least one circuit")
    n = programs[0].num_qubits
    if any(p.num_qubits != n for p in programs):
        raise ValueError("all circuits of a batch must have the same number of qubits; group them by width")
    check_density_size(n, min(len(programs), chunk))
    if len(programs) > chunk:
        return torch.cat(
            [
                run_density_circuits(
                    programs[i : i + chunk],
                    noises[i : i + chunk],
                    dtype=dtype,
                    device=device,
                    block_qubits=block_qubits,
                    chunk=chunk,
                )
                for i in range(0, len(programs), chunk)
            ]
        )
    count = len(programs)
    ops, superops, row = _op_superops(programs, noises, dtype, device)
    arity = max((len(op.qubits) for _, op in ops), default=1)
    if n >= 2 and arity <= 2 and block_qubits == 2:
        blocks, per_circuit = _pair_blocks(ops, superops, row, count, n, dtype, device)
        k = 2
    else:
        blocks, per_circuit, k = _general_blocks(ops, superops, row, count, n, block_qubits, dtype, device)

    # simulate: one block per circuit per step, targets per row (padding: identity block)
    unique = sorted({q for blocks_c in per_circuit for _, q in blocks_c} or {tuple(range(k))})
    table_id = {q: j for j, q in enumerate(unique)}
    perms = np.stack([target_permutation(virtual_targets(q, n), 2 * n) for q in unique])
    perms_t = torch.as_tensor(perms, device=device)
    inverse_t = torch.as_tensor(np.argsort(perms, axis=1), device=device)
    steps = max((len(b) for b in per_circuit), default=0)
    block_index = np.full((count, max(steps, 1)), blocks.shape[0] - 1, dtype=np.int64)
    target_index = np.zeros((count, max(steps, 1)), dtype=np.int64)
    for c, mine in enumerate(per_circuit):
        block_index[c, : len(mine)] = [b for b, _ in mine]
        target_index[c, : len(mine)] = [table_id[q] for _, q in mine]
    block_index_t = torch.as_tensor(block_index, device=device)
    target_index_t = torch.as_tensor(target_index, device=device)
    d = 2**n
    rho = torch.zeros(count, d * d, dtype=dtype, device=device)
    rho[:, 0] = 1
    for t in range(steps):
        ids = target_index_t[:, t]
        rho = apply_gathered(rho, blocks[block_index_t[:, t]], perms_t[ids], inverse_t[ids])  # [C, 4**n]
    return rho.reshape(count, d, d)
