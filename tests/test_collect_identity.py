"""Whose work and when, from the host's own evidence (issue 31): the red team's collect attacks.

- nbgrader's exchange: the inbound folder is mode 2733, so any student can drop a folder
  named for a classmate (``ada+03_autograd+<time>+<random>``), and the folder's name and the
  ``timestamp.txt`` in it are written by the student's process. Identity comes from the Unix
  owner of the folder and of every file in it; the time from the kernel's change times.
  Real Unix accounts (``hosttest-*``, removed afterwards) write the exchange, with setpriv.
- LMS downloads: a name is matched once per upload against the roster, without folding
  look-alike characters; a folder inside a student's folder names nobody; Blackboard's own
  ``_attempt_<time>`` is the first one in the name, not one the student typed.
"""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from lms_support import ASSIGNMENT, add_config, collect, make_course, make_zip, release, stamp, submitted

UTC = ZoneInfo("UTC")


@pytest.fixture()
def course_root(tmp_path):
    return make_course(tmp_path / "course")


# -- LMS names ------------------------------------------------------------------------------

def test_blackboard_name_typed_by_the_student_names_nobody_else_and_no_earlier_time(course_root, tmp_path):
    download = make_zip(tmp_path / "blackboard.zip", {
        "Autograd_ada_attempt_2026-11-20-10-00-00_03_autograd.ipynb": release(marker="ada's own"),
        # Eve's upload, named by Eve to read as Ada's: Blackboard puts its own prefix first.
        "Autograd_eve_attempt_2026-11-21-10-00-00_x_ada_attempt_2026-11-21-09-00-00_03_autograd.ipynb":
            release(marker="eve's blank"),
        # Eve's late upload, named to carry an on-time attempt time of her own.
        "Autograd_eve_attempt_2026-11-25-10-00-00_x_eve_attempt_2026-11-19-10-00-00_03_autograd.ipynb":
            release(marker="eve's late"),
    })
    report = collect(course_root, download, lms_timezone=UTC)
    assert (submitted(course_root, "ada") / f"{ASSIGNMENT}.ipynb").read_bytes() == release(marker="ada's own")
    assert stamp(course_root, "ada") == datetime(2026, 11, 20, 10, tzinfo=timezone.utc)
    assert report.placed["eve"].startswith("Autograd_eve_attempt_2026-11-25"), report.text()
    assert stamp(course_root, "eve") == datetime(2026, 11, 25, 10, tzinfo=timezone.utc), \
        "the time is Blackboard's attempt time, not one the student typed into the file name"


def test_full_width_look_alike_of_a_classmates_name_is_not_them(course_root, tmp_path):
    download = make_zip(tmp_path / "moodle.zip", {
        "Ａｄａ Ｌｏｖｅｌａｃｅ_302_assignsubmission_file/03_autograd.ipynb": release(marker="eve's blank"),
        "Hugo Smith_303_assignsubmission_file/03_autograd.ipynb": release(marker="hugo"),
    })
    report = collect(course_root, download)
    assert not submitted(course_root, "ada").exists(), report.text()
    assert report.placed == {"hugo": "Hugo Smith_303_assignsubmission_file/03_autograd.ipynb"}
    refused = {row.file: row.note for row in report.not_placed}
    assert "nobody on the roster" in refused["Ａｄａ Ｌｏｖｅｌａｃｅ_302_assignsubmission_file/03_autograd.ipynb"]
    assert report.status == 1


def test_a_folder_inside_a_students_folder_names_nobody(course_root, tmp_path):
    download = make_zip(tmp_path / "moodle.zip", {
        "Eve Adams_303_assignsubmission_file/Ada Lovelace_301_assignsubmission_file/03_autograd.ipynb":
            release(marker="eve's blank"),
        "Hugo Smith_304_assignsubmission_file/ada/03_autograd.ipynb": release(marker="hugo's"),
    })
    report = collect(course_root, download)
    assert not submitted(course_root, "ada").exists(), report.text()
    assert sorted(report.placed) == ["eve", "hugo"], report.text()
    assert (submitted(course_root, "eve") / f"{ASSIGNMENT}.ipynb").read_bytes() == release(marker="eve's blank")


def test_two_lms_identities_for_one_student_place_neither(course_root, tmp_path):
    # Eve renamed herself "Ada Lovelace" in Moodle: two participants, one name.
    download = make_zip(tmp_path / "moodle.zip", {
        "Ada Lovelace_301_assignsubmission_file/03_autograd.ipynb": (release(marker="ada"), (2026, 11, 20, 10, 0, 0)),
        "Ada Lovelace_302_assignsubmission_file/03_autograd.ipynb": (release(marker="eve"), (2026, 11, 20, 11, 0, 0)),
    })
    report = collect(course_root, download)
    assert report.placed == {} and not submitted(course_root, "ada").exists(), report.text()
    assert all("participant 301" in row.note and "participant 302" in row.note for row in report.not_placed)
    assert report.status == 1


