# Two front doors: `make lab` for students, `make test` for everything.
# Both create .venv with the pinned dependencies the first time they run.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings

.PHONY: lab test lessons release bench sysdeps venv clean-runtime

venv: $(STAMP)

# torch goes first and alone: the CPU wheel pinned here; anything unpinned would pull CUDA.
$(STAMP): pyproject.toml requirements.lock
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	mkdir -p $(LAB_SETTINGS)
	cp course/lab/overrides.json $(LAB_SETTINGS)/overrides.json
	touch $(STAMP)

# Debian packages the course needs (graphviz's `dot`, bubblewrap, chromium): installed when
# we are root with apt, otherwise a clear message says what is missing.
sysdeps:
	@bash .ci/sysdeps

lab: $(STAMP) sysdeps
	$(VENV)/bin/jupyter lab --notebook-dir=. --ServerApp.open_browser=False \
	  --config=course/jupyter_server_config.py $(if $(filter 0,$(shell id -u)),--allow-root,)

test: $(STAMP) sysdeps
	$(PY) -m pytest -n 2 --dist loadgroup

# Re-execute every lesson and store its outputs (what nbval then compares against).
lessons: $(STAMP)
	$(PY) -m course.lessons execute

release: $(STAMP)
	$(VENV)/bin/course release --all

bench: $(STAMP)
	$(PY) -m bench

clean-runtime:
	rm -rf course/submitted course/autograded course/feedback course/gradebook.db course/exchange course/reports
