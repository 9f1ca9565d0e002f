"""`course collect`: from nbgrader's exchange (nbgrader's own collector) and from LMS downloads.

Each LMS's download is built here with that LMS's own naming, byte for byte as its code
writes it (sources in autograder/lms_names.py), and collected as it is, without renames.
Nothing here grades: a graded submission is the state file `course grade` leaves.
"""
from __future__ import annotations

import json
import os
import shutil
import zipfile
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

import nbformat
import pytest

from attacks import inject
from lms_support import cli_run, mark_graded  # noqa: F401 - cli_run is a fixture

ASSIGNMENT = "03_autograd"
OTHER = "02_devices"
ROSTER = """id,first_name,last_name,email,lms_id
ada,Ada,Lovelace,ada@example.org,123
jo_ann,Jo Ann,Miller,,
jo,Jo,Miller,,
hugo,Hugo,Smith,,
aiden,Aiden,Rodriguez,,640693
bo-7,Bo,Li,,
"""
BERLIN = ZoneInfo("Europe/Berlin")


def _release(assignment: str, marker: str = "") -> bytes:
    """The student release as handed in; `marker` makes versions differ."""
    notebook = json.loads((inject.REPO / "assignments" / assignment / f"{assignment}.ipynb").read_text())
    notebook["cells"][0]["source"] = "".join(notebook["cells"][0]["source"]) + marker
    return json.dumps(notebook).encode()


@pytest.fixture()
def course_root(tmp_path):
    root = tmp_path / "course"
    for assignment in (ASSIGNMENT, OTHER):
        for step in ("solutions", "assignments"):
            shutil.copytree(inject.REPO / step / assignment, root / step / assignment)
    (root / "course").mkdir(parents=True)
    shutil.copy(inject.REPO / "course" / "nbgrader_config.py", root / "course" / "nbgrader_config.py")
    return root


@pytest.fixture()
def roster(course_root):
    (course_root / "var").mkdir(exist_ok=True)
    (course_root / "var" / "roster.csv").write_text(ROSTER)
    return course_root


def _collect(root, download, **options):
    from autograder.collect import collect_files
    from coursebase.model import Course
    return collect_files(Course.load(root), ASSIGNMENT, download, **options)


def _zip(path, entries: dict[str, bytes | str]):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def _submitted(root, student):
    return root / "var" / "submitted" / student / ASSIGNMENT


def _stamp(root, student):
    from nbgrader.utils import parse_utc
    path = _submitted(root, student) / "timestamp.txt"
    return parse_utc(path.read_text()).replace(tzinfo=timezone.utc) if path.exists() else None


# -- each LMS's own download, collected as it is --------------------------------------------

