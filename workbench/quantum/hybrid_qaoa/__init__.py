"""Hybrid gate-pulse QAOA (Liang et al., arXiv 2212.00661): a gate-level cost layer, a pulse-level mixer."""
