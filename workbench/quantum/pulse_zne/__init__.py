"""Reversed-pulse fidelity estimation and pulse ZNE (Cheng et al., arXiv 2305.12597) on the torch transmon simulator."""
