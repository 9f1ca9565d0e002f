"""The class install: what `course hub start` publishes for students, and all that they can
read of the course.

    <class folder>/          default /srv/course: root's, mode 0755, rebuilt at every start
      kit/                   the student kit of the checkout's last commit (git HEAD), built
                             and audited by course/student_kit.py: what each student's home
                             receives at first login
      student/               students' Jupyter and nbgrader settings (course/hub/student/)
      deliver_kit.py         copies kit/ into a home, run as the student (course/hub/)
      env-<fingerprint>/     the Python environment everyone's JupyterLab runs: a venv of a
                             Python every user may run, holding the instructor's installed
                             packages (kept while they do not change)

The instructor's checkout is never read by students: the hub starts only when a folder on
the way to it shuts them out (course/hub.py), and everything students need is here.

The environment's packages are the instructor's venv's own files: hard links where a file
is already readable by all and writable by its owner alone, copies (mode 0644/0755)
otherwise. Editable installs (the course's own, pointing into the checkout) are left out;
kit/ takes their place on every student's sys.path, the checkout on the instructor's.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

DEFAULT_CLASS_DIR = Path("/srv/course")
# Bump when the layout of env-* changes: older environments are then rebuilt.
ENV_FORMAT = "1"


class PublishError(RuntimeError):
    """The class install cannot be written; worded for the instructor."""


@dataclass(frozen=True)
class ClassInstall:
    root: Path
    kit: Path
    student_config: Path
    deliver_script: Path
    environment: Path
    commit: str
    uncommitted: tuple[str, ...]


# -- who can reach a path ------------------------------------------------------------------

def _first_folder(path: Path, student_gids: set[int], others: int, group: int) -> Path | None:
    """The first folder from / down to ``path`` granting students none of the permission
    bits given (as others, or through a group a student is in), or None."""
    path = Path(path).resolve()
    for folder in [*reversed(path.parents), path]:
        info = folder.stat()
        if not (info.st_mode & others or info.st_mode & group and info.st_gid in student_gids):
            return folder
    return None


def folder_shutting_out(path: Path, student_gids: set[int]) -> Path | None:
    """The first folder from / down to ``path`` that a student can neither enter nor list
    (no read or search permission for others, nor for a group a student is in), or None."""
    return _first_folder(path, student_gids, stat.S_IROTH | stat.S_IXOTH, stat.S_IRGRP | stat.S_IXGRP)


def folder_barring(path: Path, student_gids: set[int]) -> Path | None:
    """The first folder from / down to ``path`` that a student cannot pass through (no
    search permission for them), or None when they reach ``path``."""
    return _first_folder(path, student_gids, stat.S_IXOTH, stat.S_IXGRP)


def others_can_run(path: Path) -> bool:
    """Can every user run ``path``: every folder above it passable, the file executable?"""
    path = Path(path).resolve()
    return (path.is_file() and bool(path.stat().st_mode & stat.S_IXOTH)
            and folder_barring(path.parent, set()) is None)


# -- the environment -------------------------------------------------------------------------

def base_python() -> Path:
    """The interpreter the class environment is a venv of: the instructor's venv's own base
    Python if every user may run it, else the system's of the same minor version."""
    own = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    if others_can_run(own):
        return own
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system = Path(f"/usr/bin/python{version}")
    if others_can_run(system):
        return system
    raise PublishError(
        f"students cannot run {own} (a folder above it is private) and there is no "
        f"/usr/bin/python{version}: install python{version} from the system's packages, or "
        "create the course venv with a Python every user can run (PYTHON=/usr/bin/python3 make venv)")


def _site_packages() -> list[Path]:
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return sorted(Path(p) for p in paths if os.path.isdir(p))


def fingerprint(base: Path) -> str:
    """Changes when the instructor's installed packages (or the base Python) change."""
    digest = hashlib.sha256(f"{ENV_FORMAT}\n{base}\n{sys.prefix}\n".encode())
    for site in _site_packages():
        for name in sorted(os.listdir(site)):
            if name.endswith(".dist-info"):
                digest.update(name.encode() + b"\n")
    return digest.hexdigest()[:16]


