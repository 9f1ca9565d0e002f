"""Jupyter server settings for `make lab`: this folder, nbgrader's student tools, no pop-ups.

`make lab` puts course/ on JUPYTER_CONFIG_PATH, so Jupyter loads this file and nbgrader's
lab extensions load course/nbgrader_config.py; course/labconfig/page_config.json hides the
instructor's menus (Formgrader, Course List, Create Assignment).
"""
from pathlib import Path

c = get_config()  # noqa: F821  (injected by Jupyter)

c.ServerApp.root_dir = str(Path(__file__).resolve().parent.parent)
c.ServerApp.open_browser = False

# Nothing is installed from the UI, and nothing reaches out to the network behind your back.
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.LabApp.news_url = None
c.LabApp.extension_manager = "readonly"

# A student fetches, validates and submits; grading is the instructor's.
c.ServerApp.jpserver_extensions.update(
    {
        "nbgrader.server_extensions.assignment_list": True,
        "nbgrader.server_extensions.validate_assignment": True,
        "nbgrader.server_extensions.formgrader": False,
        "nbgrader.server_extensions.course_list": False,
        # the Validate button gives the grader's judgement, as `course validate` does
        "course.validate_button": True,
    }
)
