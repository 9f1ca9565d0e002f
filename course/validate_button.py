"""JupyterLab's Validate button gives the grader's judgement, the one `course validate` prints.

nbgrader's Validate button (the notebook toolbar's and the Assignment List's) posts to
``/assignments/validate``, whose handler runs nbgrader's Validator in a Jupyter kernel:
torch importable in every exercise, no hidden-case rule, no probe messages. A notebook could
pass it and lose points in grading (an exercise graded without torch), or fail it for a
reason grading does not have. This Jupyter server extension answers that route instead with
:func:`course.self_check.judge_as_graded`, the code behind `course validate`, and returns its
verdicts in the form nbgrader's lab extension shows: one "The following cell failed" entry
per failing test (its id and points, then grading's message), or its "Success!" dialog.

Where the grader's code cannot run (not Linux) it leaves the request to nbgrader's handler,
as `course validate` falls back to nbgrader's Validator there. Enabled in both
jupyter_server_config.py files (the course's `make lab`, and the student kit's).
"""
from __future__ import annotations

import asyncio
import html
import io
import threading
from pathlib import Path

from jupyter_server.utils import url_path_join
from nbgrader.server_extensions.validate_assignment.handlers import ValidateAssignmentHandler
from tornado import web

from course.self_check import EXIT_PASSED, EXIT_UNUSABLE, grader_available, judge_as_graded

# One judgement at a time: the validator's sandboxes are started once and reused.
_one_at_a_time = threading.Lock()


def lab_answer(report) -> dict:
    """A GraderReport in the shape nbgrader's lab extension reads from /assignments/validate
    (its dialog puts ``error`` in as HTML, so the grader's text is escaped)."""
    if report.status == EXIT_UNUSABLE:
        return {"success": False, "value": f"course validate: {report.problem}"}
    if report.status == EXIT_PASSED:
        return {"success": True, "value": {}}
    return {"success": True, "value": {"failed": [
        {"source": what, "error": html.escape(why), "raw_error": why} for what, why in report.failures]}}


class GraderValidateHandler(ValidateAssignmentHandler):
    """nbgrader's route and login rules; the grader's judgement instead of its Validator's."""

    def judge(self, path: str) -> dict:
        if not grader_available():
            return super().validate_notebook(path)
        root = Path(self.root_dir).resolve()
        target = (root / path).resolve()
        if not target.is_relative_to(root):
            raise web.HTTPError(403, "Access denied: path outside allowed directory")
        if not target.is_file():
            return {"success": False, "value": f"course validate: no such notebook: {path}"}
        with _one_at_a_time:
            report = judge_as_graded(target, path, io.StringIO())
        return lab_answer(report)

    @web.authenticated
    async def post(self):
        try:
            path = self.get_argument("path")
        except web.MissingArgumentError:
            path = (self.get_json_body() or {}).get("path")
        if not isinstance(path, str) or not path:
            raise web.HTTPError(400, "no notebook path given")
        # a validation takes seconds: off the server's event loop, so other requests go on
        answer = await asyncio.get_running_loop().run_in_executor(None, self.judge, path)
        self.finish(answer)


def add_handlers_first(server_app, routes) -> None:
    """Register ``routes`` ahead of every extension's: add_handlers puts a rule just before
    the server's own catch-all, and extensions load in name order, so nbgrader's handlers
    for the same paths would otherwise answer first."""
    rules = server_app.web_app.default_router.rules
    server_app.web_app.add_handlers(".*$", routes)
    rules.insert(0, rules.pop(-2))


def _jupyter_server_extension_points():
    return [{"module": "course.validate_button"}]


def _load_jupyter_server_extension(server_app):
    base = server_app.web_app.settings["base_url"]
    add_handlers_first(server_app, [(url_path_join(base, "/assignments/validate"), GraderValidateHandler)])
    server_app.log.info("course: the Validate button runs the grader's judgement (course validate)")
