# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml scripts/install.sh | cksum | cut -d' ' -f1)

.PHONY: install demo test lint bench eval clean system-deps tools screenshots

$(STAMP): pyproject.toml scripts/install.sh
	PYTHON=$(PYTHON) VENV=$(VENV) bash scripts/install.sh
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/stackgraph demo

system-deps:
	bash scripts/system-deps.sh

# helm + kubectl for the chart tests (tests/deploy), into .tools/bin
tools:
	bash scripts/fetch-helm.sh

test: $(STAMP) system-deps tools
	$(BIN)/pytest -q

# the web UI's pages as PNGs (stackgraph/web/screenshots/, shown in the README)
screenshots: $(STAMP) system-deps
	$(BIN)/python scripts/screenshots.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	bash scripts/typecheck.sh $(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python -m stackgraph.bench

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache
