"""environment.yml (for conda users) must name the same packages as pyproject.toml, with
version ranges that both admit the exact pins `make` installs from locks/python3.X.lock; there
is a lock for every CPython minor version pyproject.toml and the README claim, resolved with
the oldest patch release claimed (3.11: Debian 12's 3.11.2), and the student kit's locks are
the course's, cut down to what the kit needs."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.version import Version
from rattler import MatchSpec
from rattler import Version as CondaVersion
from rattler import VersionSpec

from coursebase.paths import REPO as ROOT

# PyPI name -> conda-forge name, where they differ
CONDA_NAMES = {"torch": "pytorch", "graphviz": "python-graphviz"}
# conda-only entries that have no PyPI counterpart in pyproject
CONDA_ONLY = {"python", "pip", "graphviz"}  # graphviz here is the `dot` binary


def pyproject_requirements(text: str) -> dict[str, Requirement]:
    deps = tomllib.loads(text)["project"]["dependencies"]
    return {Requirement(d).name.lower(): Requirement(d) for d in deps}


def environment_specs(text: str) -> tuple[dict[str, str], dict[str, Requirement]]:
    """(conda name -> version spec text, pip name -> requirement) from environment.yml."""
    env = yaml.safe_load(text)
    conda, pip = {}, {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for line in dep.get("pip", []):
                if not line.startswith("-e"):
                    req = Requirement(line)
                    pip[req.name.lower()] = req
            continue
        spec = MatchSpec(dep)
        conda[spec.name.normalized] = spec.version or ""
    return conda, pip


def lock_pins(text: str) -> dict[str, str]:
    pins = {}
    for line in text.splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.strip().lower()] = version.strip()
    return pins


def mismatches(pyproject_text: str, environment_text: str, lock_text: str) -> list[str]:
    """Every way the two files disagree (empty when they agree)."""
    wanted = pyproject_requirements(pyproject_text)
    conda, pip = environment_specs(environment_text)
    pins = lock_pins(lock_text)
    problems = []
    for name, req in wanted.items():
        pin = pins.get(name)
        if pin is None:
            problems.append(f"{name}: not pinned in the lock")
        elif not req.specifier.contains(Version(pin), prereleases=True):
            problems.append(f"{name}: lock pin {pin} is outside pyproject's {req.specifier}")
        conda_name = CONDA_NAMES.get(name, name)
        if name in pip:
            spec_ok = pin is None or pip[name].specifier.contains(Version(pin), prereleases=True)
            if not spec_ok:
                problems.append(f"{name}: environment.yml pip range {pip[name].specifier} excludes {pin}")
        elif conda_name in conda:
            spec = conda[conda_name]
            if spec and pin and not VersionSpec(spec).matches(CondaVersion(pin)):
                problems.append(f"{name}: environment.yml range {spec} excludes {pin}")
        else:
            problems.append(f"{name}: in pyproject.toml but not in environment.yml")
    known = {CONDA_NAMES.get(n, n) for n in wanted} | set(wanted)
    for name in list(conda) + list(pip):
        if name not in known and name not in CONDA_ONLY:
            problems.append(f"{name}: in environment.yml but not in pyproject.toml")
    return problems


def read(name: str) -> str:
    return (ROOT / name).read_text()


def locks() -> dict[str, Path]:
    """minor version ('3.11') -> the course's lock for it."""
    return {path.name[len("python"):-len(".lock")]: path for path in sorted((ROOT / "locks").glob("python3.*.lock"))}


OLDEST = "locks/python3.11.lock"   # the lock the checker tests below break things against


def claimed_minors(requires_python: str) -> list[str]:
    """Every CPython 3.X that pyproject's requires-python admits (it must have an upper bound:
    each minor version needs its own lock)."""
    from packaging.specifiers import SpecifierSet
    spec = SpecifierSet(requires_python)
    return [f"3.{minor}" for minor in range(0, 40) if f"3.{minor}.99" in spec or f"3.{minor}.2" in spec]


