"""Pulse-level simulation of transmons (shared by NAPA, pulse ZNE and hybrid gate-pulse QAOA).

Qiskit 2 has no pulse module, so this is ours, in torch: device Hamiltonians from the fake backends
(:mod:`.device`), waveforms (:mod:`.waveforms`), schedules on drive and control channels (:mod:`.schedule`),
the rotating-frame Hamiltonian (:mod:`.hamiltonian`), piecewise-constant propagation of states, unitaries and
density matrices with T1/T2 (:mod:`.propagate`), and calibration of native pulses (:mod:`.calibrate`).
"""
