"""How much room a plot takes, known before pyqtgraph is imported: the place of a plot built
later (:mod:`studio.gui.widgets.deferred`) is laid out as the plot will be."""

MIN_HEIGHT = 186
"""The live curves' least height: a plot's title, axes and labels, one row of legend and the
least data area (``plot_style.MIN_DATA_HEIGHT``), so the Training dock keeps its size when
the plots arrive."""