def test_a_canvas_id_that_is_not_the_named_students_is_refused(course_root, tmp_path):
    download = make_zip(tmp_path / "canvas.zip", {
        # Canvas user 555 is on no roster line; the name is Ada's, whose Canvas id is 123.
        "lovelaceada_555_9001_03_autograd.ipynb": release(marker="someone"),
        "adamseve_777_9002_03_autograd.ipynb": release(marker="eve"),
    })
    report = collect(course_root, download)
    assert report.placed == {"eve": "adamseve_777_9002_03_autograd.ipynb"}, report.text()
    refused = {row.file: row.note for row in report.not_placed}
    assert "Canvas user 555 is not ada's (the roster's lms_id is 123)" in refused["lovelaceada_555_9001_03_autograd.ipynb"]


def test_honest_names_with_accents_and_both_name_orders_still_match(tmp_path):
    root = make_course(tmp_path / "course", "id,first_name,last_name,email,lms_id\njose,José,García,,\nzoe,Zoë,Ng,,\n")
    download = make_zip(tmp_path / "moodle.zip", {
        "José García_401_assignsubmission_file/03_autograd.ipynb": release(marker="jose"),
        # the same letters, decomposed (macOS's unzip writes names this way)
        "Ng Zoe\u0308_402_assignsubmission_file/03_autograd.ipynb": release(marker="zoe"),
    })
    report = collect(root, download)
    assert sorted(report.placed) == ["jose", "zoe"], report.text()
    assert report.status == 0


# -- the exchange: real accounts --------------------------------------------------------------

