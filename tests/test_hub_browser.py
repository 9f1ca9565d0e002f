"""A class on the course hub: two students and the instructor logged in at the same time.

Real Unix users (random names, removed afterwards), real PAM logins, JupyterHub with
configurable-http-proxy, each JupyterLab running as its person's Unix user, nbgrader's
exchange at a system-like path shared by all. The course is a git checkout in the
instructor's 0700 home, at a path with spaces (tests/browser/hub.py):

1. the hub refuses to start twice and the first keeps serving;
2. the instructor releases an assignment; both students log in and find the student kit of
   the checkout's HEAD in their home (exactly its files); the Assignment List shows the kit's
   copy (assignments/<a>/, the one copy) as fetched; they answer there (A one question, B two),
   save and submit it;
3. A cannot open B's work: not on the file system as A's Unix user, not from A's kernel,
   not through B's server with A's login;
4. A cannot read anything of the instructor's: the checkout, its .git (also with
   `git -c safe.directory=* show HEAD:solutions/...`), solutions, gradebook.db,
   nbgrader_config.py, the instructor's home and Jupyter runtime files, the exchange's
   inbound, the hub's state, /proc of the instructor's processes and the hub's (environ,
   cwd, root, fd, maps, mem), and A's server's environment names nothing of the checkout;
   tried as A's Unix user, from A's kernel, and over HTTP (A's server, the instructor's);
5. the instructor collects and grades (`course collect`, `course grade`, the sandboxed
   grader) as their Unix user; Formgrader shows both students by name, and its own
   Generate/Release/Collect/Autograde/feedback buttons are hidden and refused;
6. `course feedback`; each student fetches feedback and sees exactly their own score.
Screenshots go to a temporary folder ($COURSE_ARTIFACTS/hub/ to keep them).
"""
from __future__ import annotations

import json
import re
import subprocess
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect, sync_playwright

from browser.chromium import CHROMIUM_ARGS, chromium_path
from browser.artifacts import artifacts_folder
from browser.course_copy import REPO_ROOT
from browser.hub import CourseHub
from browser.lab_page import Lab

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser"),
              pytest.mark.timeout(420)]

ASSIGNMENT = "01_tensors"
ARTIFACTS = Path()   # set by the test: browser/artifacts.py
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


# Everything of the instructor's a student might try, by every path we know of: each file
# path, `git show` of the solutions from the checkout's history, /proc of the instructor's
# processes (their JupyterLab and kernels) and of root's (the hub), and the student's own
# environment. Prints what was reached; "denied" is the only acceptable answer.
PRIVACY_PROBE = """
import json, os, subprocess
def attempt(path, how):
    try:
        if how == "list":
            os.listdir(path)
        elif how == "link":
            os.readlink(path)
        else:
            with open(path, "rb") as handle:
                if not handle.read(1):
                    return "empty"  # a kernel thread's /proc/<pid>/maps: nothing to read
        return "allowed"
    except PermissionError:
        return "denied"
    except (FileNotFoundError, ProcessLookupError):
        return "missing"
seen = {name: attempt(path, how) for name, (path, how) in TARGETS.items()}
git = subprocess.run(["git", "-c", "safe.directory=*", "-C", CHECKOUT, "show",
                      "HEAD:solutions/" + ASSIGNMENT + "/" + ASSIGNMENT + ".ipynb"],
                     capture_output=True, text=True)
seen["git show HEAD:solutions/..."] = ("allowed" if git.returncode == 0 or git.stdout
                                       else "denied" if "Permission denied" in git.stderr
                                       else git.stderr.strip())
def uid_of(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith("Uid:"))
    except (OSError, StopIteration):
        return None
processes = {"instructor": [], "root": []}
for pid in filter(str.isdigit, os.listdir("/proc")):
    uid = uid_of(pid)
    if uid in (INSTRUCTOR_UID, 0):
        processes["instructor" if uid else "root"].append(pid)
for who, pids in processes.items():
    for entry, how in (("environ", "read"), ("cwd", "list"), ("cwd", "link"), ("root", "list"),
                       ("fd", "list"), ("maps", "read"), ("mem", "read"), ("exe", "link")):
        outcomes = {attempt(f"/proc/{pid}/{entry}", how) for pid in pids} - {"missing"}
        seen[f"/proc/<{who}'s>/{entry} ({how})"] = sorted(outcomes)
seen["instructor's processes"] = len(processes["instructor"])
seen["environment naming the checkout"] = sorted(key for key, value in os.environ.items()
                                                 if CHECKOUT in value)
print("PROBE" + json.dumps(seen))
"""


