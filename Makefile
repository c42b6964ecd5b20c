PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/studio

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m ruff check studio tests bench
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/python -m ruff check studio tests bench

bench: $(STAMP)
	$(BIN)/python bench/trainer_throughput.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/gui_stalls.py
	QT_QPA_PLATFORM=offscreen $(BIN)/python bench/time_to_accuracy.py

clean:
	rm -rf $(VENV) build *.egg-info
