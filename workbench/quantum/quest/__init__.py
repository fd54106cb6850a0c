"""QuEst (arXiv 2210.16724): a graph transformer predicts a circuit's probability of successful trial (PST) on
a noisy device from its DAG and the device's calibration, far faster than simulating it.

``algorithms`` (GHZ, QFT, Grover, BV, QAOA, HEA), ``labels`` (PST and state fidelity by qiskit-aer),
``dataset`` (generation over processes, cached), ``encoding`` (circuit -> graph features), ``batching``
(normalisation, mini-batches), ``model`` (TransformerConv, QuEst and the two baselines), ``train``,
``checkpoint``, ``workflow``, ``predict`` (OpenQASM 2/3 on a device), ``speed``, ``config``, ``runner``.
"""
