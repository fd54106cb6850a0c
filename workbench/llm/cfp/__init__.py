"""CFP: intra-operator parallel-plan search by ParallelBlocks, repeated segments and a DP (arXiv 2504.00598)."""
