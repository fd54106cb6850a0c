"""Graph pattern mining: CSR graphs and loaders, patterns, a compiled enumeration engine, and DwarvesGraph
(pattern decomposition with a loop-nest compiler and a cost model).

Layers (each module's docstring has the details):

- data: :mod:`.graph` (CSR :class:`~.graph.Graph`), :mod:`.loaders`, :mod:`.generators`;
- patterns: :mod:`.patterns` (names, edge-list strings, motifs, automorphisms, canonical forms),
  :mod:`.induced` (vertex-induced from edge-induced counts);
- engines: :mod:`.enumerate` (matching order + symmetry-breaking restrictions; the schedule semantics other
  engines reuse), :mod:`.decompose` (cutting sets, shrinkage patterns, symmetry), :mod:`.compiler` (plan ->
  numba source), :mod:`.kernels` (compile, cache, run on threads), :mod:`.setops`, :mod:`.cost_model`,
  :mod:`.miner` (a counting session: plan choice, recursion, memoised sub-counts);
- applications: :mod:`.partial` (partial embeddings, existence queries, MNI support, frequent subgraphs);
- front: :mod:`.config`, :mod:`.runner` (``workbench run pattern-count``), :mod:`.studies` (measurements).
"""