def privacy_targets(hub: CourseHub, inbound: Path) -> dict:
    course, home = hub.course, hub.home(hub.instructor)
    return {
        "the checkout": (str(course), "list"),
        "its .git": (str(course / ".git"), "list"),
        ".git/HEAD": (str(course / ".git" / "HEAD"), "read"),
        ".git/config": (str(course / ".git" / "config"), "read"),
        "solutions/": (str(course / "solutions"), "list"),
        "a solution notebook": (str(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"),
                                "read"),
        "gradebook.db": (str(course / "var" / "gradebook.db"), "read"),
        "course/nbgrader_config.py": (str(course / "course" / "nbgrader_config.py"), "read"),
        "the instructor's home": (str(home), "list"),
        "the instructor's Jupyter runtime": (str(home / ".local" / "share" / "jupyter" / "runtime"),
                                             "list"),
        "exchange inbound": (str(inbound), "list"),
        "the hub's state": (str(hub.state), "list"),
        "the hub's settings": (str(hub.state / "settings.json"), "read"),
    }


def privacy_probe(run, hub: CourseHub, inbound: Path) -> None:
    """Run PRIVACY_PROBE with ``run`` (as the Unix user, or in the kernel) and check it."""
    seen = run({"TARGETS": privacy_targets(hub, inbound), "CHECKOUT": str(hub.course),
                "ASSIGNMENT": ASSIGNMENT, "INSTRUCTOR_UID": hub.uid(hub.instructor)})
    assert seen.pop("instructor's processes") > 0, "no process of the instructor to probe"
    assert seen.pop("environment naming the checkout") == [], seen
    for name, outcome in seen.items():
        if name.startswith("/proc"):
            assert "denied" in outcome and set(outcome) <= {"denied", "empty"}, (
                f"a student reached {name}: {outcome} ({seen})")
        else:
            assert outcome == "denied", f"a student reached {name}: {outcome} ({seen})"


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
    """The assignment is released on the exchange and its kit copy is in the student's home
    (assignments/<a>/, where the kit's README says to work): the Assignment List shows that one
    copy as fetched, opens it, and submits it (nothing to fetch, no second copy)."""
    page = lab.page
    panel = assignment_panel(lab)
    fetched = list_item(panel, "fetched")
    expect(fetched).to_be_visible(timeout=60_000)
    expect(list_item(panel, "released")).to_have_count(0)
    fetched.locator(".assignment-notebooks-link").first.click()
    fetched.locator(".nested_list_item .item_name a", has_text=ASSIGNMENT).first.click()
    lab.wait_for_notebook(f"assignments/{ASSIGNMENT}/{ASSIGNMENT}.ipynb", timeout=120)
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
    # Validate, as the student's Unix user with their copy of the kit: the grader's judgement
    # (course/validate_button.py), each unanswered question's test failing with its points
    page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .validate-button").click()
    dialog = lab.dialog(timeout=150_000)
    shown = dialog.inner_text()
    assert re.search(r"^\S+: 0/[\d.]+ points$", shown, re.MULTILINE), f"Validate on the hub showed: {shown}"
    lab.screenshot(f"{name}_1_validated")
    page.locator(".jp-Dialog-button", has_text="Ok").first.click()
    panel = assignment_panel(lab)
    list_item(panel, "fetched").get_by_role("button", name="Submit").click()
    expect(list_item(panel, "submitted")).to_be_visible(timeout=60_000)
    lab.screenshot(f"{name}_2_submitted")


def _program(names: dict, script: str) -> str:
    return "".join(f"{name} = {value!r}\n" for name, value in names.items()) + script


def probe_as(hub: CourseHub, user: str, targets: dict, script: str = PROBE) -> dict:
    """The probe run by `user` on the machine (their Unix permissions, nothing else)."""
    names = targets if script is not PROBE else {"TARGETS": targets}
    done = hub.as_user(user, ["python", "-c", _program(names, script)])
    return json.loads(done.stdout.split("PROBE", 1)[1])


def probe_in_kernel(lab: Lab, targets: dict, script: str = PROBE) -> dict:
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
    }""", _program(targets if script is not PROBE else {"TARGETS": targets}, script))
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
    global ARTIFACTS
    ARTIFACTS = artifacts_folder("hub", tmp_path)
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
            # Each student's home holds exactly the kit of the checkout's HEAD.
            for student in (a, b):
                kit_in_home(hub, student)
            expect(labs[a].page.locator(".jp-DirListing-item", has_text="lessons")).to_be_visible()
            release.result(timeout=180)  # raises what the release raised

            # 2. Both students work in their kit's copy and submit it: one copy of the assignment.
            fetch_work_submit(labs[a], "a", answers(1))
            fetch_work_submit(labs[b], "b", answers(2))
            for student in (a, b):
                assert not (hub.home(student) / ASSIGNMENT).exists(), f"{student} has a second copy"

            # 3. A cannot reach B's work: as A's Unix user, from A's kernel, through B's server.
            b_home = hub.home(b)
            targets = {
                "exchange inbound (everyone's submissions)": (str(inbound), "list"),
                "B's home": (str(b_home), "list"),
                "B's notebook": (str(b_home / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), "read"),
            }
            own = {"A's own notebook":
                   (str(hub.home(a) / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"), "read")}
            expected = {**{name: "denied" for name in targets}, "A's own notebook": "allowed"}
            seen = probe_as(hub, a, {**targets, **own})
            assert seen == expected, seen
            seen = probe_in_kernel(labs[a], {**targets, **own})
            assert seen == expected, seen
            reply = labs[a].page.request.get(hub.url(f"user/{b}/api/contents/assignments/{ASSIGNMENT}"))
            assert reply.status == 403 and f"{ASSIGNMENT}.ipynb" not in reply.text(), (
                f"A's login reached B's server: {reply.status} {reply.text()[:300]}")

            # 4. A cannot read anything of the instructor's, by any path.
            privacy_probe(lambda names: probe_as(hub, a, names, PRIVACY_PROBE), hub, inbound)
            privacy_probe(lambda names: probe_in_kernel(labs[a], names, PRIVACY_PROBE), hub, inbound)
            instructor_files_over_http(labs[a], hub, a)

            # 5. The instructor collects and grades, as their own Unix user.
            collected = hub.instructor_course("collect", ASSIGNMENT)
            assert "collected 2 submission(s)" in collected, collected
            assert "refused" not in collected, collected
            hub.instructor_course("grade", ASSIGNMENT)
            scores = gradebook_scores(hub)
            assert set(scores) == {a, b}, scores
            assert 0 < scores[a][0] < scores[b][0] < scores[b][1], (
                f"A answered one question, B two: {scores}")
            formgrader_names(labs[hub.instructor], hub, a, b)
            formgrader_refuses_its_own_grading(labs[hub.instructor], hub, a)

            # 6. Feedback: each student sees one page, with their own score.
            hub.instructor_course("feedback", ASSIGNMENT)
            for user, name in ((a, "a"), (b, "b")):
                assert fetch_feedback(labs[user], name) == 1
                received = hub.home(user) / "assignments" / ASSIGNMENT / "feedback"
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
    with Gradebook(f"sqlite:///{hub.course}/var/gradebook.db") as gradebook:
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


def kit_in_home(hub: CourseHub, student: str) -> None:
    """At first login a student's home holds the class kit, file for file, and nothing else
    of the course; the kit's lessons are those of the checkout's HEAD."""
    kit, home = hub.class_dir / "kit", hub.home(student)
    kit_files = {p.relative_to(kit) for p in kit.rglob("*") if p.is_file()}
    missing = [str(p) for p in sorted(kit_files) if (home / p).read_bytes() != (kit / p).read_bytes()]
    assert not missing, f"{student}'s home lacks or differs in {missing[:5]}"
    visible = {p.name for p in home.iterdir() if not p.name.startswith(".")}
    assert visible == {p.parts[0] for p in kit_files if not p.parts[0].startswith(".")}, visible
    listing = subprocess.run(["git", "-c", f"safe.directory={hub.course}", "-C", str(hub.course),
                              "ls-files", "lessons/*.ipynb"], capture_output=True, text=True,
                             check=True).stdout.split()
    assert sorted(p.name for p in (home / "lessons").glob("*.ipynb")) == sorted(
        Path(name).name for name in listing), listing


def instructor_files_over_http(lab: Lab, hub: CourseHub, student: str) -> None:
    """Through the hub with the student's login: their own server does not step outside
    their home, the instructor's server and the hub's admin API refuse them."""
    escape = "../" * 8 + str(hub.course).lstrip("/")
    notebook = f"solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
    attempts = {
        "own server, contents ../": f"user/{student}/api/contents/{urllib.parse.quote(escape)}/solutions",
        "own server, files ../": f"user/{student}/files/{urllib.parse.quote(escape)}/{notebook}",
        "own server, files %2e%2e": f"user/{student}/files/%2e%2e/%2e%2e/{hub.course}/{notebook}",
        "instructor's server, contents": f"user/{hub.instructor}/api/contents/{notebook}",
        "instructor's server, formgrader": f"user/{hub.instructor}/formgrader/api/assignments",
        "hub admin API": f"hub/api/users/{hub.instructor}",
    }
    for name, path in attempts.items():
        reply = lab.page.request.get(hub.url(path))
        body = reply.text()
        assert reply.status in (400, 403, 404), f"{name}: {reply.status} {body[:300]}"
        assert "BEGIN SOLUTION" not in body and '"cells"' not in body, f"{name}: {body[:300]}"


def formgrader_refuses_its_own_grading(lab: Lab, hub: CourseHub, student: str) -> None:
    """Formgrader's Generate/Release/Collect/feedback columns are hidden, and its Autograde
    (students' code unsandboxed, bypassing `course grade`) is refused with what to run."""
    frame = lab.page.frame_locator(".jp-MainAreaWidget:not(.lm-mod-hidden) iframe").first
    frame.locator('a[href*="manage_assignments"]').first.click()
    expect(frame.locator("#main-table tr", has_text=ASSIGNMENT).first).to_be_visible(timeout=30_000)
    expect(frame.locator("thead th", has_text=re.compile(r"^\s*Edit\s*$"))).to_be_visible()
    for header in ("Generate", "Release", "Collect", "Generate Feedback", "Release Feedback"):
        expect(frame.locator("thead th", has_text=re.compile(rf"^\s*{header}\s*$"))).to_be_hidden()
    expect(frame.locator("#main-table td.assign").first).to_be_hidden()
    lab.screenshot("instructor_formgrader_assignments")
    reply = lab.page.request.post(
        hub.url(f"user/{hub.instructor}/formgrader/api/submission/{ASSIGNMENT}/{student}/autograde"))
    assert reply.status == 403, f"formgrader's autograde answered {reply.status}: {reply.text()[:300]}"
    assert f"course grade {ASSIGNMENT} --student {student}" in reply.json()["error"], reply.text()