LMS_DOWNLOADS = {
    # canvas-lms ContentZipper: <sortable name>[_LATE]_<user id>_<attachment id>_<file>
    "canvas": ({"lovelaceada_LATE_123_9001_03_autograd.ipynb": "a",
                "millerjoann_55_9002_03_autograd-1.ipynb": "j",
                "smithhugo_77_9003_autograd_final.ipynb": "h"},
               {"ada": None, "jo_ann": None, "hugo": None}),
    # Moodle, "Download submissions in folders" (3.1+; older versions end the folder with "_")
    "moodle folders": ({"Ada Lovelace_301_assignsubmission_file/03_autograd.ipynb": "a",
                        "Ada Lovelace_301_assignsubmission_file/data/points.csv": "1,2\n",
                        "Hugo Smith_777_assignsubmission_file_/03_autograd.ipynb": "h",
                        "Hugo Smith_777_assignsubmission_onlinetext_/onlinetext.html": "<p>hi</p>"},
                       {"ada": None, "hugo": None}),
    "moodle flat": ({"Ada Lovelace_301_assignsubmission_file_03_autograd.ipynb": "a",
                     "Jo Ann Miller_302_assignsubmission_file_03_autograd.ipynb": "j"},
                    {"ada": None, "jo_ann": None}),
    # Blackboard Learn "Assignment File Download": <assignment>_<username>_attempt_<time>_<file>
    "blackboard": ({"Autograd_ada_attempt_2026-11-20-23-58-01_03_autograd.ipynb": "a",
                    "Autograd_ada_attempt_2026-11-20-23-58-01.txt": "Name: Ada Lovelace (ada)\n",
                    "Autograd_bo-7_attempt_2026-11-21-09-05-00_03_autograd.ipynb": "b",
                    "Autograd_jo_ann_attempt_2026-11-19-08-00-00_03_autograd.ipynb": "j"},
                   {"ada": datetime(2026, 11, 20, 23, 58, 1, tzinfo=BERLIN),
                    "bo-7": datetime(2026, 11, 21, 9, 5, tzinfo=BERLIN),
                    "jo_ann": datetime(2026, 11, 19, 8, 0, tzinfo=BERLIN)}),
    # Brightspace: "<submission id>-<user id> - <First Last> - <Mon D, YYYY HMM AM> - <file>"
    "brightspace flat": ({"39786-640693 - Aiden Rodriguez - Nov 20, 2026 1158 PM - 03_autograd.ipynb": "x",
                          "39790-123 - Ada Lovelace - Nov 20, 2026 122 PM - 03_autograd.ipynb": "a",
                          "index.html": "<html>index</html>"},
                         {"aiden": datetime(2026, 11, 20, 23, 58, tzinfo=BERLIN),
                          "ada": datetime(2026, 11, 20, 13, 22, tzinfo=BERLIN)}),
    "brightspace folders": ({"Autograd/39786-640693 - Aiden Rodriguez - Nov 20, 2026 1158 PM/03_autograd.ipynb": "x",
                             "Autograd/index.html": "<html>index</html>"},
                            {"aiden": datetime(2026, 11, 20, 23, 58, tzinfo=BERLIN)}),
}


@pytest.mark.parametrize("lms", sorted(LMS_DOWNLOADS))
def test_each_lms_download_is_collected_as_downloaded(roster, tmp_path, lms):
    files, expected = LMS_DOWNLOADS[lms]
    download = _zip(tmp_path / f"{lms}.zip", {name: (_release(ASSIGNMENT, marker) if name.endswith(".ipynb")
                                                     else marker) for name, marker in files.items()})
    report = _collect(roster, download, lms_timezone=BERLIN)
    assert sorted(report.placed) == sorted(expected), report.text()
    for student, submitted_at in expected.items():
        assert (_submitted(roster, student) / f"{ASSIGNMENT}.ipynb").read_bytes() == _release(
            ASSIGNMENT, next(m for n, m in files.items() if n.endswith(".ipynb") and _owner(n, student)))
        # The LMS's own time where its names carry one; Canvas and Moodle zips hold the download time
        assert _stamp(roster, student) == submitted_at, student
    assert report.not_placed == [] and report.status == 0, report.text()
    if lms == "moodle folders":  # files beside the notebook go with it; other plugins' text is not graded
        assert (_submitted(roster, "ada") / "data" / "points.csv").read_text() == "1,2\n"
        ignored = {r.file: r.note for r in report.rows if r.outcome == "ignored"}
        assert "Moodle's onlinetext submission" in ignored["Hugo Smith_777_assignsubmission_onlinetext_/onlinetext.html"]
    if lms == "canvas":
        from autograder.collect import load_records
        from coursebase.model import Course
        assert load_records(Course.load(roster), ASSIGNMENT)["ada"]["late"] is True
        assert "marked LATE by Canvas" in report.text()


def _owner(name: str, student: str) -> bool:
    hints = {"ada": ("lovelace", "ada"), "jo_ann": ("joann", "Jo Ann", "jo_ann"), "hugo": ("hugo", "Hugo"),
             "aiden": ("Aiden",), "bo-7": ("bo-7",)}
    return any(hint.lower() in name.lower() for hint in hints[student])


