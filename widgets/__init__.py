"""Live panels (ipywidgets controls + plotly figures that redraw live) over the ``workbench`` package."""
