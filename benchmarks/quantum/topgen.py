"""TopGen: our batched expressibility / Meyer-Wallach sampler against the obvious qiskit loop, side by side.

Ours: :func:`workbench.quantum.topgen.expressibility.fidelities` (all 2 x pairs states of the parameterised
circuit in one batched torch statevector call, complex128) and :func:`meyer_wallach` on the same states. Peer:
``qiskit.quantum_info.Statevector`` per parameter vector, ``state_fidelity`` per pair and ``partial_trace`` per
qubit (``workbench.quantum.topgen.reference``), the same draws. Both return the same numbers (tested to 1e-12);
the ratio is the peer's time over ours, interleaved rounds (same machine load).

The full run also retrains the study's three task runs (the notebook's defaults) and writes them to the shipped
``workbench/quantum/topgen/study_tasks/`` (:func:`workbench.quantum.topgen.study.record_study_runs`), which the
notebook and the claims read; the quick run only checks that a shipped run exists for each (the slow test
``test_shipped_study_run_is_current`` retrains the first and compares).
"""

from __future__ import annotations

from typing import Any

import torch

from benchmarks.common import Section, Table, fmt_ms, fmt_ratio, interleaved, median


def _case(name: str, qubits: int, pairs: int, rounds: int) -> dict[str, Any]:
    from qiskit.quantum_info import Statevector

    from workbench.quantum.topgen.expressibility import fidelities, meyer_wallach, sample_states
    from workbench.quantum.topgen.reference import draw_parameters, reference_fidelities, reference_meyer_wallach
    from workbench.quantum.topgen.templates import circuit_by_name
    from workbench.threads import one_thread

    circuit = circuit_by_name(name, qubits, 1)
    mw_states = min(pairs, 200)

    def ours() -> None:
        with one_thread():
            fidelities(circuit, pairs, torch.Generator().manual_seed(0))
            meyer_wallach(sample_states(circuit, mw_states, torch.Generator().manual_seed(1)), qubits)

    def qiskit_loop() -> None:
        reference_fidelities(circuit, pairs, seed=0)
        theta = draw_parameters(circuit, mw_states, torch.Generator().manual_seed(1))
        for row in theta:
            reference_meyer_wallach(Statevector(circuit.assign_parameters(list(row))))

    times = interleaved({"ours": ours, "qiskit": qiskit_loop}, rounds=rounds)
    ratios = [b / a for a, b in zip(times["ours"], times["qiskit"])]
    return {
        "circuit": name,
        "qubits": qubits,
        "pairs": pairs,
        "ours_s": median(times["ours"]),
        "qiskit_s": median(times["qiskit"]),
        "ratio": median(ratios),
    }


def _study_runs(quick: bool) -> str:
    """Retrain and write the shipped study runs (full), or check that each has a shipped file (quick)."""
    import time

    from workbench.quantum.topgen import study
    from workbench.quantum.topgen.experiment import task_file

    if quick:
        missing = [r for r in study.STUDY_RUNS if not (study.STUDY_TASKS / task_file(study.study_config(*r))).is_file()]
        if missing:
            raise LookupError(f"shipped study runs missing for {missing}: run python -m benchmarks.run --only topgen")
        return f"Quick run: the {len(study.STUDY_RUNS)} shipped study runs are present (not retrained)."
    start = time.perf_counter()
    written = study.record_study_runs()
    return (
        f"Retrained and wrote the {len(written)} study runs ({', '.join(written)}) to "
        f"workbench/quantum/topgen/study_tasks/ in {time.perf_counter() - start:.0f} s."
    )


def run(*, quick: bool) -> Section:
    cases = [
        ("sim-2", 4, 200 if quick else 2000),
        ("sim-9", 4, 200 if quick else 2000),
        ("sim-2", 6, 100 if quick else 1000),
    ]
    rounds = 2 if quick else 3
    rows = [_case(name, q, pairs, rounds) for name, q, pairs in cases]
    recorded = _study_runs(quick)
    table = Table(
        headers=("circuit", "qubits", "pairs", "ours (batched torch)", "qiskit loop", "qiskit / ours"),
        rows=tuple(
            (
                r["circuit"],
                str(r["qubits"]),
                str(r["pairs"]),
                fmt_ms(r["ours_s"]),
                fmt_ms(r["qiskit_s"]),
                fmt_ratio(r["ratio"]),
            )
            for r in rows
        ),
    )
    return Section(
        title="TopGen: expressibility and Meyer-Wallach sampler vs a qiskit Statevector loop",
        intro=(
            "Fidelities of `pairs` random parameter pairs (KL to Haar input) plus Meyer-Wallach on up to 200 states; "
            "ours batches every state in one torch statevector call, the peer builds one qiskit `Statevector` per "
            "parameter vector and calls `state_fidelity` / `partial_trace`. Same draws, same numbers (tested)."
        ),
        tables=(table,),
        notes=(recorded,),
        summary=(("TopGen sampler vs qiskit loop (sim-2, 4 qubits)", fmt_ratio(rows[0]["ratio"])),),
        data={"rows": rows},
    )


if __name__ == "__main__":
    print(run(quick=True).markdown())