def test_a_plain_folder_per_student_needs_no_roster(course_root, tmp_path, cli_run):
    download = tmp_path / "download"
    (download / "carl").mkdir(parents=True)
    (download / "carl" / f"{ASSIGNMENT}.ipynb").write_bytes(_release(ASSIGNMENT))
    (download / "carl" / "helper.py").write_text("X = 1\n")
    (download / f"dana_551_{ASSIGNMENT}.ipynb").write_bytes(_release(ASSIGNMENT))
    (download / "grades_template.xlsx").write_text("not a notebook")
    result = cli_run(course_root, "collect", ASSIGNMENT, "--from", str(download))
    assert result.returncode == 1, result.stdout + result.stderr
    assert sorted(p.name for p in (course_root / "var" / "submitted").iterdir()) == ["carl"]
    assert (_submitted(course_root, "carl") / "helper.py").read_text() == "X = 1\n"
    # Without a roster a flat name cannot say where the id ends (ids may contain "_").
    assert "run `course roster import roster.csv --gradebook-only`" in result.stdout
    assert "grades_template.xlsx" in result.stdout and "not a notebook" in result.stdout
    assert "collected 1 submission(s); 2 file(s) NOT PLACED" in result.stdout


# -- never misfiled ------------------------------------------------------------------------

def test_other_assignment_unknown_and_ambiguous_are_refused_never_placed(roster, tmp_path):
    _submitted(roster, "ada").mkdir(parents=True)
    graded = _release(ASSIGNMENT, "ada's graded one")
    (_submitted(roster, "ada") / f"{ASSIGNMENT}.ipynb").write_bytes(graded)
    mark_graded(roster, "ada")
    download = _zip(tmp_path / "canvas.zip", {
        "ada_9_9_02_devices.ipynb": _release(OTHER),             # another assignment's notebook
        "jo_ann_1_2_03_autograd.ipynb": _release(ASSIGNMENT),    # jo or jo_ann? both on the roster
        "zed_4_5_03_autograd.ipynb": _release(ASSIGNMENT),       # nobody on the roster
        "millerjo_8_9_03_autograd.ipynb": _release(ASSIGNMENT),  # Canvas name of Jo Miller: one student
    })
    report = _collect(roster, download)
    refused = {row.file: row.note for row in report.not_placed}
    assert "a notebook of 02_devices" in refused["ada_9_9_02_devices.ipynb"]
    assert refused["jo_ann_1_2_03_autograd.ipynb"] == "ambiguous: could be jo, jo_ann on the roster"
    assert "nobody on the roster" in refused["zed_4_5_03_autograd.ipynb"]
    assert report.placed == {"jo": "millerjo_8_9_03_autograd.ipynb"}
    assert report.status == 1
    assert (_submitted(roster, "ada") / f"{ASSIGNMENT}.ipynb").read_bytes() == graded
    assert not _submitted(roster, "jo_ann").exists() and not _submitted(roster, "zed").exists()
    kept = report.kept_at / "ada_9_9_02_devices.ipynb"
    assert kept.read_bytes() == _release(OTHER), "a refused file must be kept for review"


