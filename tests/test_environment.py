"""environment.yml (for conda users) must name the same packages as pyproject.toml, with
version ranges that both admit the exact pins `make` installs from requirements.lock."""
from __future__ import annotations

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
