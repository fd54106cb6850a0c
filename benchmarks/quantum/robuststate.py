"""RobustState's machine vs qiskit-aer, and the straight-through step vs a parameter-shift step, side by side.

(a) The machine: one shot-free evaluation of the device-placed ansatz (n(n-1) blocks) with its coherent errors
    under the snapshot's noise, in 16 Pauli measurement settings (exact outcome probabilities, readout included).
    Ours: ``Machine.probabilities`` (one density-matrix run, basis changes as a batch of 4x4 superoperators);
    aer: one ``run`` of the 16 bound circuits (coherent errors as unitary gates, basis gates appended) with
    ``AerSimulator(method="density_matrix")`` and ``NoiseSpec.to_aer()`` built outside the timing,
    ``save_probabilities``, readout applied. Ratio = ours / aer time (below 1: ours faster); max |diff|.
(b) One training step's wall time: RobustState (one tomography + one backward pass) vs parameter shift (2P
    shadow-fidelity estimates, batched), same settings and shots; the ratio of executions is the MODEL's 2P.
"""

from __future__ import annotations

import numpy as np
import torch

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, fmt_sci, interleaved, median


def _setup(n: int, device: str):
    from workbench.quantum.device import get_device
    from workbench.quantum.robuststate.problem import make_machine, make_problem

    pb = make_problem(
        "random", n, get_device(device), blocks=n * (n - 1), coherent_strength=1.0, seed=1, pretrain_steps=20
    )
    return pb, make_machine(pb, shots=256, seed=0)


def _case_machine(n: int, device: str, rounds: int) -> dict:
    from qiskit_aer import AerSimulator

    from workbench.quantum.aer import apply_confusion, readout_from_model

    pb, machine = _setup(n, device)
    settings = np.random.default_rng(0).integers(0, 3, size=(16, n))
    model = machine.noise.to_aer()
    sim = AerSimulator(method="density_matrix", noise_model=model)
    confusion = readout_from_model(model, n)

    def aer() -> np.ndarray:
        circuits = []
        for s in settings:
            c = machine.qiskit_circuit(pb.theta0, s)
            c.save_probabilities()
            circuits.append(c)
        result = sim.run(circuits).result()
        return np.stack([apply_confusion(np.asarray(result.data(i)["probabilities"]), confusion, n) for i in range(16)])

    def ours() -> torch.Tensor:
        return machine.probabilities(pb.theta0, settings)

    diff = float(np.abs(ours().numpy() - aer()).max())
    times = interleaved({"ours": ours, "aer": aer}, rounds=rounds)
    ratio = median([a / b for a, b in zip(times["ours"], times["aer"])])
    return {
        "case": f"(a) machine, {n} qubits of {device}, {pb.ansatz.cx_count} cx, 16 settings",
        "ours_s": median(times["ours"]),
        "peer_s": median(times["aer"]),
        "ratio": ratio,
        "max_abs_diff": diff,
    }


def _case_step(n: int, device: str, rounds: int) -> dict:
    from workbench.quantum.circuit import from_qiskit
    from workbench.quantum.common.variational import parameter_shift_gradient, shadow_density
    from workbench.quantum.robuststate.straight_through import straight_through_gradient
    from workbench.quantum.robuststate.trace import shadow_fidelity_batch

    pb, machine = _setup(n, device)
    program = from_qiskit(machine.circuit)
    settings = np.random.default_rng(0).integers(0, 3, size=(16, n))

    def robust() -> torch.Tensor:
        rho = shadow_density(machine.measure(pb.theta0, settings), settings)
        return straight_through_gradient(program, pb.theta0, rho, pb.psi)[0]

    def shift() -> torch.Tensor:
        return parameter_shift_gradient(
            lambda b: shadow_fidelity_batch(machine, b, settings, pb.psi, mitigate=True), pb.theta0
        )

    times = interleaved({"ours": robust, "peer": shift}, rounds=rounds)
    ratio = median([a / b for a, b in zip(times["ours"], times["peer"])])
    return {
        "case": f"(b) one step, {n} qubits, P={pb.ansatz.num_parameters}: RobustState vs parameter shift",
        "ours_s": median(times["ours"]),
        "peer_s": median(times["peer"]),
        "ratio": ratio,
        "max_abs_diff": float("nan"),
    }


def run(*, quick: bool) -> Section:
    """Cases (a) and (b); ``data["rows"]`` holds the raw numbers."""
    import qiskit_aer.library  # noqa: F401  (save_* methods)

    rows = []
    widths = (3,) if quick else (4, 5)
    rounds = 2 if quick else 5
    for n in widths:
        rows.append(_case_machine(n, "fake_nairobi", rounds))
    rows.append(_case_step(widths[-1] if not quick else 2, "fake_nairobi", rounds))
    table = Table(
        headers=("case", "ours", "peer", "ours / peer", "max |diff|"),
        rows=tuple(
            (r["case"], fmt_ms(r["ours_s"]), fmt_ms(r["peer_s"]), fmt_ratio(r["ratio"]), fmt_sci(r["max_abs_diff"]))
            for r in rows
        ),
    )
    return Section(
        title="RobustState: the counted machine vs qiskit-aer; a straight-through step vs a parameter-shift step",
        intro=__doc__.split("\n\n", 1)[1].strip(),
        tables=(table,),
        summary=tuple((r["case"], fmt_ratio(r["ratio"])) for r in rows),
        data={"rows": rows},
    )