def test_latest_by_lms_time_is_placed_and_graded_work_is_never_replaced_silently(roster, tmp_path):
    first = _zip(tmp_path / "first.zip", {
        "Autograd_ada_attempt_2026-11-20-10-00-00_03_autograd.ipynb": _release(ASSIGNMENT, "v1"),
        "Autograd_ada_attempt_2026-11-20-23-00-00_03_autograd.ipynb": _release(ASSIGNMENT, "v2"),
    })
    report = _collect(roster, first, lms_timezone=ZoneInfo("UTC"))
    assert report.placed == {"ada": "Autograd_ada_attempt_2026-11-20-23-00-00_03_autograd.ipynb"}
    assert [r.outcome for r in report.rows if r.student == "ada"].count("older version") == 1
    assert (_submitted(roster, "ada") / f"{ASSIGNMENT}.ipynb").read_bytes() == _release(ASSIGNMENT, "v2")
    mark_graded(roster, "ada")

    later = _zip(tmp_path / "later.zip", {
        "Autograd_ada_attempt_2026-11-22-08-00-00_03_autograd.ipynb": _release(ASSIGNMENT, "v3")})
    held = _collect(roster, later, lms_timezone=ZoneInfo("UTC"))
    assert held.status == 1 and held.placed == {}
    # which is graded (and no score: the gradebook's alone, never quoted from the state file)
    assert "in place, which is graded: kept that one; `--replace-graded` places this one" in held.not_placed[0].note
    assert (_submitted(roster, "ada") / f"{ASSIGNMENT}.ipynb").read_bytes() == _release(ASSIGNMENT, "v2")

    replaced = _collect(roster, later, lms_timezone=ZoneInfo("UTC"), replace_graded=True)
    assert replaced.status == 0 and replaced.placed == {"ada": held.not_placed[0].file}
    assert (_submitted(roster, "ada") / f"{ASSIGNMENT}.ipynb").read_bytes() == _release(ASSIGNMENT, "v3")
    previous = replaced.kept_at / "replaced" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert previous.read_bytes() == _release(ASSIGNMENT, "v2"), "the graded version was lost"

    # An older download never replaces a newer submission, even when asked to replace graded work.
    again = _collect(roster, first, lms_timezone=ZoneInfo("UTC"), replace_graded=True)
    assert again.status == 1 and "older than the submission in place" in again.not_placed[0].note
    assert (_submitted(roster, "ada") / f"{ASSIGNMENT}.ipynb").read_bytes() == _release(ASSIGNMENT, "v3")
    # The same download twice: nothing changes, nothing is refused.
    assert _collect(roster, later, lms_timezone=ZoneInfo("UTC")).rows[0].outcome == "unchanged"


def test_a_damaged_zip_entry_is_listed_and_the_rest_placed(roster, tmp_path, cli_run):
    download = _zip(tmp_path / "moodle.zip", {
        "Ada Lovelace_301_assignsubmission_file/03_autograd.ipynb": _release(ASSIGNMENT, "ada"),
        "Hugo Smith_302_assignsubmission_file/03_autograd.ipynb": _release(ASSIGNMENT, "hugo"),
        "Jo Miller_303_assignsubmission_file/03_autograd.ipynb": _release(ASSIGNMENT, "jo"),
    })
    with zipfile.ZipFile(download) as archive:
        info = archive.getinfo("Hugo Smith_302_assignsubmission_file/03_autograd.ipynb")
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data = bytearray(download.read_bytes())
    data[start + 40: start + 48] = b"\xff" * 8  # a transfer error inside hugo's notebook
    download.write_bytes(bytes(data))
    result = cli_run(roster, "collect", ASSIGNMENT, "--from", str(download))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in (roster / "var" / "submitted").iterdir()) == ["ada", "jo"]
    line = next(line for line in result.stdout.splitlines() if "Hugo Smith_302" in line)
    assert "NOT PLACED" in line and "damaged in the archive" in line


def test_links_in_an_lms_folder_are_listed_not_followed(roster, tmp_path):
    download = tmp_path / "download"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / f"{ASSIGNMENT}.ipynb").write_bytes(_release(ASSIGNMENT))
    (download / "ada").mkdir(parents=True)
    (download / "ada" / f"{ASSIGNMENT}.ipynb").symlink_to(outside / f"{ASSIGNMENT}.ipynb")
    (download / f"hugo_{ASSIGNMENT}.ipynb").symlink_to(outside / f"{ASSIGNMENT}.ipynb")
    (download / "jo").symlink_to(outside)
    report = _collect(roster, download)
    unplaced = {row.file: row.note for row in report.not_placed}
    assert set(unplaced) == {f"ada/{ASSIGNMENT}.ipynb", f"hugo_{ASSIGNMENT}.ipynb", "jo"}, report.text()
    assert all(note.startswith("symbolic link (to ") and note.endswith("not followed") for note in unplaced.values())
    assert report.placed == {}


