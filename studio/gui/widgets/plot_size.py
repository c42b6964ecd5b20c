"""How much room a plot takes, known before pyqtgraph is imported: the place of a plot built
later (:mod:`studio.gui.widgets.deferred`) is laid out as the plot will be."""

MIN_HEIGHT = 170
"""A plot's least height: its title, axes and labels, and room for the data."""
