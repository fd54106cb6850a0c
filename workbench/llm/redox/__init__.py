"""Redox (arXiv 2505.16280 v2): training-data loading by file redirection, with its baselines, on real files."""
