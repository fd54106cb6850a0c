"""Benchmarks of the Research Workbench (apart from the tests; see ``BENCHMARKS.md``).

Every group measures something of ours next to a peer timed or counted in the same run and reports the ratio:

* ``attention``: ``workbench.llm.mesh_attention.blockwise.blockwise_attention`` vs torch's
  ``scaled_dot_product_attention`` in one process (time and max abs difference);
* ``comm``: bytes per rank that Mesh, Ring, Ulysses and USP really send and receive in gloo runs, the
  Ring / Mesh ratio against the paper's (sqrt(P)+1)/2, and the closed-form model of ``volume.py`` against the
  counted bytes;
* ``panels``: redraw latency of every ready technique's panel against a 100 ms median target;
* ``machine``: the header (CPU, memory, versions, date, command).

Run ``python -m benchmarks.run [--quick] [--out BENCHMARKS.md]`` from the repository root.
"""