def test_a_plain_folders_time_is_the_collection_not_a_file_or_timestamp_txt(course_root, tmp_path):
    """A plain folder per student has no LMS record: its files' times are whatever the tool
    that wrote them kept (the student's own machine's, through a zip), so the time recorded
    is the time of the collect (docs/instructors.md says so)."""
    from nbgrader.utils import parse_utc

    download = tmp_path / "download"
    (download / "carl").mkdir(parents=True)
    notebook = download / "carl" / f"{ASSIGNMENT}.ipynb"
    notebook.write_text(nbformat.writes(nbformat.v4.new_notebook()))
    (download / "carl" / "timestamp.txt").write_text("2000-01-01 00:00:00.000000 UTC")
    (download / "carl" / "submission_secret.txt").write_text("someone else's")
    os.utime(notebook, (1_790_000_000, 1_790_000_000))   # a file time dated before the due date
    before = datetime.now(timezone.utc)
    report = _collect(course_root, download)
    assert report.placed == {"carl": f"carl/{ASSIGNMENT}.ipynb"}
    unplaced = {row.file: row.note for row in report.not_placed}
    assert unplaced["carl/timestamp.txt"].startswith("reserved name: the submission time comes from the LMS")
    assert "carl/submission_secret.txt" in unplaced
    folder = _submitted(course_root, "carl")
    recorded = parse_utc(folder.joinpath("timestamp.txt").read_text()).replace(tzinfo=timezone.utc)
    assert before <= recorded <= datetime.now(timezone.utc)
    assert "(collected)" in next(r.when for r in report.rows if r.student == "carl" and r.outcome == "placed")
    assert not folder.joinpath("submission_secret.txt").exists()


def test_two_notebooks_of_one_student_by_lms_time_the_later_wins_and_without_one_neither(roster, tmp_path):
    def download(path_name, late_time, first, late):
        path = tmp_path / path_name
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(zipfile.ZipInfo(first, (2026, 11, 20, 10, 0, 0)), _release(ASSIGNMENT, "first"))
            archive.writestr(zipfile.ZipInfo(late, late_time), _release(ASSIGNMENT, "late"))
        return path

    # Canvas's own zip times order the files of one Canvas user; equal times place neither.
    first, late = "smithhugo_77_9001_03_autograd.ipynb", "smithhugo_77_9002_03_autograd.ipynb"
    tie = _collect(roster, download("tie.zip", (2026, 11, 20, 10, 0, 0), first, late))
    assert tie.placed == {} and len(tie.not_placed) == 2
    assert all("2 different notebooks of hugo with the same time; none placed" in r.note for r in tie.not_placed)
    later = _collect(roster, download("later.zip", (2026, 11, 20, 18, 30, 0), first, late))
    assert later.placed == {"hugo": late}
    assert [r.file for r in later.rows if r.outcome == "older version"] == [first]
    assert (_submitted(roster, "hugo") / f"{ASSIGNMENT}.ipynb").read_bytes() == _release(ASSIGNMENT, "late")
    # A plain zip's entry times are not an LMS's record: two notebooks of one student place neither.
    plain = _collect(roster, download("plain.zip", (2026, 11, 20, 18, 30, 0),
                                      f"hugo_{ASSIGNMENT}.ipynb", f"hugo_{ASSIGNMENT}_late.ipynb"))
    assert {r.file for r in plain.not_placed} == {f"hugo_{ASSIGNMENT}.ipynb", f"hugo_{ASSIGNMENT}_late.ipynb"}, \
        plain.text()
