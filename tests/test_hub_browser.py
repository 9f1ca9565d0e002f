"""A class on the course hub: two students and the instructor logged in at the same time.

Real Unix users (random names, removed afterwards), real PAM logins, JupyterHub with
configurable-http-proxy, each JupyterLab running as its person's Unix user, nbgrader's
exchange at a system-like path shared by all:

1. the hub refuses to start twice and the first keeps serving;
2. the instructor releases an assignment; both students log in, fetch it in the Assignment
   List, answer (A one question, B two), save and submit;
3. A cannot open B's work: not on the file system as A's Unix user, not from A's kernel,
   not through B's server with A's login;
4. the instructor collects and grades (`course collect`, `course grade`, the sandboxed
   grader) as their Unix user; Formgrader shows both students by name;
5. `course feedback`; each student fetches feedback and sees exactly their own score.
Screenshots go to artifacts/hub/.
"""
from __future__ import annotations

import json
import shutil
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect, sync_playwright

from browser.chromium import CHROMIUM_ARGS, chromium_path
from browser.course_copy import REPO_ROOT
from browser.hub import CourseHub
from browser.lab_page import Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser"),
              pytest.mark.timeout(420)]

ASSIGNMENT = "01_tensors"
ARTIFACTS = REPO_ROOT / "artifacts" / "hub"
LAB_READY = 180_000  # ms: a JupyterLab spawned on a loaded 2-core machine

# What one person can reach of another's work, tried by a Python process running as them:
# "denied" is the only acceptable answer for someone else's files.
PROBE = """
import json, os
def probe(path, how):
    try:
        os.listdir(path) if how == "list" else open(path, "rb").read(1)
        return "allowed"
    except PermissionError:
        return "denied"
    except FileNotFoundError:
        return "missing"
print("PROBE" + json.dumps({name: probe(path, how) for name, (path, how) in TARGETS.items()}))
"""


def answers(count: int) -> list[str]:
    """The first `count` answers of the solution, as a student who got them right types them."""
    notebook = nbformat.read(REPO_ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
    cells = [cell for cell in notebook.cells if cell.cell_type == "code"
             and cell.metadata.get("nbgrader", {}).get("solution")]
    markers = {"### BEGIN SOLUTION", "### END SOLUTION"}
    return ["\n".join(line for line in cell.source.splitlines() if line.strip() not in markers)
            for cell in cells[:count]]


def log_in(page, hub: CourseHub, user: str) -> None:
    page.goto(hub.url("hub/login"))
    page.fill("#username_input", user)
    page.fill("#password_input", hub.passwords[user])
    page.click("#login_submit")


def wait_for_lab(lab: Lab, user: str) -> None:
    page = lab.page
    expect(page.locator(".lm-MenuBar-item", has_text="Nbgrader")).to_be_visible(timeout=LAB_READY)
    assert f"/user/{user}/lab" in page.url, f"{user} landed on {page.url}"


def assignment_panel(lab: Lab):
    lab.menu("Nbgrader", "Assignment List")
    panel = lab.page.locator("#assignments")
    panel.wait_for()
    return panel


def list_item(panel, section: str):
    return panel.locator(f"#{section}_assignments_list .list_item:not(.nested_list_item)",
                         has_text=ASSIGNMENT).first


def fetch_work_submit(lab: Lab, name: str, solved: list[str]) -> None:
    page = lab.page
    panel = assignment_panel(lab)
    released = list_item(panel, "released")
    expect(released).to_be_visible(timeout=60_000)
    released.get_by_role("button", name="Fetch").click()
    fetched = list_item(panel, "fetched")
    expect(fetched).to_be_visible(timeout=60_000)
    fetched.locator(".assignment-notebooks-link").first.click()
    fetched.locator(".nested_list_item .item_name a", has_text=ASSIGNMENT).first.click()
    lab.wait_for_notebook(f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb", timeout=120)
    state = lab.notebook_state()
    slots = [cell["index"] for cell in state["cells"]
             if cell["type"] == "code" and cell["nbgrader"].get("solution")]
    for index, answer in zip(slots, solved):
        cell = page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)
        cell.locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(answer)
        page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty",
                           timeout=30_000)
    lab.screenshot(f"{name}_1_answered")
    panel = assignment_panel(lab)
    list_item(panel, "fetched").get_by_role("button", name="Submit").click()
    expect(list_item(panel, "submitted")).to_be_visible(timeout=60_000)
    lab.screenshot(f"{name}_2_submitted")


