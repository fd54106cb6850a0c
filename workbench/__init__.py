"""Research Workbench: kernels, models and runners for eighteen systems and quantum-computing papers.

This package never imports ipywidgets or plotly; panels live in ``widgets/`` and import from here.
"""

__version__ = "0.1.0"
