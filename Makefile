# Two commands: `make run` (the app on the bundled lab corpus) and `make test` (the whole suite).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat requirements.txt | cksum | cut -d' ' -f1)
DEMO_Q := O PX-7 não foi ativado apesar do pagamento, o que faço?

.PHONY: install run index demo test test-fast bench bench-quick clean

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

install: $(STAMP)

index: install
	$(PY) -m retrieval index

demo: index
	$(PY) -m retrieval ask "$(DEMO_Q)" --filter tenant=lumen

run: demo
	$(VENV)/bin/streamlit run app.py

test: install
	@bash scripts/ensure_chromium.sh
	$(PY) -m pytest

test-fast: install
	$(PY) -m pytest tests/unit

bench: install
	$(PY) -m retrieval bench

bench-quick: install
	$(PY) -m retrieval bench --quick

clean:
	rm -rf .retrieval artifacts .pytest_cache