def probe_as(hub: CourseHub, user: str, targets: dict) -> dict:
    """The probe run by `user` on the machine (their Unix permissions, nothing else)."""
    done = hub.as_user(user, ["python", "-c", f"TARGETS = {targets!r}\n{PROBE}"])
    return json.loads(done.stdout.split("PROBE", 1)[1])


def probe_in_kernel(lab: Lab, targets: dict) -> dict:
    """The same probe run by a kernel of the person's own JupyterLab, through their server."""
    output = lab.page.evaluate("""async (code) => {
        const kernels = window.jupyterapp.serviceManager.kernels;
        const kernel = await kernels.startNew({name: 'python3'});
        let out = '';
        const future = kernel.requestExecute({code});
        future.onIOPub = (msg) => {
            if (msg.header.msg_type === 'stream') out += msg.content.text;
            if (msg.header.msg_type === 'error')
                out += msg.content.ename + ': ' + msg.content.evalue;
        };
        await future.done;
        await kernel.shutdown();
        return out;
    }""", f"TARGETS = {targets!r}\n{PROBE}")
    assert "PROBE" in output, f"the probe did not run in the kernel: {output}"
    return json.loads(output.split("PROBE", 1)[1])


def fetch_feedback(lab: Lab, name: str) -> int:
    panel = assignment_panel(lab)
    panel.locator("#refresh_assignments_list").click()
    fetch = list_item(panel, "submitted").get_by_role("button", name="Fetch Feedback")
    expect(fetch).to_be_visible(timeout=60_000)
    fetch.click()
    views = panel.locator("#submitted_assignments_list a", has_text="view feedback")
    expect(views.first).to_be_visible(timeout=60_000)
    lab.screenshot(f"{name}_3_feedback_fetched")
    return views.count()


def test_two_students_and_the_instructor_on_the_course_hub(tmp_path):
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)
    hub = CourseHub([("stua", "Ada", "Lovelace"), ("stub", "Bob", "Babbage")],
                    ARTIFACTS / "commands.log",
                    lab_args=("--LabApp.expose_app_in_browser=True",))
    try:
        hub.open()
        a, b = sorted(hub.students)
        class_loop(hub, a, b)
    finally:
        hub.close()


def class_loop(hub: CourseHub, a: str, b: str) -> None:
    # 1. A second start is refused with a clear message; the first hub keeps serving.
    again = hub.start_hub(check=False)
    assert again.returncode == 1 and "already running" in again.stderr, again.stderr
    with urllib.request.urlopen(hub.url("hub/api/"), timeout=10) as reply:
        assert reply.status == 200

    course_id = json.loads((hub.state / "settings.json").read_text())["course_id"]
    inbound = hub.exchange / course_id / "inbound"
    # The instructor releases while the class logs in (their servers take a while to start).
    with ThreadPoolExecutor(max_workers=1) as background:
        release = background.submit(hub.instructor_course, "release", ASSIGNMENT, "--exchange")
        with_the_class(hub, a, b, inbound, release)