@pytest.mark.parametrize("minor", sorted(locks()))
def test_environment_yml_and_each_lock_match_pyproject(minor):
    assert mismatches(read("pyproject.toml"), read("environment.yml"), locks()[minor].read_text()) == []


def test_there_is_a_lock_for_every_python_claimed_and_only_those():
    requires = tomllib.loads(read("pyproject.toml"))["project"]["requires-python"]
    claimed = claimed_minors(requires)
    assert claimed and sorted(locks()) == claimed, (requires, sorted(locks()))
    kit = sorted(path.name for path in (ROOT / "course" / "kit" / "locks").glob("python3.*.lock"))
    assert kit == [f"python{minor}.lock" for minor in claimed]
    # README and the kit's README name exactly those, 3.11 from Debian 12's 3.11.2 on
    said = "CPython " + ", ".join(["3.11 (from 3.11.2, Debian 12's `python3.11`)", *claimed[1:-1]]) \
        + f" or {claimed[-1]}"
    for readme in ("README.md", "course/kit/README.md"):
        assert said in " ".join(read(readme).split()), (readme, said)


def test_each_lock_was_resolved_with_the_oldest_python_it_claims():
    for minor, path in locks().items():
        header = path.read_text().splitlines()[:3]
        resolved = next(line for line in header if line.startswith("# Resolved with CPython "))
        version = resolved.split()[4]
        assert version.rsplit(".", 1)[0] == minor, (path.name, resolved)
        assert f"(from {version} on)" in header[0], header
    # Debian 12's own python3.11 is 3.11.2: soupsieve 4 (needs 3.11.5) cannot be in that lock
    assert "Resolved with CPython 3.11.2 " in read(OLDEST)
    assert lock_pins(read(OLDEST))["soupsieve"].split(".")[0] != "4"


def test_the_kits_locks_are_the_courses_cut_down():
    from course.student_kit import STUDENT_PACKAGES
    for minor, path in locks().items():
        course = lock_pins(path.read_text())
        kit = lock_pins((ROOT / "course" / "kit" / "locks" / path.name).read_text())
        assert {name: course.get(name) for name in kit} == kit, minor
        assert {package.lower() for package in STUDENT_PACKAGES} <= set(kit), minor
        assert not {"distributed", "playwright", "psycopg", "jupyterhub", "sphinx"} & set(kit), minor


def test_checker_catches_a_lock_for_an_unclaimed_python():
    assert claimed_minors(">=3.11,<3.14") == ["3.11", "3.12", "3.13"]
    assert claimed_minors(">=3.11") == [f"3.{minor}" for minor in range(11, 40)]   # no end: no lock set fits


def test_checker_catches_a_missing_package():
    broken = read("environment.yml").replace("  - nbval>=0.11,<0.12\n", "")
    assert "nbval: in pyproject.toml but not in environment.yml" in mismatches(
        read("pyproject.toml"), broken, read(OLDEST))


def test_checker_catches_an_incompatible_range():
    broken = read("environment.yml").replace("numpy>=2.0,<3", "numpy>=1.20,<2")
    problems = mismatches(read("pyproject.toml"), broken, read(OLDEST))
    assert any(p.startswith("numpy: environment.yml range") for p in problems)


def test_checker_catches_an_extra_package():
    broken = read("environment.yml").replace("  - pip\n", "  - pip\n  - scipy>=1.10\n")
    assert "scipy: in environment.yml but not in pyproject.toml" in mismatches(
        read("pyproject.toml"), broken, read(OLDEST))


@pytest.mark.parametrize("name", ["torch", "numpy", "nbgrader", "jupyterlab"])
def test_lock_pins_the_core_packages(name):
    assert name in lock_pins(read(OLDEST))


