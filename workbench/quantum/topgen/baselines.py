"""The baselines TopGen is compared with (arXiv 2210.08190v1 compares with QuantumNAS-like searched and
human-designed ansätze).

- :func:`hardware_efficient`: ``blocks`` x (``ry, rz`` on every qubit, a CNOT chain ``cx(0,1) ... cx(Q-2,Q-1)``)
  on logical qubits, with no regard to the device: the transpiler routes it (SWAPs where the chain is not a
  device path).
- :func:`supercircuit` / :func:`subcircuit` / :func:`search_quantumnas`: a QuantumNAS-style search (Wang et
  al., arXiv 2107.10845, our reduced version): a SuperCircuit of ``blocks`` x (``u3`` on every qubit, ``cu3`` on
  a ring), trained with weight sharing by sampling a sub-circuit per step, then an evolutionary search over
  sub-circuits (blocks used, and how many leading qubits get ``u3`` / ``cu3`` gates in each block) scored by
  validation accuracy with inherited weights, then the winner fine-tuned from them. QuantumNAS scores under
  noise and searches the qubit mapping too; here the score is noiseless and qiskit's noise-aware layout maps it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from workbench.quantum.common.variational.gate_ansatz import GateAnsatz, GateBuilder
from workbench.quantum.topgen.digits import Split
from workbench.quantum.topgen.qnn import QNN, accuracy, train

__all__ = ["hardware_efficient", "SubConfig", "supercircuit_size", "subcircuit", "search_quantumnas", "Searched"]


def hardware_efficient(num_qubits: int, blocks: int) -> GateAnsatz:
    """``blocks`` x (``ry, rz`` on each qubit, then a linear CNOT chain) on ``num_qubits`` logical qubits."""
    out = GateAnsatz(num_qubits, (), 0, (), "hea")
    for _ in range(blocks):
        b = GateBuilder()
        for q in range(num_qubits):
            b.add("ry", q)
            b.add("rz", q)
        for q in range(num_qubits - 1):
            b.add("cx", q, q + 1)
        out = out.then(b.gates, b.count)
    return out


@dataclass(frozen=True)
class SubConfig:
    """A sub-circuit of the SuperCircuit: per used block, how many leading qubits get ``u3`` and ``cu3``."""

    u3: tuple[int, ...]
    cu3: tuple[int, ...]

    @property
    def blocks(self) -> int:
        return len(self.u3)


def _ring(num_qubits: int) -> list[tuple[int, int]]:
    return [(q, (q + 1) % num_qubits) for q in range(num_qubits)] if num_qubits > 2 else [(0, 1)]


def supercircuit_size(num_qubits: int, blocks: int) -> int:
    """Angles of the SuperCircuit: 3 per ``u3`` and per ``cu3`` in every block."""
    return blocks * 3 * (num_qubits + len(_ring(num_qubits)))


def subcircuit(num_qubits: int, config: SubConfig) -> tuple[GateAnsatz, np.ndarray]:
    """The sub-circuit ``config`` and, for each of its angles, the index of the SuperCircuit angle it shares."""
    ring = _ring(num_qubits)
    per_block = 3 * (num_qubits + len(ring))
    b = GateBuilder()
    shared: list[int] = []
    for blk, (nu, nc) in enumerate(zip(config.u3, config.cu3)):
        base = blk * per_block
        for q in range(nu):
            b.add("u3", q)
            shared += [base + 3 * q + i for i in range(3)]
        for e, (a, c) in enumerate(ring[:nc]):
            b.add("cu3", a, c)
            shared += [base + 3 * num_qubits + 3 * e + i for i in range(3)]
    ansatz = GateAnsatz(num_qubits, tuple(b.gates), b.count, (b.count,), "quantumnas")
    return ansatz, np.asarray(shared, dtype=np.int64)


def _random_config(num_qubits: int, max_blocks: int, rng: np.random.Generator) -> SubConfig:
    blocks = int(rng.integers(1, max_blocks + 1))
    ring = len(_ring(num_qubits))
    return SubConfig(
        tuple(int(rng.integers(1, num_qubits + 1)) for _ in range(blocks)),
        tuple(int(rng.integers(0, ring + 1)) for _ in range(blocks)),
    )


def _mutate(config: SubConfig, num_qubits: int, max_blocks: int, rng: np.random.Generator) -> SubConfig:
    u3, cu3 = list(config.u3), list(config.cu3)
    ring = len(_ring(num_qubits))
    kind = int(rng.integers(3))
    if kind == 0 and len(u3) < max_blocks:
        u3.append(int(rng.integers(1, num_qubits + 1)))
        cu3.append(int(rng.integers(0, ring + 1)))
    elif kind == 1 and len(u3) > 1:
        u3.pop()
        cu3.pop()
    else:
        i = int(rng.integers(len(u3)))
        u3[i] = int(rng.integers(1, num_qubits + 1))
        cu3[i] = int(rng.integers(0, ring + 1))
    return SubConfig(tuple(u3), tuple(cu3))


@dataclass(frozen=True, eq=False)
class Searched:
    """The searched baseline: the chosen sub-circuit's config, its trained :class:`QNN`, and the search log
    (validation accuracy of the best per generation, sub-circuits evaluated)."""

    config: SubConfig
    model: QNN
    best_per_generation: tuple[float, ...]
    evaluated: int


def search_quantumnas(
    data: Split,
    num_qubits: int,
    *,
    max_blocks: int,
    super_epochs: int,
    finetune_epochs: int,
    population: int = 8,
    generations: int = 3,
    seed: int = 0,
    lr: float = 0.05,
    batch: int = 32,
) -> Searched:
    """The QuantumNAS-style baseline (module docstring), seeded."""
    rng = np.random.default_rng(seed)
    g = torch.Generator().manual_seed(seed)
    classes = data.num_classes
    size = supercircuit_size(num_qubits, max_blocks)
    shared = (torch.randn(size, generator=g, dtype=torch.float64) * 0.1).requires_grad_(True)
    opt = torch.optim.Adam([shared], lr=lr)
    n = data.x_train.shape[0]
    for _ in range(super_epochs):  # weight-sharing training: one random sub-circuit per step
        order = torch.randperm(n, generator=g)
        for s in range(0, n, batch):
            idx = order[s : s + batch]
            ansatz, where = subcircuit(num_qubits, _random_config(num_qubits, max_blocks, rng))
            model = QNN(ansatz, torch.zeros(0), classes)
            loss = torch.nn.functional.cross_entropy(model.logits(data.x_train[idx], shared[where]), data.y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()

    def fitness(config: SubConfig) -> float:
        ansatz, where = subcircuit(num_qubits, config)
        with torch.no_grad():
            return accuracy(QNN(ansatz, shared.detach()[where], classes).logits(data.x_val), data.y_val)

    pop = [_random_config(num_qubits, max_blocks, rng) for _ in range(population)]
    scores = {c: fitness(c) for c in pop}
    best_log = []
    for _ in range(generations):
        ranked = sorted(scores, key=lambda c: (-scores[c], sum(c.cu3), c.blocks))[: max(2, population // 2)]
        children = [
            _mutate(ranked[int(rng.integers(len(ranked)))], num_qubits, max_blocks, rng) for _ in range(population)
        ]
        for c in children:
            if c not in scores:
                scores[c] = fitness(c)
        best_log.append(max(scores.values()))
    best = min(scores, key=lambda c: (-scores[c], sum(c.cu3), c.blocks))
    ansatz, where = subcircuit(num_qubits, best)
    model = QNN(ansatz, shared.detach()[where].clone(), classes)
    train(model, data, epochs=finetune_epochs, lr=lr, batch=batch, seed=seed)
    return Searched(best, model, tuple(best_log), len(scores))
