"""Grading on a Dask cluster (2 worker processes on loopback) into a real PostgreSQL gradebook
gives every submission the grade that one machine gives it.

One course (gradebook in PostgreSQL) holds four submissions: full marks, half the answers,
wrong values, and a file that is not a notebook. `grade_on_dask` grades them on two
worker processes; then `Grader` grades them again on this machine (forced). Scores,
statuses and every test cell's points must agree, and the gradebook must hold the Dask
run's scores, one submission per student.
"""
from __future__ import annotations

import resource
import shutil
import socket
import subprocess

import pytest

from attacks import inject
from test_grading_postgres import postgres_url  # noqa: F401 - the real server, as a fixture

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.xdist_group("postgres")]

ASSIGNMENT = "02_devices"


def _course(root, db_url=None):
    for step in ("solutions", "assignments"):
        shutil.copytree(inject.REPO / step / ASSIGNMENT, root / step / ASSIGNMENT)
    (root / "course").mkdir(parents=True)
    config = (inject.REPO / "course" / "nbgrader_config.py").read_text()
    if db_url:
        config += f"\nc.CourseDirectory.db_url = {db_url!r}\n"
    (root / "course" / "nbgrader_config.py").write_text(config)
    from course.nbgrader_course import generate_release
    generate_release([ASSIGNMENT], root)
    notebooks = {
        "full": inject.honest(root, ASSIGNMENT),
        "half": inject.honest(root, ASSIGNMENT, keep=0.5),
        "wrong": inject.wrong(root, ASSIGNMENT),
    }
    for student, notebook in notebooks.items():
        inject.submit(root, ASSIGNMENT, student, notebook)
    inject.submit(root, ASSIGNMENT, "garbage", raw=b"{ this is not a notebook")
    return root


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def course_root(tmp_path_factory, postgres_url):  # noqa: F811
    return _course(tmp_path_factory.mktemp("dask") / "course", postgres_url)


def _state(root):
    """Every file the grading writes, with its bytes: what a failed start must not change."""
    folders = [root / "var" / "autograded", root / "var" / "submitted"]
    return {p: p.read_bytes() for folder in folders if folder.is_dir() for p in folder.rglob("*") if p.is_file()}


def test_an_unreachable_scheduler_is_a_clear_error_and_changes_nothing(course_root):
    from coursebase.model import Course
    from autograder.distributed import ClusterError, grade_on_dask

    before = _state(course_root)
    address = f"tcp://127.0.0.1:{_free_port()}"
    with pytest.raises(ClusterError, match=f"cannot reach the Dask scheduler at {address}"):
        grade_on_dask(Course.load(course_root), ASSIGNMENT, address=address, connect_timeout=2)
    assert _state(course_root) == before  # no file added or changed (there is no seed file any more)


def test_a_worker_that_sees_other_solutions_refuses(course_root):
    from coursebase.model import Course
    from autograder.distributed import WorkerJob, grade_on_worker
    from autograder.grade import Grader, GradingError
    from autograder.sandbox import Limits

    digest = Grader(Course.load(course_root), ASSIGNMENT, workers=1).spec_digest
    job = WorkerJob(str(course_root), ASSIGNMENT, Limits(), "0" * len(digest))
    limit_before = resource.getrlimit(resource.RLIMIT_AS)
    with pytest.raises(GradingError, match="different solutions/02_devices than the client"):
        grade_on_worker(job, "full")
    # a refusing worker changes nothing of its process (a lowered address-space limit here
    # made a later Chromium in the same pytest worker crash at launch)
    assert resource.getrlimit(resource.RLIMIT_AS) == limit_before


def test_dask_grades_equal_one_machine_grades(course_root, postgres_url):  # noqa: F811
    """Dask first, into an empty PostgreSQL gradebook; then one machine, forced, on the same
    course: every row must agree, and the gradebook must hold the Dask run's."""
    from nbgrader.api import Gradebook

    from coursebase.model import Course
    from autograder.distributed import grade_on_dask
    from autograder.grade import Grader

    course = Course.load(course_root)
    assert course.db_url == postgres_url
    rows = {row.student: row for row in grade_on_dask(course, ASSIGNMENT, local_workers=2)}
    with Gradebook(postgres_url, course.course_id) as gradebook:
        stored = {s.student_id: s.score for s in gradebook.find_assignment(ASSIGNMENT).submissions}
    assert stored == {student: row.score for student, row in rows.items()}
    assert not (course_root / "var" / "gradebook.db").exists(), "graded into SQLite, not PostgreSQL"

    expected = {row.student: row for row in Grader(course, ASSIGNMENT, workers=1, force=True).run()}
    assert sorted(rows) == sorted(expected) == ["full", "garbage", "half", "wrong"]
    maximum = expected["full"].max_score
    assert expected["full"].score == maximum and 0 < expected["half"].score < maximum
    assert expected["garbage"].score == 0 and "notebook" in expected["garbage"].status
    for student, want in expected.items():
        got = rows[student]
        assert (got.score, got.status) == (want.score, want.status), student
        assert [(t.grade_id, t.points) for t in got.tests] == \
               [(t.grade_id, t.points) for t in want.tests], student


def test_the_deploy_samples_parse_and_name_this_course():
    """course/deploy/ is documentation a reader copies: each file must at least load, and
    name the course id and exchange that the course itself uses."""
    import yaml
    from traitlets.config import PyFileConfigLoader

    deploy = inject.REPO / "course" / "deploy"
    for path in sorted(deploy.rglob("*.yaml")):
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
        assert documents, path
    values = yaml.safe_load((deploy / "z2jh" / "values.yaml").read_text())
    assert 'course_id = "reftorch-course"' in values["singleuser"]["extraFiles"]["nbgrader-config"]["stringData"]
    for name in ("nbgrader_config.py", "instructor_nbgrader_config.py"):
        config = PyFileConfigLoader(name, path=str(deploy / "tljh")).load_config()
        assert config.CourseDirectory.course_id == "reftorch-course", name
        assert config.Exchange.root == "/srv/nbgrader/exchange", name
    check = subprocess.run(["bash", "-n", str(deploy / "tljh" / "setup_nbgrader.sh")], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
