"""The devices technique: real IBM device noise snapshots on the quantum core, checked against qiskit-aer."""
