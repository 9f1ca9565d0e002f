"""Grades into a real PostgreSQL server started for this test on loopback, with parallel workers.

The server runs as ``nobody`` (PostgreSQL refuses to run as root) from a temporary data
directory, listening on 127.0.0.1 only; the course's gradebook URL points at it.
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from attacks import inject

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.xdist_group("postgres")]

ASSIGNMENT = "02_devices"


def _postgres_bin() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not found:
        pytest.fail("PostgreSQL is not installed (run .ci/sysdeps)")
    return Path(found[-1]).parent


def _as_server_user(command: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return ["runuser", "-u", "nobody", "--", *command]
    return command


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_url():
    binaries = _postgres_bin()
    home = Path(tempfile.mkdtemp(prefix="course-pg-"))
    home.chmod(0o755)
    data = home / "data"
    if os.geteuid() == 0:
        shutil.chown(home, "nobody", "nogroup")
    port = _free_port()
    subprocess.run(_as_server_user([str(binaries / "initdb"), "-D", str(data), "-U", "grader",
                                    "--auth=trust", "-E", "UTF8"]), check=True, capture_output=True)
    subprocess.run(_as_server_user([
        str(binaries / "pg_ctl"), "-D", str(data), "-l", str(home / "log"), "-w", "start",
        "-o", f"-p {port} -c listen_addresses=127.0.0.1 -k {home}"]), check=True, capture_output=True)
    try:
        import psycopg
        with psycopg.connect(f"host=127.0.0.1 port={port} user=grader dbname=postgres", autocommit=True) as connection:
            connection.execute("CREATE DATABASE gradebook")
        yield f"postgresql+psycopg://grader@127.0.0.1:{port}/gradebook"
    finally:
        subprocess.run(_as_server_user([str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_grades_land_in_postgres_with_parallel_workers(tmp_path, postgres_url):
    import psycopg
    from nbgrader.api import Gradebook

    root = tmp_path / "course"
    for step in ("solutions", "assignments"):
        shutil.copytree(inject.REPO / step / ASSIGNMENT, root / step / ASSIGNMENT)
    (root / "course").mkdir(parents=True)
    config = (inject.REPO / "course" / "nbgrader_config.py").read_text()
    (root / "course" / "nbgrader_config.py").write_text(config + f"\nc.CourseDirectory.db_url = {postgres_url!r}\n")
    from course.nbgrader_course import generate_release
    generate_release([ASSIGNMENT], root)

    honest, partial = inject.honest(root, ASSIGNMENT), inject.honest(root, ASSIGNMENT, keep=0.5)
    students = [f"pg{n}" for n in range(6)]
    for number, student in enumerate(students):
        inject.submit(root, ASSIGNMENT, student, honest if number % 2 == 0 else partial)

    command = [sys.executable, "-m", "course.cli", "grade", ASSIGNMENT, "--root", str(root), "--workers", "2"]
    for attempt in range(2):  # the second, forced run must update rows, not add them
        result = subprocess.run(command + (["--force"] if attempt else []), cwd=inject.REPO,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr

    maximum = sum(points for _, points in inject.test_points(root, ASSIGNMENT))
    with Gradebook(postgres_url, "reftorch-course") as gradebook:
        for number, student in enumerate(students):
            score = gradebook.find_submission(ASSIGNMENT, student).score
            assert (score == maximum) if number % 2 == 0 else (0 < score < maximum), (student, score)
    plain_url = postgres_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain_url) as connection:
        rows = connection.execute("SELECT student_id, count(*) FROM submitted_assignment GROUP BY student_id").fetchall()
    assert sorted(rows) == [(student, 1) for student in students]
    assert not (root / "var" / "gradebook.db").exists(), "graded into SQLite instead of PostgreSQL"
