"""Jupyter server settings for `make lab`: the course repository, nbgrader on, no pop-ups.

`make lab` puts this folder (course/) on JUPYTER_CONFIG_PATH, so Jupyter loads this file,
and nbgrader's lab extensions (Assignment List, Validate, Formgrader) load
course/nbgrader_config.py from the same path: one course definition for the CLI and the UI.
"""
from pathlib import Path

c = get_config()  # noqa: F821  (injected by Jupyter)

COURSE_DIR = Path(__file__).resolve().parent
REPO_ROOT = COURSE_DIR.parent

# Students see lessons/ and assignments/ at the top of the file browser; nbgrader's
# formgrader insists that the course root lies inside the server root.
c.ServerApp.root_dir = str(REPO_ROOT)
c.ServerApp.open_browser = False

# Every JupyterLab extension the course needs ships with the venv; nothing is installed
# from the UI, and nothing reaches out to the network behind the student's back.
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.LabApp.news_url = None
c.LabApp.extension_manager = "readonly"

# nbgrader's extensions are enabled by the venv's jupyter_server_config.d/nbgrader.json;
# saying so here as well keeps `make lab` working if that file is missing.
c.ServerApp.jpserver_extensions.update(
    {
        "nbgrader.server_extensions.assignment_list": True,
        "nbgrader.server_extensions.validate_assignment": True,
        "nbgrader.server_extensions.formgrader": True,
        "nbgrader.server_extensions.course_list": True,
        # formgrader's own generate/release/collect/autograde/feedback buttons would bypass
        # the course's commands (its Autograde runs students' code unsandboxed): refused
        "course.formgrader_guard": True,
        # the Validate button gives the grader's judgement, as `course validate` does
        "course.validate_button": True,
    }
)
