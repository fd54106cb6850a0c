"""LLM systems: shared pieces of the LLM techniques (each technique is a sub-package)."""
