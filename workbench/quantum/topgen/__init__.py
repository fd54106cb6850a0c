"""TopGen (arXiv 2210.08190v1): topology-aware bottom-up ansatz generation, scored by expressibility and
Meyer-Wallach entangling capability (Sim et al., arXiv 1905.10876v3), trained as a QNN on scikit-learn digits."""
