"""The QNN: a fixed encoder writing 16 pixel angles onto Q qubits, a trainable
:class:`~workbench.quantum.common.variational.GateAnsatz`, and ``Z`` expectations of the first C qubits as class logits
(the variational layer's :func:`~workbench.quantum.common.variational.z_expectations`), simulated with our torch
statevector simulator (differentiable); training with Adam and TopGen's dynamic growth.

Encoder (QuantumNAS's ``4x4_ryzxy`` for 4 qubits, generalised): feature i goes to qubit ``i mod Q`` with the
gate ``(ry, rz, rx, ry)[(i // Q) mod 4]``, in feature order. Logits are ``LOGIT_SCALE * <Z_c>`` (c < C).

Growth (our rule; the paper's trigger is not public): when validation accuracy has not improved for
``patience`` epochs, append :func:`~.generate.growth_block` (identity at angle 0) with new angles
``N(0, init_scale^2)`` in a new Adam parameter group (old moments kept); if the next ``patience`` epochs do
not beat the best accuracy before growing, the block is removed (weights restored) and growth stops.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import Tensor

from workbench.quantum.circuit import from_qiskit
from workbench.quantum.common.variational.gate_ansatz import Gate, GateAnsatz
from workbench.quantum.common.variational.losses import z_expectations
from workbench.quantum.common.variational.trainability import gradient_variance as shared_gradient_variance
from workbench.quantum.statevector import simulate_statevector
from workbench.quantum.topgen.digits import Split
from workbench.threads import one_thread

__all__ = [
    "LOGIT_SCALE",
    "encoder_circuit",
    "full_circuit",
    "QNN",
    "TrainLog",
    "train",
    "accuracy",
    "gradient_variance",
    "initial_weights",
    "one_thread",
]

LOGIT_SCALE = 5.0
ENCODER_GATES = ("ry", "rz", "rx", "ry")
FEATURES = 16


def encoder_circuit(num_qubits: int) -> Any:
    """The encoder on ``num_qubits`` qubits with angles ``ParameterVector('x', 16)``."""
    from qiskit import QuantumCircuit
    from qiskit.circuit import ParameterVector

    x = ParameterVector("x", FEATURES)
    qc = QuantumCircuit(num_qubits, name="encoder")
    for i in range(FEATURES):
        getattr(qc, ENCODER_GATES[(i // num_qubits) % 4])(x[i], i % num_qubits)
    return qc


def full_circuit(ansatz: GateAnsatz) -> Any:
    """Encoder then ansatz (angles ``x[0..15]`` and ``w[0..P-1]``)."""
    qc = encoder_circuit(ansatz.num_qubits)
    qc.compose(ansatz.circuit("w"), inplace=True)
    return qc


def _columns(circuit: Any, num_weights: int) -> tuple[list[int], list[int]]:
    """Positions of ``x[i]`` and ``w[j]`` in ``circuit.parameters`` (-1 for ones the circuit dropped)."""
    where = {p.name: i for i, p in enumerate(circuit.parameters)}
    xs = [where.get(f"x[{i}]", -1) for i in range(FEATURES)]
    ws = [where.get(f"w[{j}]", -1) for j in range(num_weights)]
    return xs, ws


def assemble(circuit: Any, x: Tensor, w: Tensor) -> Tensor:
    """Parameter matrix ``[B, P]`` of ``circuit`` for inputs ``x [B, 16]`` and weights ``w [W]`` (keeps grad)."""
    xs, ws = _columns(circuit, w.shape[0])
    b = x.shape[0]
    cols: list[Tensor | None] = [None] * circuit.num_parameters
    for i, c in enumerate(xs):
        if c >= 0:
            cols[c] = x[:, i]
    for j, c in enumerate(ws):
        if c >= 0:
            cols[c] = w[j].expand(b)
    missing = [i for i, c in enumerate(cols) if c is None]
    if missing:
        names = [circuit.parameters[i].name for i in missing]
        raise ValueError(f"circuit parameters {names} are neither inputs x[i] nor weights w[j]")
    return torch.stack(cols, dim=1)


@dataclass(eq=False)
class QNN:
    """A classifier: ``ansatz`` and its ``weights`` ``[P]``; logits from ``Z`` of qubits ``0..classes-1``."""

    ansatz: GateAnsatz
    weights: Tensor
    classes: int
    _program: Any = field(default=None, repr=False)
    _circuit: Any = field(default=None, repr=False)

    def circuit(self) -> Any:
        if self._circuit is None:
            self._circuit = full_circuit(self.ansatz)
            self._program = from_qiskit(self._circuit)
        return self._circuit

    def probabilities(self, x: Tensor, weights: Tensor | None = None) -> Tensor:
        """Noiseless outcome probabilities ``[B, 2**n]`` (differentiable in the weights)."""
        qc = self.circuit()
        theta = assemble(qc, x, self.weights if weights is None else weights)
        state, _ = simulate_statevector(self._program, theta)
        return state.real**2 + state.imag**2

    def logits(self, x: Tensor, weights: Tensor | None = None) -> Tensor:
        """``LOGIT_SCALE * <Z_c>`` ``[B, C]``."""
        return z_expectations(self.probabilities(x, weights), range(self.classes), scale=LOGIT_SCALE)


def accuracy(logits: Tensor, y: Tensor) -> float:
    """Fraction of rows whose largest logit is the label."""
    return float((logits.argmax(dim=1) == y).double().mean())


@dataclass
class TrainLog:
    """Per-epoch train loss and validation accuracy, the epochs a block was grown / removed, blocks at the end."""

    loss: list[float] = field(default_factory=list)
    val_accuracy: list[float] = field(default_factory=list)
    grown_at: list[int] = field(default_factory=list)
    removed_at: list[int] = field(default_factory=list)
    growth_check: list[float] = field(default_factory=list)  # max |logit change| when a block was added


def train(
    model: QNN,
    data: Split,
    *,
    epochs: int,
    lr: float = 0.05,
    batch: int = 32,
    seed: int = 0,
    grow: Callable[[GateAnsatz], tuple[list[Gate], int]] | None = None,
    patience: int = 3,
    max_blocks: int = 4,
    init_scale: float = 0.01,
    progress: Callable[[float], None] | None = None,
) -> TrainLog:
    """Train ``model`` in place (Adam, cross-entropy, minibatches of ``batch``) for ``epochs`` epochs; with
    ``grow`` (a function giving the block to append), TopGen's dynamic growth (module docstring)."""
    g = torch.Generator().manual_seed(seed)
    params = [model.weights.detach().clone().requires_grad_(True)]
    opt = torch.optim.Adam(params, lr=lr)
    log = TrainLog()
    best, since = -1.0, 0
    pending: tuple[int, float, list[Tensor], GateAnsatz] | None = None  # (epoch, best before, weights, ansatz)
    growing = grow is not None
    n = data.x_train.shape[0]
    for epoch in range(epochs):
        order = torch.randperm(n, generator=g)
        total = 0.0
        for s in range(0, n, batch):
            idx = order[s : s + batch]
            w = torch.cat(params)
            loss = torch.nn.functional.cross_entropy(model.logits(data.x_train[idx], w), data.y_train[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        with torch.no_grad():
            acc = accuracy(model.logits(data.x_val, torch.cat(params)), data.y_val)
        log.loss.append(total / n)
        log.val_accuracy.append(acc)
        if progress is not None:
            progress((epoch + 1) / epochs)
        if acc > best + 1e-12:
            best, since = acc, 0
            if pending is not None:
                pending = None  # the grown block helped: keep it
        else:
            since += 1
        if pending is not None and epoch - pending[0] >= patience:
            _, before, saved, ansatz = pending  # no gain since growing: remove the block, stop growing
            model.ansatz, model._circuit, model._program = ansatz, None, None
            params = [t.detach().clone().requires_grad_(True) for t in saved]
            opt = torch.optim.Adam(params, lr=lr)
            log.removed_at.append(epoch)
            pending, growing = None, False
            continue
        if growing and pending is None and since >= patience and model.ansatz.num_blocks < max_blocks:
            assert grow is not None  # growing implies a grow function
            gates, count = grow(model.ansatz)
            saved = [t.detach().clone() for t in params]
            old = model.ansatz
            with torch.no_grad():
                before = model.logits(data.x_val[:16], torch.cat(params))
            new = (torch.randn(count, generator=g, dtype=torch.float64) * init_scale).requires_grad_(True)
            model.ansatz, model._circuit, model._program = old.then(gates, count), None, None
            params.append(new)
            opt.add_param_group({"params": [new]})
            with torch.no_grad():
                after = model.logits(data.x_val[:16], torch.cat(params))
            log.growth_check.append(float((after - before).abs().max()))
            log.grown_at.append(epoch)
            pending = (epoch, best, saved, old)
            since = 0
    model.weights = torch.cat(params).detach()
    return log


def gradient_variance(
    ansatz: GateAnsatz, data: Split, classes: int, *, draws: int = 16, samples: int = 32, seed: int = 0
) -> float:
    """Trainability: the variance over ``draws`` random weight vectors (uniform in [0, 2 pi)) of the
    cross-entropy's gradient on ``samples`` training images, averaged over the parameters (barren-plateau
    diagnostic: :func:`workbench.quantum.common.variational.gradient_variance` with the QNN's loss)."""
    model = QNN(ansatz, torch.zeros(ansatz.num_parameters, dtype=torch.float64), classes)
    x, y = data.x_train[:samples], data.y_train[:samples]

    def loss(w: Tensor) -> Tensor:
        return torch.nn.functional.cross_entropy(model.logits(x, w), y)

    return shared_gradient_variance(loss, ansatz.num_parameters, draws=draws, seed=seed)


def initial_weights(ansatz: GateAnsatz, seed: int, scale: float = 0.1) -> Tensor:
    """Small random starting weights ``N(0, scale^2)`` ``[P]`` (seeded)."""
    rng = np.random.default_rng(seed)
    return torch.as_tensor(rng.normal(0.0, scale, ansatz.num_parameters), dtype=torch.float64)
