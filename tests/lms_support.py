"""A throw-away course and LMS downloads for the collect, roster and export tests."""
from __future__ import annotations

import json
import shutil
import zipfile
from datetime import timezone
from pathlib import Path

import pytest

from attacks import inject

ASSIGNMENT = "03_autograd"
OTHER = "02_devices"
ROSTER = """id,first_name,last_name,email,lms_id
ada,Ada,Lovelace,ada@example.org,123
jo_ann,Jo Ann,Miller,,
jo,Jo,Miller,,
hugo,Hugo,Smith,,
aiden,Aiden,Rodriguez,,640693
bo-7,Bo,Li,,
eve,Eve,Adams,eve@example.org,777
"""


def make_course(root: Path, roster: str | None = ROSTER) -> Path:
    for assignment in (ASSIGNMENT, OTHER):
        for step in ("solutions", "assignments"):
            shutil.copytree(inject.REPO / step / assignment, root / step / assignment)
    (root / "course").mkdir(parents=True)
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    if roster is not None:
        (root / "var").mkdir(exist_ok=True)
        (root / "var" / "roster.csv").write_text(roster)
    return root


def add_config(root: Path, text: str) -> None:
    config = root / "course" / "nbgrader_config.py"
    config.write_text(config.read_text() + "\n" + text + "\n")


def release(assignment: str = ASSIGNMENT, marker: str = "") -> bytes:
    """The student release as handed in; `marker` makes versions differ."""
    notebook = json.loads((inject.REPO / "assignments" / assignment / f"{assignment}.ipynb").read_text())
    notebook["cells"][0]["source"] = "".join(notebook["cells"][0]["source"]) + marker
    return json.dumps(notebook).encode()


def make_zip(path: Path, entries: dict) -> Path:
    """``entries``: name -> bytes/str, or name -> (bytes/str, zip date tuple)."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            if isinstance(data, tuple):
                archive.writestr(zipfile.ZipInfo(name, data[1]), data[0])
            else:
                archive.writestr(name, data)
    return path


def collect(root: Path, download: Path, **options):
    from autograder.collect import collect_files
    from coursebase.model import Course
    return collect_files(Course.load(root), ASSIGNMENT, download, **options)


def submitted(root: Path, student: str) -> Path:
    return root / "var" / "submitted" / student / ASSIGNMENT


def stamp(root: Path, student: str):
    from nbgrader.utils import parse_utc
    path = submitted(root, student) / "timestamp.txt"
    return parse_utc(path.read_text()).replace(tzinfo=timezone.utc) if path.exists() else None


def mark_graded(root: Path, student: str) -> None:
    """The state file `course grade` leaves after grading a submission (written by its own code)."""
    from autograder.results import SubmissionRow, save_state
    from coursebase.model import Course

    save_state(Course.load(root), ASSIGNMENT, SubmissionRow(student, 0.0, 17.0, "ok", "ok", [], digest="x"))


def raw_entry(archive: zipfile.ZipFile, name: str, deflated: bytes, declared: int, crc: int) -> None:
    """A deflated entry whose header says ``declared`` bytes and ``crc`` (a lie when they differ
    from the stream): what a hostile archive tool writes."""
    info = zipfile.ZipInfo(name, (2026, 11, 20, 12, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.file_size, info.compress_size, info.CRC = declared, len(deflated), crc
    info.header_offset = archive.fp.tell()
    archive.fp.write(info.FileHeader(zip64=False))
    archive.fp.write(deflated)
    archive.start_dir = archive.fp.tell()
    archive.filelist.append(info)
    archive.NameToInfo[name] = info
    archive._didModify = True  # noqa: SLF001 - write the central directory on close


def deflated_zeros(size: int) -> tuple[bytes, int]:
    """``size`` zero bytes as a raw deflate stream, and their CRC-32."""
    import zlib
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    chunk, parts, crc = bytes(1 << 20), [], 0
    for _ in range(size >> 20):
        parts.append(packer.compress(chunk))
        crc = zlib.crc32(chunk, crc)
    return b"".join(parts) + packer.flush(), crc


@pytest.fixture()
def cli_run(capfd):
    """`course ... --root ROOT` in this process; returns (exit status, stdout, stderr)."""
    from types import SimpleNamespace

    from course.cli import main

    def run(root, *args):
        capfd.readouterr()
        code = main([*args, "--root", str(root)])
        out, err = capfd.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    return run
