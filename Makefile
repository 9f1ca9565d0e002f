# Two front doors: `make lab` for students, `make test` for everything.
# Both create .venv with the pinned dependencies the first time they run.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings

.PHONY: lab lab-check test test-fast lessons release bench sysdeps lab-sysdeps venv python-check clean-runtime hub hub-venv hub-proxy site locks

venv: $(STAMP)

# One lock per CPython minor version (locks/python3.X.lock, written by `make locks`): the one
# of the Python that runs .venv, or that will create it (PYTHON=python3.12 make lab).
VENV_PYTHON    := $(if $(wildcard $(PY)),$(PY),$(PYTHON))
PYTHON_VERSION := $(shell $(VENV_PYTHON) -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)
LOCK           := locks/python$(basename $(PYTHON_VERSION)).lock
COMMA          := ,
SUPPORTED      := $(subst $() ,$(COMMA) ,$(strip $(patsubst locks/python%.lock,%,$(wildcard locks/python*.lock))))

python-check:
	@test -n "$(PYTHON_VERSION)" || { echo "make: cannot run $(VENV_PYTHON): install CPython $(SUPPORTED) (3.11 from 3.11.2 on), or name one: make lab PYTHON=python3.12" >&2; exit 1; }
	@test -f "$(LOCK)" -a -z "$(filter 3.11.0 3.11.1,$(PYTHON_VERSION))" || { echo "make: $(VENV_PYTHON) is Python $(PYTHON_VERSION), which the course does not support: it is locked for CPython $(SUPPORTED) (3.11 from 3.11.2 on); name another, e.g. make lab PYTHON=python3.12$(if $(wildcard $(PY)), after removing .venv,)" >&2; exit 1; }

# PyPI's Linux torch is the CUDA build (several GB of nvidia packages): the CPU build comes from
# PyTorch's own index whenever it answers; a machine without it installs the torch it can find
# (a local CPU wheel, as here, or PyPI's, which is the CPU build on macOS and Windows).
TORCH_CPU_INDEX := https://download.pytorch.org/whl/cpu

# torch goes first and alone: the CPU wheel pinned here; anything unpinned would pull CUDA.
$(STAMP): pyproject.toml $(wildcard $(LOCK)) | python-check
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet torch==2.13.0 $$($(PY) -c "import urllib.request as r; r.urlopen('$(TORCH_CPU_INDEX)/torch/', timeout=10); print('--extra-index-url $(TORCH_CPU_INDEX)')" 2>/dev/null)
	$(PY) -m pip install --quiet -r $(LOCK)
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	mkdir -p $(LAB_SETTINGS)
	cp course/lab/overrides.json $(LAB_SETTINGS)/overrides.json
	touch $(STAMP)

# Debian packages the course needs (graphviz's `dot`, bubblewrap, chromium...): installed when
# we are root with apt, otherwise a clear message says what is missing. A student's `make lab`
# asks only for what the lab needs.
sysdeps:
	@bash .ci/sysdeps

lab-sysdeps:
	@bash .ci/sysdeps lab

# course/ goes on JUPYTER_CONFIG_PATH: Jupyter then loads course/jupyter_server_config.py and
# nbgrader's lab extensions load course/nbgrader_config.py (exchange in var/exchange).
LAB_ENV := JUPYTER_CONFIG_PATH="$(CURDIR)/course$(if $(JUPYTER_CONFIG_PATH),:$(JUPYTER_CONFIG_PATH),)"

lab: $(STAMP) lab-sysdeps $(LAB_SETTINGS)/overrides.json
	@mkdir -p var   # runtime state (coursebase/paths.py): Formgrader's gradebook goes there
	$(LAB_ENV) $(VENV)/bin/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root,)

# JupyterLab reads setting overrides (pop-ups off) only from the app's settings folder.
$(LAB_SETTINGS)/overrides.json: course/lab/overrides.json
	mkdir -p $(LAB_SETTINGS)
	cp $< $@

# Shows what `make lab` will load and fails if an nbgrader extension is missing.
lab-check: $(STAMP) $(LAB_SETTINGS)/overrides.json
	$(LAB_ENV) $(PY) -m tests.browser.lab_check

