"""QGAS: ansatz search with a pluggable (language-model or local) proposer (arXiv 2307.08191)."""
