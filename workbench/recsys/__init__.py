"""Recommender systems: shared pieces of the recsys techniques (each technique is a sub-package)."""
