"""Formgrader without the buttons that bypass the course's own commands.

nbgrader's formgrader can generate, release, collect, autograde and write feedback by
itself. Each of those skips what the course's command does around it: its Autograde runs
students' code unsandboxed, as the instructor (`course grade` runs it in the sandbox, with
the probes); its Generate and Release skip `course release`'s checks; its Collect skips the
roster. This Jupyter server extension refuses those API calls (HTTP 403, naming the command
to run instead) and hides their columns. Manual grading, comments, students and the
gradebook views are formgrader's own and stay.

Enabled in course/jupyter_server_config.py (`make lab`, and the instructor's JupyterLab on
the course hub, which loads that file too).
"""
from __future__ import annotations

import json
from pathlib import Path

from jupyter_server.utils import url_path_join
from tornado import web

from course.validate_button import add_handlers_first

# formgrader's API route, its button, the course's command it would bypass, what to run
# instead ({0}: the assignment, {1}: the student)
REFUSED = (
    (r"/formgrader/api/assignment/([^/]+)/assign", "Generate", "course release", "course release {0}"),
    (r"/formgrader/api/assignment/([^/]+)/release", "Release", "course release",
     "course release {0} --exchange"),
    (r"/formgrader/api/assignment/([^/]+)/unrelease", "Release", "course release",
     "course release {0} --exchange"),
    (r"/formgrader/api/assignment/([^/]+)/collect", "Collect", "course collect", "course collect {0}"),
    (r"/formgrader/api/assignment/([^/]+)/generate_feedback", "Generate Feedback", "course feedback",
     "course feedback {0}"),
    (r"/formgrader/api/assignment/([^/]+)/release_feedback", "Release Feedback", "course feedback",
     "course feedback {0}"),
    (r"/formgrader/api/assignment/([^/]+)/([^/]+)/generate_feedback", "Generate Feedback",
     "course feedback", "course feedback {0}"),
    (r"/formgrader/api/assignment/([^/]+)/([^/]+)/release_feedback", "Release Feedback",
     "course feedback", "course feedback {0}"),
    (r"/formgrader/api/submission/([^/]+)/([^/]+)/autograde", "Autograde", "course grade",
     "course grade {0} --student {1}"),
)

# The refused buttons' columns: Manage Assignments (Generate, Release, Collect, Generate and
# Release Feedback) and an assignment's submissions (Autograde, Generate and Release Feedback).
HIDDEN_COLUMNS = """
/* course/formgrader_guard.py: these actions are the course's commands, run in a terminal */
#main-table td.assign, #main-table td.release, #main-table td.collect,
#main-table td.autograde, #main-table td.generate-feedback, #main-table td.release-feedback,
th.course-refused { display: none; }
"""
# formgrader's header cells have no class of their own: mark the refused ones by their text.
MARK_HEADERS = """
document.addEventListener("DOMContentLoaded", function () {
  var refused = %s;
  document.querySelectorAll("thead th").forEach(function (th) {
    if (refused.indexOf(th.textContent.trim()) >= 0) th.classList.add("course-refused");
  });
});
"""


class RefusedAction(web.RequestHandler):
    """Every method, with or without a login or XSRF token: 403 and what to run instead."""

    def initialize(self, button: str, bypassed: str, instead: str):
        self.button, self.bypassed, self.instead = button, bypassed, instead

    def check_xsrf_cookie(self):
        pass  # nothing is done, so there is nothing to forge

    def _refuse(self, *names: str):
        self.set_status(403)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps({
            "success": False,
            "error": f"{self.button} from formgrader is off in this course: it would bypass "
                     f"`{self.bypassed}`. Run `{self.instead.format(*names)}` in a terminal instead."}))

    get = post = put = delete = patch = _refuse


class StyleWithoutRefusedColumns(web.RequestHandler):
    """formgrader's own stylesheet, plus the rule that hides the refused columns."""

    def initialize(self, original: Path):
        self.original = original

    def get(self):
        self.set_header("Content-Type", "text/css")
        self.finish(self.original.read_text() + HIDDEN_COLUMNS)


class ScriptMarkingRefusedHeaders(web.RequestHandler):
    """formgrader's utils.js (loaded by every formgrader page), plus the header marking."""

    def initialize(self, original: Path):
        self.original = original

    def get(self):
        self.set_header("Content-Type", "application/javascript")
        buttons = sorted({button for _, button, _, _ in REFUSED})
        self.finish(self.original.read_text() + MARK_HEADERS % json.dumps(buttons))


def _jupyter_server_extension_points():
    return [{"module": "course.formgrader_guard"}]


def _load_jupyter_server_extension(server_app):
    from nbgrader.server_extensions.formgrader import handlers as formgrader

    static = Path(formgrader.static_path)
    base = server_app.web_app.settings["base_url"]
    routes = [(url_path_join(base, pattern), RefusedAction,
               {"button": button, "bypassed": bypassed, "instead": instead})
              for pattern, button, bypassed, instead in REFUSED]
    routes += [
        (url_path_join(base, "/formgrader/static/css/nbgrader.css"), StyleWithoutRefusedColumns,
         {"original": static / "css" / "nbgrader.css"}),
        (url_path_join(base, "/formgrader/static/js/utils.js"), ScriptMarkingRefusedHeaders,
         {"original": static / "js" / "utils.js"}),
    ]
    add_handlers_first(server_app, routes)
    server_app.log.info("course: formgrader's generate, release, collect, autograde and "
                        "feedback actions are off (the course's commands do them)")
