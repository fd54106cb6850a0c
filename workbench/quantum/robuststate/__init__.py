"""RobustState: noise-aware variational state preparation (arXiv 2311.16035)."""
