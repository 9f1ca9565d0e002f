"""environment.yml (for conda users) must name the same packages as pyproject.toml, with
version ranges that both admit the exact pins `make` installs from requirements.lock."""
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

ROOT = Path(__file__).resolve().parent.parent

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
            problems.append(f"{name}: not pinned in requirements.lock")
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


def test_environment_yml_matches_pyproject():
    assert mismatches(read("pyproject.toml"), read("environment.yml"), read("requirements.lock")) == []


def test_checker_catches_a_missing_package():
    broken = read("environment.yml").replace("  - nbval>=0.11,<0.12\n", "")
    assert "nbval: in pyproject.toml but not in environment.yml" in mismatches(
        read("pyproject.toml"), broken, read("requirements.lock"))


def test_checker_catches_an_incompatible_range():
    broken = read("environment.yml").replace("numpy>=2.0,<3", "numpy>=1.20,<2")
    problems = mismatches(read("pyproject.toml"), broken, read("requirements.lock"))
    assert any(p.startswith("numpy: environment.yml range") for p in problems)


def test_checker_catches_an_extra_package():
    broken = read("environment.yml").replace("  - pip\n", "  - pip\n  - scipy>=1.10\n")
    assert "scipy: in environment.yml but not in pyproject.toml" in mismatches(
        read("pyproject.toml"), broken, read("requirements.lock"))


@pytest.mark.parametrize("name", ["torch", "numpy", "nbgrader", "jupyterlab"])
def test_lock_pins_the_core_packages(name):
    assert name in lock_pins(read("requirements.lock"))


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
