"""QGAS: the cost of scoring a proposal, our torch path against qiskit's reference primitives, side by side.

Cases, on the 4-qubit LiH Hamiltonian (27 Pauli terms) and the 5-qubit MaxCut cost (8 terms), ansatz = the
hardware-efficient ``n_local(ry, cx, linear, reps=2)``:

(a) energies of a batch of B parameter sets (B = 1 and 64). Ours: :func:`workbench.quantum.common.variational.energy_function`
    (one batched torch statevector simulation, dense H); peer: qiskit's ``StatevectorEstimator`` with one
    pub of B parameter sets (its reference implementation: a ``Statevector`` per set).
(b) energy *and gradient* of one parameter set: ours by autograd (one forward + backward); peer: the
    parameter-shift rule with ``StatevectorEstimator`` (2P + 1 evaluations in one pub), which is what a
    gradient-based optimiser on qiskit primitives needs.

Both sides run in one process, interleaved; ``max abs diff`` compares the energies (and gradients).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, fmt_sci, interleaved, median
from benchmarks.machine import load_average


def _setup(problem: str) -> tuple[Any, Any, Any, int]:
    from workbench.quantum.qgas.ansatze import hardware_efficient
    from workbench.quantum.qgas.problems import get_problem

    p = get_problem(problem)
    circuit = hardware_efficient(p.num_qubits, reps=2)
    return p, circuit, p.matrix(), circuit.num_parameters


def _energies(problem: str, batch: int, rounds: int) -> dict[str, Any]:
    from qiskit.primitives import StatevectorEstimator
    from qiskit.quantum_info import SparsePauliOp

    from workbench.quantum.common.variational.losses import energy_function
    from workbench.threads import one_thread

    p, circuit, H, count = _setup(problem)
    op = SparsePauliOp.from_list([(lbl, c) for c, lbl in p.terms])
    theta = np.random.default_rng(batch).uniform(-np.pi, np.pi, size=(batch, count))
    estimator = StatevectorEstimator()
    f = energy_function(circuit, H)
    out: dict[str, Any] = {}

    def ours():
        with one_thread():
            out["ours"] = f(torch.as_tensor(theta)).numpy()

    def qiskit():
        out["qiskit"] = np.asarray(estimator.run([(circuit, op, theta)]).result()[0].data.evs).reshape(-1)

    times = interleaved({"ours": ours, "qiskit": qiskit}, rounds=rounds)
    ratios = [a / b for a, b in zip(times["ours"], times["qiskit"])]
    return {
        "case": f"(a) {problem}, energies of {batch} parameter set{'s' if batch > 1 else ''}",
        "ours_s": median(times["ours"]),
        "peer_s": median(times["qiskit"]),
        "ratio": median(ratios),
        "max_abs_diff": float(np.max(np.abs(out["ours"] - out["qiskit"]))),
    }


def _gradient(problem: str, rounds: int) -> dict[str, Any]:
    from qiskit.primitives import StatevectorEstimator
    from qiskit.quantum_info import SparsePauliOp

    from workbench.quantum.common.variational.losses import energy_function
    from workbench.threads import one_thread

    p, circuit, H, count = _setup(problem)
    op = SparsePauliOp.from_list([(lbl, c) for c, lbl in p.terms])
    theta = np.random.default_rng(7).uniform(-np.pi, np.pi, size=count)
    shifts = np.vstack([theta] + [theta + s * np.pi / 2 * np.eye(count)[k] for k in range(count) for s in (1, -1)])
    estimator = StatevectorEstimator()
    f = energy_function(circuit, H)
    out: dict[str, Any] = {}

    def ours():
        with one_thread():
            t = torch.as_tensor(theta[None]).requires_grad_(True)
            e = f(t).sum()
            e.backward()
            out["ours"] = np.concatenate([[float(e.detach())], t.grad[0].numpy()])

    def qiskit():
        evs = np.asarray(estimator.run([(circuit, op, shifts)]).result()[0].data.evs).reshape(-1)
        out["qiskit"] = np.concatenate([[evs[0]], (evs[1::2] - evs[2::2]) / 2])  # parameter shift: ry gates only

    times = interleaved({"ours": ours, "qiskit": qiskit}, rounds=rounds)
    ratios = [a / b for a, b in zip(times["ours"], times["qiskit"])]
    return {
        "case": f"(b) {problem}, energy + gradient ({count} parameters)",
        "ours_s": median(times["ours"]),
        "peer_s": median(times["qiskit"]),
        "ratio": median(ratios),
        "max_abs_diff": float(np.max(np.abs(out["ours"] - out["qiskit"]))),
    }


def run(*, quick: bool) -> Section:
    """Cases (a) and (b) on LiH and MaxCut; ``data["rows"]`` holds the raw numbers."""
    import qiskit

    load_start = load_average()
    rounds = 3 if quick else 15
    rows = []
    for problem in ("lih", "maxcut"):
        for batch in (1, 64):
            rows.append(_energies(problem, batch, rounds))
        rows.append(_gradient(problem, rounds))
    table = Table(
        headers=("case", "ours (ms)", "qiskit (ms)", "ours / qiskit", "max abs diff"),
        rows=tuple(
            (r["case"], fmt_ms(r["ours_s"]), fmt_ms(r["peer_s"]), fmt_ratio(r["ratio"]), fmt_sci(r["max_abs_diff"]))
            for r in rows
        ),
    )
    intro = (
        f"Peer: qiskit {qiskit.__version__}'s `StatevectorEstimator` (exact expectation values), the energy "
        "evaluation a QGAS-style loop on qiskit primitives would use; gradients by the parameter-shift rule. Ours: "
        "the torch path QGAS trains with (batched statevector, dense H, autograd; one intra-op thread). Each side "
        "runs once untimed, then in interleaved rounds; `ours / qiskit` is the median per-round time ratio "
        "(below 1: ours is faster)."
    )
    return Section(
        title="QGAS: scoring a proposal, ours vs qiskit StatevectorEstimator",
        intro=intro,
        tables=(table,),
        notes=(f"Load average at the start: {load_start}; at the end: {load_average()} (2 shared cores).",),
        summary=tuple((f"qgas ours / qiskit time: {r['case']}", fmt_ratio(r["ratio"])) for r in rows),
        data={"rows": rows},
    )
