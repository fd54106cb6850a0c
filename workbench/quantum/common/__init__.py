"""Code shared by several quantum techniques; not a technique (the registry lists none of these folders).

- :mod:`.pulse`: the transmon pulse simulator in torch (device Hamiltonians, waveforms, schedules,
  propagation, calibrated native pulses). Used by pulse-sim, NAPA, pulse ZNE and hybrid gate-pulse QAOA (and
  by :meth:`workbench.quantum.device.Device.transmons`).
- :mod:`.variational`: the variational layer (topology-aware ansatz, the counted noisy machine, classical
  shadows, losses, optimisers, gate ansatze, trainability). Used by RobustState, TopGen and QGAS.

Shared code imports no technique package (``tests/test_layering.py`` checks it).
"""