def _editable_entries(site: Path) -> set[str]:
    """Top-level names in ``site`` that belong to editable installs (they point into
    folders, such as the checkout, that students may not read)."""
    left_out = set()
    for info in site.glob("*.dist-info"):
        try:
            editable = json.loads((info / "direct_url.json").read_text())["dir_info"]["editable"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not editable:
            continue
        left_out.add(info.name)
        try:
            rows = list(csv.reader((info / "RECORD").read_text().splitlines()))
        except OSError:
            rows = []
        left_out.update(Path(row[0]).parts[0] for row in rows if row and not row[0].startswith(".."))
    return left_out


def _publish_file(source: Path, target: Path) -> None:
    """A hard link when the file is safe to share as it is, else a copy with modes fixed."""
    info = os.lstat(source)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
        return
    if not stat.S_ISREG(info.st_mode):
        return
    executable = bool(info.st_mode & stat.S_IXUSR)
    shareable = (info.st_mode & stat.S_IROTH and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
                 and (not executable or info.st_mode & stat.S_IXOTH))
    if shareable:
        try:
            os.link(source, target)
            return
        except OSError:
            pass  # another file system: copy
    shutil.copyfile(source, target)
    target.chmod(0o755 if executable else 0o644)


def _publish_tree(source: Path, target: Path, left_out: set[str] = frozenset()) -> int:
    """Mirror ``source`` into ``target`` (folders 0755); returns the number of files."""
    count = 0
    for folder, folders, files in os.walk(source):
        here = Path(folder)
        relative = here.relative_to(source)
        if relative == Path("."):
            folders[:] = [name for name in folders if name not in left_out]
            files = [name for name in files if name not in left_out]
        elif relative.name == "__pycache__" and relative.parent == Path("."):
            files = [name for name in files if not name.startswith("__editable__")]
        destination = target / relative
        destination.mkdir(parents=True, exist_ok=True)
        destination.chmod(0o755)
        for name in folders:
            if (here / name).is_symlink():  # os.walk lists linked folders without entering
                os.symlink(os.readlink(here / name), destination / name)
        for name in files:
            _publish_file(here / name, destination / name)
            count += 1
    return count


def _shebang(python: Path) -> bytes:
    """The first line(s) of a script run by ``python``: a shebang cannot hold a space, so
    then a /bin/sh line hands over to it (the form pip itself writes)."""
    if " " not in str(python):
        return f"#!{python}\n".encode()
    return ("#!/bin/sh\n" + TRAMPOLINE + f' "{python}" "$0" "$@"\n' + "' " + TRAMPOLINE[:3] + "\n").encode()


# pip's header for an interpreter path with spaces: `#!/bin/sh`, then this and the path
TRAMPOLINE = "'" * 3 + "exec'"


def _publish_scripts(source_bin: Path, target_bin: Path, python: Path) -> None:
    """The instructor's console scripts (jupyter, course, ...) run by the class Python
    instead of the instructor's."""
    ours = re.compile(re.escape(str(source_bin)) + r"/python[0-9.]*")
    for entry in sorted(source_bin.iterdir()):
        if entry.name.startswith(("python", "activate", "Activate")) or not entry.is_file():
            continue
        lines = entry.read_bytes().split(b"\n")
        if not lines[0].startswith(b"#!"):
            continue
        trampoline = lines[0] == b"#!/bin/sh" and lines[1:2] and lines[1].startswith(TRAMPOLINE.encode())
        header = lines[:3] if trampoline else lines[:1]
        if not ours.search(b"\n".join(header).decode(errors="replace")):
            continue  # not a script of this Python
        (target_bin / entry.name).write_bytes(_shebang(python) + b"\n".join(lines[len(header):]))
        (target_bin / entry.name).chmod(0o755)


def build_environment(root: Path, kit: Path) -> Path:
    """The class environment under ``root`` (reused while the packages are the same)."""
    base = base_python()
    name = f"env-{fingerprint(base)}"
    environment = root / name
    if (environment / "course-env.json").is_file():
        return environment
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    building = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
    try:
        done = subprocess.run([str(base), "-m", "venv", "--without-pip", str(building)],
                              capture_output=True, text=True, timeout=300)
        if done.returncode != 0:
            raise PublishError(f"`{base} -m venv` failed: {done.stderr.strip()[-500:]}")
        site = building / "lib" / version / "site-packages"
        files = 0
        for source in _site_packages():
            files += _publish_tree(source, site, _editable_entries(source))
        (site / "course-kit.pth").write_text(f"{kit}\n")
        for part in ("share/jupyter", "etc/jupyter"):
            if (Path(sys.prefix) / part).is_dir():
                _publish_tree(Path(sys.prefix) / part, building / part)
        _publish_scripts(Path(sys.prefix) / "bin", building / "bin", environment / "bin" / "python3")
        (building / "course-env.json").write_text(json.dumps(
            {"base": str(base), "packages_from": sys.prefix, "files": files}, indent=1) + "\n")
        for folder, folders, _ in os.walk(building):
            os.chmod(folder, 0o755)
        os.replace(building, environment)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return environment


# -- the whole install -------------------------------------------------------------------------

def _replace(folder: Path, new: Path) -> None:
    old = folder.with_name(f".{folder.name}-old")
    shutil.rmtree(old, ignore_errors=True)
    if folder.exists():
        os.replace(folder, old)
    os.replace(new, folder)
    shutil.rmtree(old, ignore_errors=True)


OUR_ENTRIES = re.compile(r"^(kit|student|deliver_kit\.py|\.?env-.*|\.(kit|student)-(new|old))$")


def _check_class_folder(root: Path) -> None:
    """The class folder is rewritten (modes too) at every start: it must hold nothing else."""
    if root.is_dir():
        others = sorted(name for name in os.listdir(root) if not OUR_ENTRIES.match(name))
        if others:
            raise PublishError(f"--class-dir {root} holds files that are not a class install "
                               f"({', '.join(others[:5])}); give a new or empty folder")


def publish(checkout: Path, root: Path = DEFAULT_CLASS_DIR, environment: Path | None = None) -> ClassInstall:
    """Write the class install of ``checkout``'s HEAD to ``root`` (as root: the hub's).
    ``environment``: keep that one (a running hub's servers use it) instead of building."""
    from course import student_kit

    root = Path(root)
    kit = root / "kit"
    with tempfile.TemporaryDirectory(prefix="course-head-") as exported:
        exported = Path(exported)
        try:
            head = student_kit.export_head(checkout, exported)
        except student_kit.KitError as error:
            raise PublishError(f"the student kit: {error}") from None
        _check_class_folder(root)
        root.mkdir(parents=True, exist_ok=True)
        os.chown(root, 0, 0)
        root.chmod(0o755)
        new_kit = root / ".kit-new"
        shutil.rmtree(new_kit, ignore_errors=True)
        try:
            student_kit.write_kit(new_kit, exported)
        except student_kit.KitError as error:
            raise PublishError(f"the student kit: {error}") from None
        _replace(kit, new_kit)
        new_config = root / ".student-new"
        shutil.rmtree(new_config, ignore_errors=True)
        shutil.copytree(exported / "course" / "hub" / "student", new_config)
        _replace(root / "student", new_config)
        shutil.copyfile(exported / "course" / "hub" / "deliver_kit.py", root / "deliver_kit.py")
    if environment is None:
        environment = build_environment(root, kit)
        for stale in [*root.glob("env-*"), *root.glob(".env-*")]:  # older, or half-built
            if stale != environment:
                shutil.rmtree(stale, ignore_errors=True)
    for folder, folders, files in os.walk(root):  # the kit and settings: readable by all
        if Path(folder) == root:
            folders[:] = [name for name in folders if not name.startswith("env-")]
        os.chmod(folder, 0o755)
        for name in files:
            path = Path(folder, name)
            if not path.is_symlink():
                path.chmod(0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644)
    return ClassInstall(root=root, kit=kit, student_config=root / "student",
                        deliver_script=root / "deliver_kit.py", environment=environment,
                        commit=head.commit, uncommitted=tuple(head.uncommitted))