def with_the_class(hub: CourseHub, a: str, b: str, inbound: Path, release) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                             args=CHROMIUM_ARGS)
        labs = {}
        try:
            # Three people log in at once: their servers start side by side.
            for user in (a, b, hub.instructor):
                page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
                labs[user] = Lab(page, ARTIFACTS)
                log_in(page, hub, user)
            for user, lab in labs.items():
                wait_for_lab(lab, user)
            labs[a].screenshot("a_0_lab")
            release.result(timeout=180)  # raises what the release raised

            # 2. Both students fetch, work and submit.
            fetch_work_submit(labs[a], "a", answers(1))
            fetch_work_submit(labs[b], "b", answers(2))

            # 3. A cannot reach B's work: as A's Unix user, from A's kernel, through B's server.
            b_home = hub.home(b)
            targets = {
                "exchange inbound (everyone's submissions)": (str(inbound), "list"),
                "B's home": (str(b_home), "list"),
                "B's notebook": (str(b_home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), "read"),
            }
            own = {"A's own notebook":
                   (str(hub.home(a) / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), "read")}
            expected = {**{name: "denied" for name in targets}, "A's own notebook": "allowed"}
            seen = probe_as(hub, a, {**targets, **own})
            assert seen == expected, seen
            seen = probe_in_kernel(labs[a], {**targets, **own})
            assert seen == expected, seen
            reply = labs[a].page.request.get(hub.url(f"user/{b}/api/contents/{ASSIGNMENT}"))
            assert reply.status == 403 and f"{ASSIGNMENT}.ipynb" not in reply.text(), (
                f"A's login reached B's server: {reply.status} {reply.text()[:300]}")

            # 4. The instructor collects and grades, as their own Unix user.
            collected = hub.instructor_course("collect", ASSIGNMENT)
            assert "collected 2 submission(s)" in collected, collected
            assert "refused" not in collected, collected
            hub.instructor_course("grade", ASSIGNMENT)
            scores = gradebook_scores(hub)
            assert set(scores) == {a, b}, scores
            assert 0 < scores[a][0] < scores[b][0] < scores[b][1], (
                f"A answered one question, B two: {scores}")
            formgrader_names(labs[hub.instructor], hub, a, b)

            # 5. Feedback: each student sees one page, with their own score.
            hub.instructor_course("feedback", ASSIGNMENT)
            for user, name in ((a, "a"), (b, "b")):
                assert fetch_feedback(labs[user], name) == 1
                received = hub.home(user) / ASSIGNMENT / "feedback"
                pages = sorted(received.glob(f"*/{ASSIGNMENT}.html"))
                assert len(pages) == 1, f"{user} has feedback pages {pages}"
                got, out_of = scores[user]
                heading = f"{ASSIGNMENT}: {got:g} / {out_of:g} points"
                page = labs[user].page.context.new_page()
                page.goto(hub.url(f"user/{user}/files/{pages[0].relative_to(hub.home(user))}"))
                expect(page.locator("h1")).to_have_text(heading)
                page.screenshot(path=str(ARTIFACTS / f"{name}_4_feedback_page.png"))
                page.close()
            feedback = hub.exchange / inbound.parent.name / "feedback"
            seen = probe_as(hub, a, {"exchange feedback (everyone's)": (str(feedback), "list")})
            assert seen == {"exchange feedback (everyone's)": "denied"}, seen
        except BaseException:
            for user, lab in labs.items():
                lab.screenshot(f"failure_{'instructor' if user == hub.instructor else user}")
            raise
        finally:
            browser.close()


def gradebook_scores(hub: CourseHub) -> dict[str, tuple[float, float]]:
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{hub.course}/course/gradebook.db") as gradebook:
        return {s.student_id: (s.score, s.max_score)
                for s in gradebook.assignment_submissions(ASSIGNMENT)}


def formgrader_names(lab: Lab, hub: CourseHub, a: str, b: str) -> None:
    """Formgrader (in the instructor's JupyterLab) lists the students by their names."""
    lab.menu("Nbgrader", "Formgrader")
    frame = lab.page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe").first
    frame.locator('a[href*="manage_students"]').first.click()
    for student in (a, b):
        first, last = hub.students[student]
        row = frame.locator("tr", has_text=student).first
        expect(row).to_be_visible(timeout=30_000)
        text = row.inner_text()
        assert last in text and first in text and "None" not in text, (
            f"formgrader shows {student} as {text!r}")
    lab.screenshot("instructor_formgrader_students")
