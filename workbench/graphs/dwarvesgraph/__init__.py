"""DwarvesGraph: pattern-decomposition graph mining on the area's compiled engine (``workbench run dwarvesgraph``)."""
