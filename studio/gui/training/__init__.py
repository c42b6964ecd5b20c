"""The Training tab: settings forms, the estimate, live curves."""
