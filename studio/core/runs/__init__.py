"""Run folders on disk: how a run is laid out and written, its lock, its history and the index
that lists runs fast."""
