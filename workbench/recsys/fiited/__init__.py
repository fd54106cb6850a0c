"""FIITED (arXiv 2401.04408): fine-grained in-training embedding dimension pruning on a DLRM, with a
virtually-hashed physically-indexed (VHPI) chunk table.

| file | what |
|---|---|
| ``config.py`` | ``FiitedConfig`` (every parameter of ``workbench run fiited``), ``FiitedViewConfig`` (the panel's) |
| ``vhpi.py`` | the VHPI table: hashed slots, per-chunk physical pointers, chunk pool, free list, optimizer state |
| ``chunked.py`` | chunked lookup (``nn.Embedding`` / ``nn.EmbeddingBag`` forms) and the pool's sparse Adagrad |
| ``utility.py`` | per-chunk utility EMAs, the budget plan (prefix per vector), the pruning schedule |
| ``baselines.py`` | full, uniform, row-prune, mixed-dim, hashing, element-prune tables at equal memory |
| ``train.py`` | one training run of a method on a data set (DLRM from ``workbench.recsys.dlrm``) |
| ``reference.py`` | a dict-of-lists VHPI reference and a slow per-id lookup (for the tests) |
| ``model.py`` | analytic memory accounting at paper scale (billion-row tables), labelled MODEL |
| ``study.py`` | data sets, memoised runs and sweeps over budgets and seeds, the panel's view, the equal-AUC comparison behind the claims |
| ``claims.py`` | the paper's claims as data (``CLAIMS``), each with its baseline, assumptions and measure |
| ``runner.py`` | ``run(config)`` for the CLI, ``TECHNIQUE`` |
"""
