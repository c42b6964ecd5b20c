PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test test-slow lint bench screenshots icons bundle clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/studio

# Two pytest-xdist workers: much of the suite waits (Qt event loops, subprocesses, files), so a
# second process uses the second core. loadfile keeps a file's module fixtures (one Ray instance,
# one training subprocess) in one worker; --no-loadscope-reorder keeps the order of the files,
# which tests/conftest.py starts with the longest.
test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m ruff check studio tests bench packaging
	$(BIN)/lint-imports
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder

lint: $(STAMP)
	$(BIN)/python -m ruff check studio tests bench packaging
	$(BIN)/lint-imports

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/startup.py
	$(BIN)/python bench/trainer_throughput.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/gui_stalls.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/time_to_accuracy.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/canvas_scale.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/canvas_scale.py --model imported-resnet50
	$(BIN)/python bench/folder_scan.py
	$(BIN)/python bench/folder_throughput.py
	$(BIN)/python bench/checkpoint_cost.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/history_open.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/inference_latency.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/drawing_latency.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/camera_latency.py
	$(BIN)/python bench/detection_metrics.py
	$(BIN)/python bench/detection_accuracy.py
	$(BIN)/python bench/detection_latency.py
	$(BIN)/python bench/segmenter_epoch.py
	$(BIN)/python bench/batch_inference.py
	$(BIN)/python bench/search_overhead.py
	$(BIN)/python bench/loader_fuzz.py

# A one-folder desktop bundle in dist/layer-studio/ (see "Desktop bundle" in the README).
bundle: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,bundle]"
	$(BIN)/pyinstaller --noconfirm --clean --distpath dist --workpath build/pyinstaller \
		packaging/layer_studio.spec

# The bundle's smoke test (needs `make bundle` first; not part of `make test`).
test-slow: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q -m slow tests/packaging

icons: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python packaging/icons.py

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python packaging/screenshots.py

clean:
	rm -rf $(VENV) build dist *.egg-info
