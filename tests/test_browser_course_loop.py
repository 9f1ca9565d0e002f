"""The whole course loop in a real browser: a student and an instructor in JupyterLab.

1. JupyterLab starts (as `make lab` configures it) on a free loopback port with a token;
2. a student opens lesson 01, runs all cells: no unexpected error, pictures rendered;
3. the instructor releases an assignment to the exchange; the student fetches it in the
   Assignment List, writes an answer, presses Validate, reads the result, submits;
4. the instructor collects and grades with `course`, sees the score in Formgrader; the
   student fetches the feedback.
Screenshots of each step go to a temporary folder ($COURSE_ARTIFACTS/browser/ to keep them).
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect, sync_playwright

from browser.chromium import launch
from browser.course_copy import REPO_ROOT, copy_course
from browser.instructor import Instructor
from browser.jupyterlab import start_lab
from browser.artifacts import artifacts_folder
from browser.lab_page import Lab

pytestmark = [pytest.mark.browser, pytest.mark.xdist_group("browser"),
              pytest.mark.timeout(240)]  # the budget: 4 minutes

LESSON = sorted(path.relative_to(REPO_ROOT).as_posix()
                for path in (REPO_ROOT / "lessons").glob("01_*.ipynb"))[0]
ASSIGNMENT = "01_tensors"


def first_answer(solution_path: Path) -> str:
    """The first answer cell with its solution: what a student who got that question right
    would type."""
    notebook = nbformat.read(solution_path, as_version=4)
    answers = [cell for cell in notebook.cells
               if cell.metadata.get("nbgrader", {}).get("solution")
               and cell.cell_type == "code"]
    cell = answers[0]
    markers = {"### BEGIN SOLUTION", "### END SOLUTION"}
    return "\n".join(line for line in cell.source.splitlines() if line.strip() not in markers)


def unexpected_errors(state: dict) -> list[str]:
    """Error outputs in cells not tagged raises-exception (the lessons' deliberate demos)."""
    found = []
    for cell in state["cells"]:
        for output in cell["outputs"]:
            if output.get("output_type") == "error" and "raises-exception" not in cell["tags"]:
                found.append(f"cell {cell['index']}: {output.get('ename')}: "
                             f"{output.get('evalue')}")
    return found


def course_id(server) -> str:
    """The course id nbgrader's extensions will use, read from the course's own config."""
    from traitlets.config import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", str(server.course / "course")).load_config()
    return config.CourseDirectory.course_id


def check_lab_overrides_installed() -> None:
    wanted = json.loads((REPO_ROOT / "course/lab/overrides.json").read_text())
    installed = Path(sys.prefix) / "share/jupyter/lab/settings/overrides.json"
    assert installed.exists() and json.loads(installed.read_text()) == wanted, (
        f"{installed} is missing or differs from course/lab/overrides.json; "
        "`make lab` (or `make lab-check`) installs it")


@pytest.fixture
def course_home():
    """A folder for the course copy that the grading sandbox's unprivileged user can enter
    (pytest's own tmp folders are private to root)."""
    home = Path(tempfile.mkdtemp(prefix="course-browser-"))
    home.chmod(0o755)
    yield home
    shutil.rmtree(home, ignore_errors=True)


def test_student_and_instructor_loop(tmp_path, course_home):
    check_lab_overrides_installed()
    shots = artifacts_folder("browser", tmp_path)
    course = copy_course(course_home / "course")
    server = start_lab(course, tmp_path / "home", shots / "jupyterlab.log")
    instructor = Instructor(course, server.env, tmp_path / "instructor.log")

    # The instructor publishes while the student reads the lesson (as in a real class).
    released: dict[str, object] = {}

    def publish():
        try:
            released["output"] = instructor.release_to_exchange(ASSIGNMENT)
        except BaseException as error:  # reported in the test thread
            released["error"] = error

    publisher = threading.Thread(target=publish)
    publisher.start()
    try:
        with sync_playwright() as playwright:
            context = launch(playwright, tmp_path / "chromium-profile")
            lab = Lab(context.new_page(), shots)
            try:
                student_lesson(lab, server)
                publisher.join(timeout=180)
                if "error" in released:
                    raise released["error"]
                assert "output" in released, "releasing the assignment did not finish in 180s"
                outbound = course / "var/exchange" / course_id(server) / "outbound" / ASSIGNMENT
                assert outbound.is_dir(), f"the release is not in the course exchange: {outbound}"
                student_assignment(lab, server, course)
                instructor_grades(lab, server, course, instructor)
                student_feedback(lab, server, course, instructor)
                assert lab.news_or_update_toasts() == [], "a news/update pop-up appeared"
            except BaseException:
                lab.screenshot("failure")
                raise
            finally:
                context.close()
    finally:
        publisher.join(timeout=180)
        server.stop()
        for log in (tmp_path / "instructor.log",):
            if log.exists():
                shutil.copy(log, shots / log.name)


def student_lesson(lab: Lab, server) -> None:
    page = lab.page
    page.goto(server.url("lab"))
    names = lab.file_browser_names()
    assert {"lessons", "assignments"} <= set(names), f"file browser shows {names}"
    assert page.locator(".lm-MenuBar-item", has_text="Nbgrader").count() == 1, \
        "nbgrader's lab extension is not loaded (no Nbgrader menu)"
    lab.screenshot("01_lab_home")

    lab.open_in_file_browser("lessons", Path(LESSON).name)
    lab.wait_for_notebook(LESSON)
    state = lab.run_all_and_wait()
    lab.screenshot("02_lesson_after_run_all")
    not_run = [cell["index"] for cell in state["cells"]
               if cell["type"] == "code" and not cell["executionCount"]]
    errors = unexpected_errors(state)
    assert not errors, f"{LESSON} shows error output after Run All: {errors}"
    assert not not_run, f"{LESSON}: cells {not_run} did not run"

    stored = nbformat.read(REPO_ROOT / LESSON, as_version=4)
    stored_pictures = sum(1 for cell in stored.cells if cell.cell_type == "code"
                          for output in cell.outputs
                          if {"image/png", "image/svg+xml"} & set(output.get("data", {})))
    fresh_pictures = sum(1 for cell in state["cells"] for output in cell["outputs"]
                         if {"image/png", "image/svg+xml"} & set(output.get("data", {})))
    assert fresh_pictures >= max(stored_pictures, 1), (
        f"Run All produced {fresh_pictures} pictures, the stored lesson has {stored_pictures}")
    # Show a drawn graph (graphviz: storage diagrams, autograd graphs) rather than a chart.
    picture_cells = [cell for cell in state["cells"] for output in cell["outputs"]
                     if {"image/png", "image/svg+xml"} & set(output.get("data", {}))]
    graphs = [cell for cell in picture_cells
              if re.search(r"diagram|draw_graph|make_dot|graphviz", cell["source"])]
    lab.show_output_picture((graphs or picture_cells)[0]["index"])
    images = lab.rendered_images()
    broken = [image for image in images if not image["complete"] or not image["width"]]
    assert len(images) >= fresh_pictures and not broken, (
        f"pictures on screen: {len(images)} of {fresh_pictures}, not decoded: {broken}")
    lab.screenshot("03_lesson_picture")


def open_assignment_list(lab: Lab):
    lab.menu("Nbgrader", "Assignment List")
    panel = lab.page.locator("#assignments")
    panel.wait_for()
    return panel


def student_assignment(lab: Lab, server, course: Path) -> None:
    page = lab.page
    panel = open_assignment_list(lab)
    released = panel.locator("#released_assignments_list .list_item:not(.nested_list_item)", has_text=ASSIGNMENT).first
    expect(released).to_be_visible(timeout=30_000)
    lab.screenshot("04_assignment_list_released")
    released.get_by_role("button", name="Fetch").click()
    fetched = panel.locator("#fetched_assignments_list .list_item:not(.nested_list_item)", has_text=ASSIGNMENT).first
    expect(fetched).to_be_visible(timeout=60_000)

    # Open the fetched notebook from the list, answer the first question.
    fetched.locator(".assignment-notebooks-link").first.click()
    fetched.locator(".nested_list_item .item_name a", has_text=ASSIGNMENT).first.click()
    notebook_path = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    lab.wait_for_notebook(notebook_path)
    answer = first_answer(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    state = lab.notebook_state()
    answer_index = next(cell["index"] for cell in state["cells"]
                        if cell["type"] == "code" and cell["nbgrader"].get("solution"))
    cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(
        answer_index)
    cell.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.insert_text(answer)
    page.keyboard.press("Escape")
    # No explicit save: Validate saves the notebook first, as a student would rely on.

    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .validate-button").click()
    dialog = lab.dialog(timeout=150_000)
    expect(dialog.locator(".jp-Dialog-header")).to_have_text("Validation Results")
    result = dialog.inner_text()
    lab.screenshot("05_validate_result")
    # The dialog gives the grader's judgement, the one `course validate` prints for the same
    # saved notebook: every failing test with its points and message, no passing one. The
    # other questions are still blank (their tests fail); the answered one's test passes.
    done = subprocess.run([sys.executable, "-m", "course.cli", "validate", notebook_path], cwd=course,
                          env=server.env, capture_output=True, text=True, timeout=300)
    printed = done.stdout + done.stderr
    verdicts = {grade_id: (verdict, points, message) for verdict, grade_id, points, message in
                re.findall(r"^  (PASS|FAIL)  (\S+)\s+(\S+)(?:  (.*))?$", printed, re.MULTILINE)}
    assert done.returncode == 1 and verdicts, printed
    answered_test = next(cell["nbgrader"]["grade_id"] for cell in state["cells"][answer_index:]
                         if cell["nbgrader"].get("grade"))
    assert verdicts[answered_test][0] == "PASS", printed
    assert "The following cell failed" in result, f"Validate shows no failing test: {result}"
    for grade_id, (verdict, points, message) in verdicts.items():
        if verdict == "FAIL":
            assert f"{grade_id}: {points} points" in result and message in result, (grade_id, message, result)
        else:
            assert f"{grade_id}:" not in result, f"Validate reports the passing {grade_id} as failing: {result}"
    page.locator(".jp-Dialog-button", has_text="Ok").first.click()

    panel = open_assignment_list(lab)
    fetched = panel.locator("#fetched_assignments_list .list_item:not(.nested_list_item)", has_text=ASSIGNMENT).first
    fetched.get_by_role("button", name="Submit").click()
    submitted = panel.locator("#submitted_assignments_list .list_item:not(.nested_list_item)", has_text=ASSIGNMENT).first
    expect(submitted).to_be_visible(timeout=60_000)
    lab.screenshot("06_submitted")


def instructor_grades(lab: Lab, server, course: Path, instructor: Instructor) -> None:
    instructor.course_cli("collect", ASSIGNMENT)
    instructor.course_cli("grade", ASSIGNMENT)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course}/var/gradebook.db") as gradebook:
        submissions = gradebook.assignment_submissions(ASSIGNMENT)
        assert len(submissions) == 1, f"gradebook holds {len(submissions)} submissions"
        student, score, max_score = (submissions[0].student_id, submissions[0].score,
                                     submissions[0].max_score)
    # One question right of several: some points, not all.
    assert 0 < score < max_score, f"graded {score}/{max_score}; expected partial credit"

    page = lab.page
    lab.menu("Nbgrader", "Formgrader")
    frame = page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe").first
    frame.locator(f'a[href*="manage_submissions/{ASSIGNMENT}"]').first.click()
    row = frame.locator("tr", has_text=student).first
    expect(row).to_be_visible(timeout=30_000)
    shown = row.inner_text()
    lab.screenshot("07_formgrader_submission")
    scores = [(float(got), float(out_of)) for got, out_of in
              re.findall(r"(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)", shown)]
    assert (score, max_score) in scores, (
        f"formgrader row for {student}: {shown!r}; gradebook score {score}/{max_score}")


def student_feedback(lab: Lab, server, course: Path, instructor: Instructor) -> None:
    instructor.course_cli("feedback", ASSIGNMENT)
    panel = open_assignment_list(lab)
    panel.locator("#refresh_assignments_list").click()
    submitted = panel.locator("#submitted_assignments_list .list_item:not(.nested_list_item)",
                              has_text=ASSIGNMENT).first
    fetch = submitted.get_by_role("button", name="Fetch Feedback")
    expect(fetch).to_be_visible(timeout=30_000)
    fetch.click()
    view = panel.locator("#submitted_assignments_list a", has_text="view feedback").first
    expect(view).to_be_visible(timeout=60_000)
    lab.screenshot("08_feedback_fetched")

    feedback = sorted((course / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}.html"))
    assert feedback, f"no feedback under {course / ASSIGNMENT / 'feedback'}"
    relative = feedback[-1].relative_to(course).as_posix()
    page = lab.page.context.new_page()
    page.goto(server.url(f"files/{relative}"))
    expect(page.locator("body")).to_contain_text(ASSIGNMENT)
    page.screenshot(path=str(lab.shots / "09_feedback_page.png"))
    page.close()
