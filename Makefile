# The two commands: `make demo` (set up + score the bundled example) and `make test`
# (set up + run the whole test suite). Both work on a fresh machine and are quick after.
# `make docs` builds the documentation site into site/ (offline, warnings as errors).
SHELL := /bin/bash
.ONESHELL:
# byte-code caches (__pycache__, git-ignored) are written even where the environment says not to (some images
# set PYTHONDONTWRITEBYTECODE=1): otherwise each of the suite's `python -m murgat` children compiles murgat
# again (about 0.4 s of CPU each) and pytest rewrites every test file on every run
unexport PYTHONDONTWRITEBYTECODE
# the suite in one worker per core (pytest-xdist), at most four: most of its time is child processes, servers and
# models, which two cores run side by side (on 2 cores: make test's pytest 13 -> 7-8 min, make test-fast 109 -> 73 s);
# every test is written to pass under load (docs/guide/development.md); PARALLEL= runs it in one process;
# loadgroup keeps the tests of one group (tests/conftest.py FILE_GROUPS: the Ray tests) in one worker
PARALLEL ?= -n auto --maxprocesses=4 --dist loadgroup
.PHONY: demo test test-fast docs lint types bench setup

setup:
	@bash scripts/bootstrap.sh >/dev/null

demo:
	@set -euo pipefail
	VENV=$$(bash scripts/bootstrap.sh | tail -n 1)
	rm -rf runs/demo
	"$$VENV/bin/murgat" score examples/responses.jsonl --media-root examples/media --judge embedded --out runs/demo

test:
	@set -euo pipefail
	VENV=$$(bash scripts/bootstrap.sh | tail -n 1)
	"$$VENV/bin/ruff" check murgat media programs prompts human_eval tests benchmarks
	"$$VENV/bin/python" -m mypy
	"$$VENV/bin/python" -m pytest -q -p no:cacheprovider $(PARALLEL) tests

# the site: MkDocs + Material, offline (no web fonts, no CDN), every warning an error (a broken link or anchor too);
# docs/hooks/reference.py generates the command reference from the program's parser while it builds
docs:
	@set -euo pipefail
	VENV=$$(bash scripts/bootstrap.sh | tail -n 1)
	NO_MKDOCS_2_WARNING=1 "$$VENV/bin/mkdocs" build --strict --site-dir site

# the unit tier only (tests/conftest.py assigns every test one of unit / integration / e2e): the tests that
# start no server, subprocess, browser, Ray or model, for a quick check while working; `make test` runs all
test-fast:
	@set -euo pipefail
	VENV=$$(bash scripts/bootstrap.sh | tail -n 1)
	"$$VENV/bin/python" -m pytest -q -p no:cacheprovider $(PARALLEL) -m unit tests

# the code is not formatter-managed (hand-wrapped at 120-140 columns): lint is ruff's checks on every tree
lint:
	@VENV=$$(bash scripts/bootstrap.sh | tail -n 1); "$$VENV/bin/ruff" check murgat media programs prompts human_eval tests benchmarks

# argument types over murgat, programs, media, prompts and human_eval ([tool.mypy] in pyproject.toml)
types:
	@VENV=$$(bash scripts/bootstrap.sh | tail -n 1); "$$VENV/bin/python" -m mypy

bench:
	@VENV=$$(bash scripts/bootstrap.sh | tail -n 1); for b in benchmarks/bench_*.py; do "$$VENV/bin/python" "$$b"; done
