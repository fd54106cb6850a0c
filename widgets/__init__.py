"""Live panels (ipywidgets controls + plotly FigureWidgets) over the ``workbench`` package."""