def _run_as(user: str, *command: str) -> None:
    subprocess.run(["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *command],
                   check=True, capture_output=True, cwd="/")


@pytest.fixture()
def accounts():
    """Two real Unix accounts, ``hosttest-<random>-ada`` and ``...-eve``; removed afterwards."""
    if os.geteuid() != 0:
        pytest.fail("the exchange tests create Unix accounts: run them as root (as CI does)")
    tag = secrets.token_hex(3)
    names = {who: f"hosttest-{tag}-{who}" for who in ("ada", "eve")}
    try:
        for name in names.values():
            subprocess.run(["useradd", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name],
                           check=True, capture_output=True)
        yield names
    finally:
        for name in names.values():
            subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture()
def exchange(accounts, tmp_path):
    """A course whose roster is the two accounts, and an nbgrader exchange they can write
    (inbound 2733, as nbgrader makes it) outside the course's private folder."""
    root = make_course(tmp_path / "course", "id,first_name,last_name\n" + "".join(
        f"{name},{who.title()},Test\n" for who, name in accounts.items()))
    base = Path(tempfile.mkdtemp(prefix="hosttest-exchange-"))
    base.chmod(0o755)
    inbound = base / "reftorch-course" / "inbound"
    inbound.mkdir(parents=True)
    inbound.parent.chmod(0o755)
    inbound.chmod(0o2733)
    (base / "handin.ipynb").write_bytes(release(marker="handed in"))
    (base / "handin.ipynb").chmod(0o644)
    add_config(root, f"c.Exchange.root = {str(base)!r}")
    yield root, inbound, base
    shutil.rmtree(base)


def _submit(as_user: str, named_for: str, inbound: Path, base: Path, when: str, timestamp: str | None = None,
            handin: str = "handin.ipynb") -> str:
    """What nbgrader's submit does, run as ``as_user``: a folder named for ``named_for``."""
    folder = inbound / f"{named_for}+{ASSIGNMENT}+{when}+{secrets.token_urlsafe(6)}"
    script = (f"mkdir {_q(folder)} && cp {_q(base / handin)} {_q(folder / (ASSIGNMENT + '.ipynb'))}"
              f" && printf %s {_q(timestamp or when)} > {_q(folder / 'timestamp.txt')}"
              f" && printf %s {secrets.token_hex(8)} > {_q(folder / 'submission_secret.txt')}")
    _run_as(as_user, "/bin/sh", "-c", script)
    return folder.name


def _q(text) -> str:
    return "'" + str(text).replace("'", "'\\''") + "'"


@pytest.mark.root   # real Unix accounts write the exchange
def test_an_exchange_submission_named_for_a_classmate_is_refused(exchange, accounts):
    from autograder.collect import collect as collect_any
    from coursebase.model import Course

    root, inbound, base = exchange
    ada, eve = accounts["ada"], accounts["eve"]
    forged = _submit(eve, ada, inbound, base, "2026-11-20 10:00:00.000000 UTC")
    own = _submit(eve, eve, inbound, base, "2026-11-20 10:05:00.000000 UTC")
    report = collect_any(Course.load(root), ASSIGNMENT, None)
    assert not submitted(root, ada).exists(), report.text()
    assert report.placed == {eve: f"exchange {own}"}
    refused = {row.file: row.note for row in report.not_placed}
    assert refused[f"exchange {forged}"].startswith(f"named for {ada} but written by {eve}"), report.text()
    assert report.status == 1
    # Ada's own submission afterwards is hers.
    honest = _submit(ada, ada, inbound, base, "2026-11-20 11:00:00.000000 UTC")
    again = collect_any(Course.load(root), ASSIGNMENT, None)
    assert again.placed[ada] == f"exchange {honest}", again.text()


@pytest.mark.root   # real Unix accounts write the exchange
def test_an_exchange_time_is_the_servers_not_the_folder_name_or_timestamp_txt(exchange, accounts):
    from autograder.collect import collect as collect_any
    from coursebase.model import Course

    root, inbound, base = exchange
    eve = accounts["eve"]
    before = datetime.now(timezone.utc) - timedelta(seconds=2)
    _submit(eve, eve, inbound, base, "2026-01-01 00:00:00.000000 UTC", timestamp="2026-01-01 00:00:00.000000 UTC")
    report = collect_any(Course.load(root), ASSIGNMENT, None)
    assert eve in report.placed, report.text()
    recorded = stamp(root, eve)
    assert before <= recorded <= datetime.now(timezone.utc) + timedelta(seconds=2), recorded
    # A later touch of the folder's times by its owner does not make it earlier.
    folder = next(inbound.iterdir())
    _run_as(eve, "touch", "-d", "2026-01-01", str(folder), str(folder / f"{ASSIGNMENT}.ipynb"))
    again = collect_any(Course.load(root), ASSIGNMENT, None)
    assert stamp(root, eve) >= recorded, again.text()


@pytest.mark.root   # real Unix accounts write the exchange
def test_a_file_of_someone_else_inside_an_exchange_submission_refuses_it(exchange, accounts):
    from autograder.collect import collect as collect_any
    from coursebase.model import Course

    root, inbound, base = exchange
    ada, eve = accounts["ada"], accounts["eve"]
    name = _submit(ada, ada, inbound, base, "2026-11-20 10:00:00.000000 UTC")
    # nbgrader's submit leaves the folder 0777 "so the instructor can delete later"
    (inbound / name).chmod(0o777)
    _run_as(eve, "/bin/sh", "-c", f"printf x > {_q(inbound / name / 'helper.py')}")
    report = collect_any(Course.load(root), ASSIGNMENT, None)
    assert report.placed == {}, report.text()
    note = report.not_placed[0].note
    assert note.startswith(f"named for {ada} but written by {eve}") and "helper.py" in note


@pytest.mark.root   # real Unix accounts write the exchange
def test_exchange_owner_template_for_tljh(exchange, accounts):
    """TLJH's accounts are ``jupyter-<name>``: ``c.CourseExchange.owner`` maps ids to owners."""
    from autograder.collect import collect as collect_any
    from coursebase.model import Course

    root, inbound, base = exchange
    ada = accounts["ada"]
    prefix = ada[: -len("-ada")]
    add_config(root, f"c.CourseExchange.owner = {prefix + '-{student}'!r}")
    (root / "var").mkdir(exist_ok=True)
    (root / "var" / "roster.csv").write_text("id,first_name,last_name\nada,Ada,Test\n")
    name = _submit(ada, "ada", inbound, base, "2026-11-20 10:00:00.000000 UTC")
    report = collect_any(Course.load(root), ASSIGNMENT, None)
    assert report.placed == {"ada": f"exchange {name}"}, report.text()



@pytest.mark.root   # real Unix accounts write the exchange
def test_the_exchange_places_each_students_latest_by_the_servers_clock(exchange, accounts):
    from autograder.collect import collect as collect_any
    from coursebase.model import Course
    from lms_support import mark_graded

    root, inbound, base = exchange
    ada, eve = accounts["ada"], accounts["eve"]
    first = _submit(ada, ada, inbound, base, "2026-11-20 10:00:00.000000 UTC")
    _submit(eve, eve, inbound, base, "2026-11-20 11:00:00.000000 UTC")
    (inbound / "stray-file.txt").write_text("?")
    report = collect_any(Course.load(root), ASSIGNMENT, None)
    assert sorted(report.placed) == sorted([ada, eve]) and report.status == 1, report.text()
    assert "collected 2 submission(s)" in report.text() and "stray-file.txt" in report.text()
    # nbgrader's secret goes along (feedback is released by it); timestamp.txt is the server's time
    assert (submitted(root, ada) / "submission_secret.txt").read_text() == \
        (inbound / first / "submission_secret.txt").read_text()
    mark_graded(root, ada)
    # A later submission of Ada's own, named with an earlier time: the server's clock orders them.
    (base / "second.ipynb").write_bytes(release(marker="second"))
    (base / "second.ipynb").chmod(0o644)
    second = _submit(ada, ada, inbound, base, "2026-11-19 09:00:00.000000 UTC", handin="second.ipynb")
    again = collect_any(Course.load(root), ASSIGNMENT, None)
    row = next(r for r in again.rows if r.student == ada)
    assert row.outcome == "replaced" and row.file == f"exchange {second}", again.text()
    assert "previous one (graded) is still in the exchange" in row.note
    assert first != second
    assert [r.outcome for r in collect_any(Course.load(root), ASSIGNMENT, None).rows
            if r.student in (ada, eve)] == ["unchanged", "unchanged"]
