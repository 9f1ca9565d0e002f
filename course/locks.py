"""The pinned dependencies, one lock per CPython minor version the course supports.

    python -m course.locks PYTHON [PYTHON ...]     # or: make locks PYTHONS="..."

writes ``locks/python3.X.lock`` (everything `make test` needs) and
``course/kit/locks/python3.X.lock`` (the student kit's share of it) for each interpreter
given, by resolving pyproject.toml's ranges with that interpreter's own pip (a scratch venv
of it), so that each package's Requires-Python and environment markers are judged by the
Python students will run. Give the oldest patch release of each minor version that should
install the course: 3.11's lock is resolved with Debian 12's own python3.11 (3.11.2), and a
package that needs 3.11.5 (soupsieve 4) is then never pinned for 3.11.

The locks it replaces are kept as preferences: a package keeps its pinned version unless
that version cannot install on the interpreter (then the newest version no newer than it
that can, then any), so re-locking changes only what has to change.

torch is not resolved: it is installed first and alone from the CPU wheel (`pip install
torch==2.13.0`, see the Makefile); its own requirements are, as the CPU wheel names them.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

from coursebase.paths import REPO

LOCKS = REPO / "locks"
KIT_LOCKS = REPO / "course" / "kit" / "locks"
TORCH = "torch==2.13.0"
# The venv's own installer and build tools: every venv has them, the locks do not pin them.
VENV_TOOLS = ("pip", "setuptools", "wheel")
# What the CPU wheel of torch requires (torch 2.13.0+cpu's metadata); the CUDA build's
# nvidia-* and triton requirements are never locked.
TORCH_REQUIRES = ("filelock", "typing-extensions>=4.10.0", "sympy>=1.13.3", "networkx>=2.5.1",
                  "jinja2", "fsspec>=0.8.5")


class LockError(RuntimeError):
    pass


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_name(minor: str) -> str:
    return f"python{minor}.lock"


def read_pins(path: Path) -> dict[str, str]:
    """normalised name -> 'Name==version' of a lock file (comments skipped)."""
    pins = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if "==" in line:
                name, version = line.split("==", 1)
                pins[normal(name)] = f"{name.strip()}=={version.strip()}"
    return pins


def supported_minors(root: Path = REPO) -> list[str]:
    """The minor versions the course has locks for: '3.11', '3.12', ..."""
    found = [path.name[len("python"):-len(".lock")] for path in (root / "locks").glob("python3.*.lock")]
    return sorted(found, key=lambda minor: tuple(map(int, minor.split("."))))


def wanted(root: Path = REPO) -> list[str]:
    """What is resolved: pyproject's ranges without torch, and torch's own requirements."""
    dependencies = tomllib.loads((root / "pyproject.toml").read_text())["project"]["dependencies"]
    return [d for d in dependencies if normal(Requirement(d).name) != "torch"] + list(TORCH_REQUIRES)


@dataclass
class Resolution:
    python: str            # the interpreter's full version, e.g. "3.11.2"
    executable: str
    environment: dict      # its marker environment (pip's report)
    packages: dict         # normalised name -> {"name", "version", "requires"}
    relaxed: list[str]


def _interpreter_pip(python: str, scratch: Path) -> Path:
    """A scratch venv of ``python`` with a current pip: resolve with that interpreter."""
    venv = scratch / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
                   check=True, capture_output=True, timeout=600)
    return venv / "bin" / "python"


CONFLICT_PIN = re.compile(r"The user requested \(constraint\) ([A-Za-z0-9_.\-]+)(?:==|<=)")
MISSING_PIN = re.compile(r"No matching distribution found for ([A-Za-z0-9_.\-]+)(?:==|<=)")


def resolve(python: str, preferred: dict[str, str], inputs: list[str], say=print) -> Resolution:
    """Resolve ``inputs`` with ``python``'s pip, keeping ``preferred`` pins where they install."""
    constraints = {name: pin for name, pin in preferred.items() if name not in ("torch", *VENV_TOOLS)}
    constraints["torch"] = TORCH   # what depends on torch must accept 2.13.0
    relaxed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="course-lock-") as scratch:
        scratch = Path(scratch)
        pip_python = _interpreter_pip(python, scratch)
        (scratch / "inputs.txt").write_text("\n".join(inputs) + "\n")
        for _ in range(40):
            (scratch / "constraints.txt").write_text("\n".join(constraints.values()) + "\n")
            report = scratch / "report.json"
            done = subprocess.run(
                [str(pip_python), "-m", "pip", "install", "--dry-run", "--ignore-installed",
                 "--report", str(report), "-r", str(scratch / "inputs.txt"),
                 "-c", str(scratch / "constraints.txt")],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
            if done.returncode == 0:
                break
            said = done.stdout   # pip explains a conflict on stdout, a missing version on stderr
            names = {normal(n) for n in CONFLICT_PIN.findall(said) + MISSING_PIN.findall(said)}
            names &= set(constraints)
            if not names:
                raise LockError(f"{python}: pip cannot resolve the course's ranges:\n{said[-3000:]}")
            for name in sorted(names):
                pin = constraints[name]
                if "==" in pin:   # first the newest version no newer than the pin
                    constraints[name] = pin.replace("==", "<=")
                    relaxed.append(f"{pin} -> <=")
                else:             # then any
                    del constraints[name]
                    relaxed.append(f"{pin} -> any")
                say(f"  {python}: {relaxed[-1]}")
        else:
            raise LockError(f"{python}: gave up relaxing pins ({', '.join(relaxed)})")
        data = json.loads(report.read_text())
    packages = {}
    for item in data["install"]:
        metadata = item["metadata"]
        packages[normal(metadata["name"])] = {"name": metadata["name"], "version": metadata["version"],
                                              "requires": metadata.get("requires_dist", [])}
        if not item["download_info"]["url"].endswith(".whl"):
            say(f"  {python}: {metadata['name']} {metadata['version']} has no wheel here (built from source)")
    environment = data["environment"]
    return Resolution(environment["python_full_version"], python, environment, packages, relaxed)


def closure(resolution: Resolution, roots: list[str]) -> set[str]:
    """Names (normalised) the ``roots`` need in ``resolution``, extras followed, markers
    judged by its Python."""
    needed: set[str] = set()
    seen: set[tuple[str, str]] = set()
    queue = [Requirement(root) for root in roots]
    while queue:
        requirement = queue.pop()
        name = normal(requirement.name)
        if name in VENV_TOOLS:
            continue
        for extra in ("", *sorted(requirement.extras)):
            if (name, extra) in seen:
                continue
            seen.add((name, extra))
            needed.add(name)
            if name == "torch":   # the CPU wheel's requirements, never the CUDA build's
                queue += [Requirement(r) for r in TORCH_REQUIRES] if not extra else []
                continue
            if name not in resolution.packages:
                raise LockError(f"{name} is needed but was not resolved for Python {resolution.python}")
            environment = dict(resolution.environment, extra=extra)
            for text in resolution.packages[name]["requires"]:
                needs = Requirement(text)
                if needs.marker is None or needs.marker.evaluate(environment):
                    if extra and (needs.marker is None or "extra" not in str(needs.marker)):
                        continue   # the package's own requirements: queued with extra ""
                    queue.append(needs)
    return needed


def _lock_text(resolution: Resolution, names: set[str], title: str) -> str:
    minor = ".".join(resolution.python.split(".")[:2])
    pins = sorted((TORCH if key == "torch" else f"{p['name']}=={p['version']}"
                   for key, p in resolution.packages.items() if key in names), key=str.lower)
    return (f"# {title} for CPython {minor} (from {resolution.python} on): `make` installs {TORCH}\n"
            f"# first and alone (the CPU wheel), then `pip install -r` this file.\n"
            f"# Resolved with CPython {resolution.python} by `python -m course.locks` (do not edit by hand).\n"
            + "\n".join(pins) + "\n")


def write_locks(resolution: Resolution, root: Path = REPO) -> tuple[Path, Path]:
    from course.student_kit import STUDENT_PACKAGES

    minor = ".".join(resolution.python.split(".")[:2])
    full = root / "locks" / lock_name(minor)
    kit = root / "course" / "kit" / "locks" / lock_name(minor)
    for path in (full, kit):
        path.parent.mkdir(parents=True, exist_ok=True)
    everything = closure(resolution, wanted(root) + ["torch"])
    full.write_text(_lock_text(resolution, everything, "The course's pinned dependencies"))
    kit.write_text(_lock_text(resolution, closure(resolution, list(STUDENT_PACKAGES)),
                              "The student kit's pinned dependencies"))
    return full, kit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m course.locks", description=__doc__.split("\n\n")[0])
    parser.add_argument("pythons", nargs="+", metavar="PYTHON",
                        help="an interpreter per minor version, the oldest patch release to support")
    parser.add_argument("--prefer", help="a lock whose pins to keep where they install "
                        "(default: each minor version's current lock, else the oldest one's)")
    args = parser.parse_args(argv)
    inputs = wanted()
    for python in args.pythons:
        version = subprocess.run([python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        current = LOCKS / lock_name(version)
        fallback = [LOCKS / lock_name(m) for m in supported_minors()]
        preferred = read_pins(Path(args.prefer) if args.prefer else current if current.is_file()
                              else fallback[0] if fallback else current)
        print(f"resolving for {python} (Python {version}) ...")
        try:
            resolution = resolve(python, preferred, inputs)
        except LockError as error:
            print(f"course.locks: {error}", file=sys.stderr)
            return 1
        full, kit = write_locks(resolution)
        print(f"wrote {full.relative_to(REPO)} and {kit.relative_to(REPO)} (CPython {resolution.python}; "
              f"{len(resolution.packages)} packages, {len(resolution.relaxed)} pin(s) relaxed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