# Three runs: the test suite (one file per worker: with pytest 9.2, xdist_group marks are not
# applied, and every group here lives in one file), then every lesson re-executed and compared with its stored
# outputs (nbval), twice: with the CPU kernels torch picks for this machine, and with its default
# (no AVX) kernels, which any x86 CPU can run and which sum and round differently, so a stored
# output that depends on the CPU fails on every machine. The two lesson runs go side by side,
# each in a network namespace of its own where the system allows it (tests/lesson_runs.py).
# Last, the checkout must be as the suite found it (`git status --ignored`, caches aside):
# tests and benchmarks write to temporary folders only.
CHECKOUT_RECORD := $(VENV)/checkout-before-test

test: $(STAMP) sysdeps hub-proxy
	$(PY) -m tests.checkout_state save $(CHECKOUT_RECORD)
	$(PY) -m pytest -n 2 --dist loadfile --durations=15 tests
	$(PY) -m tests.lesson_runs
	$(PY) -m tests.checkout_state check $(CHECKOUT_RECORD)

# For daily work (under 3 minutes on 2 cores): every test that needs no root, no sandbox, no
# database and no browser (pyproject.toml's markers say which do), and no lesson re-run.
FAST := not slow and not root and not sandbox and not database and not browser and not postgres

test-fast: $(STAMP)
	$(PY) -m pytest -n 2 --dist loadfile -m "$(FAST)" tests

# The course server for a class (README, "A course server for a class"): JupyterHub as root,
# PAM logins for the roster's Unix users, nbgrader's exchange in /srv/nbgrader/exchange.
# HUB_ARGS passes options to `course hub start`, e.g. HUB_ARGS="--port 8080 --instructor ada".
HUB_PROXY := course/hub/node_modules/.bin/configurable-http-proxy

# As root (sudo make hub), .venv is made by the checkout's owner, the instructor, with the
# system's python3 (PATH reset): root's venv would be root's, of a Python the instructor may not
# be able to run (pyenv under /root: `.venv/bin/course: bad interpreter: Permission denied`).
OWNER := $(shell stat -c %U course 2>/dev/null)
AS_OWNER := $(if $(and $(filter 0,$(shell id -u)),$(filter-out root,$(OWNER))),runuser -u $(OWNER) -- env PATH=/usr/local/bin:/usr/bin:/bin,)

hub-venv:
	@if [ -n "$(AS_OWNER)" ] && [ -e $(VENV) ] && [ "$$(stat -c %U $(VENV))" != "$(OWNER)" ]; then \
	  echo "make hub: $(VENV) belongs to $$(stat -c %U $(VENV)), not to $(OWNER), who owns the checkout and runs course in it: remove it (sudo rm -rf $(VENV)) and run sudo make hub again, which makes it as $(OWNER)" >&2; exit 1; fi
	$(AS_OWNER) $(MAKE) --no-print-directory venv

hub: hub-venv sysdeps $(HUB_PROXY) $(LAB_SETTINGS)/overrides.json
	$(VENV)/bin/course hub start $(HUB_ARGS)

# configurable-http-proxy from npm, the exact version in course/hub/package-lock.json.
hub-proxy: $(HUB_PROXY)

$(HUB_PROXY): course/hub/package.json course/hub/package-lock.json
	npm ci --prefix course/hub --no-audit --no-fund
	touch $@

# Re-execute every lesson and store its outputs (what nbval then compares against).
lessons: $(STAMP)
	$(PY) -m course.lessons execute

release: $(STAMP)
	$(VENV)/bin/course release --all

bench: $(STAMP)
	$(PY) -m bench

# The course website in build/site/html (README, "Read the course online"): lessons from their
# stored outputs, the student releases, the reftorch reference; audited like the student kit.
# LAB_URL points the "open in JupyterLab" links at a class hub ({path} = the notebook's path).
site: $(STAMP)
	$(VENV)/bin/course site $(if $(LAB_URL),--lab-url '$(LAB_URL)',)

# The locks, one per supported Python (course/locks.py): give the oldest patch release of each
# minor version, e.g. make locks PYTHONS="/usr/bin/python3.11 python3.12 python3.13".
PYTHONS ?= $(PYTHON)
locks: $(STAMP)
	$(PY) -m course.locks $(PYTHONS)

# The students' repository: lessons, releases, reftorch, no solutions (docs/deploy.md).
STUDENT_KIT ?= ../reftorch-student
.PHONY: student-kit
student-kit: $(STAMP)
	$(VENV)/bin/course student-kit $(STUDENT_KIT)

# Everything a term wrote (student work, grades, rosters, downloads): all of it is in var/.
clean-runtime:
	rm -rf var