# -- system packages: a student's `make lab` asks only for what the lab needs -------------
def _sysdeps(target: str, tmp_path: Path) -> subprocess.CompletedProcess:
    """`.ci/sysdeps TARGET` as a user who is not root, on a machine with nothing but a shell,
    coreutils, graphviz's `dot` and `g++` (stand-ins here): what would it ask for?"""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("bash", "id", "ls", "env"):
        (bin_dir / tool).unlink(missing_ok=True)
        (bin_dir / tool).symlink_to(shutil.which(tool))
    for stand_in in ("dot", "g++"):   # what the lab needs: graphviz, a C++ compiler (lesson 09b)
        (bin_dir / stand_in).write_text("#!/bin/sh\n")
        (bin_dir / stand_in).chmod(0o755)
    script = tmp_path / "sysdeps"   # a copy: the checkout itself may sit in a 0700 folder
    shutil.copy(ROOT / ".ci" / "sysdeps", script)
    script.chmod(0o755)
    command = [str(bin_dir / "bash"), str(script), *([target] if target else [])]
    if os.geteuid() == 0:   # be the student: not root, so nothing gets installed
        command = [shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    return subprocess.run(command, env={"PATH": str(bin_dir)}, capture_output=True, text=True)


def test_make_lab_asks_a_student_only_for_what_the_lab_needs():
    with tempfile.TemporaryDirectory() as folder:   # 0700: opened for the unprivileged user
        os.chmod(folder, 0o755)
        lab = _sysdeps("lab", Path(folder))
        everything = _sysdeps("", Path(folder))   # what `make test` needs: the check can fail
    assert lab.returncode == 0 and lab.stderr == "", lab.stderr
    assert everything.returncode == 1
    for package in ("bubblewrap", "chromium", "npm"):   # (PostgreSQL is also found by its path)
        assert package in everything.stderr
    makefile = (ROOT / "Makefile").read_text()
    lab_rule = next(line for line in makefile.splitlines() if line.startswith("lab:"))
    assert "lab-sysdeps" in lab_rule.split() and "sysdeps" not in lab_rule.split()


def _pythons() -> dict[str, str]:
    """An interpreter per minor version found on this machine: the system's, pyenv's."""
    found = {}
    for pattern in ("/usr/bin/python3.*", "/root/.pyenv/versions/3.*/bin/python3", "/usr/local/bin/python3.*"):
        for path in sorted(Path("/").glob(pattern.lstrip("/"))):
            if path.name.endswith("-config") or not os.access(path, os.X_OK):
                continue
            done = subprocess.run([str(path), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                  capture_output=True, text=True)
            if done.returncode == 0:
                found.setdefault(done.stdout.strip(), str(path))
    return found


@pytest.mark.parametrize("makefile", ["Makefile", "course/kit/Makefile"])
def test_make_picks_the_lock_of_the_python_it_runs_and_refuses_others(makefile, tmp_path):
    """`make venv PYTHON=...` (no .venv yet) installs that Python's lock; a Python without one
    is refused by name, before anything is created."""
    folder = tmp_path / "course"
    folder.mkdir()
    shutil.copy(ROOT / makefile, folder / "Makefile")
    shutil.copytree(ROOT / ("locks" if makefile == "Makefile" else "course/kit/locks"), folder / "locks")
    (folder / "pyproject.toml").write_text("")
    pythons = _pythons()
    tried = 0
    for minor, python in pythons.items():
        if minor in locks():   # what it would run
            done = subprocess.run(["make", "-n", "venv", f"PYTHON={python}"], cwd=folder, capture_output=True, text=True)
            assert done.returncode == 0, done.stderr
            assert f"pip install --quiet -r locks/python{minor}.lock" in done.stdout, done.stdout
            tried += 1
        else:                  # run for real: refused before anything is made
            done = subprocess.run(["make", "venv", f"PYTHON={python}"], cwd=folder, capture_output=True, text=True)
            assert done.returncode != 0 and f"is Python {minor}." in done.stderr, (python, done.stdout, done.stderr)
            assert "it is locked for CPython 3.11, 3.12, 3.13 (3.11 from 3.11.2 on)" in done.stderr, done.stderr
            assert not (folder / ".venv").exists()
    assert tried >= 1, pythons
    missing = subprocess.run(["make", "venv", "PYTHON=no-such-python3"], cwd=folder, capture_output=True, text=True)
    assert missing.returncode != 0 and "cannot run no-such-python3" in missing.stderr, missing.stderr
