"""The camera: a source of frames behind one interface (a real camera through Qt Multimedia,
or a fake one for tests and benchmarks), and a view that previews and records its frames."""
