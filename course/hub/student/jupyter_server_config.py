"""A student's JupyterLab on the course hub: their home, the Assignment List, Validate.

The hub puts this folder on JUPYTER_CONFIG_PATH for every student; nbgrader's extensions
read nbgrader_config.py beside it. Formgrader and the instructor's tools are off (and
hidden from the menu by labconfig/page_config.json).
"""
import os

c = get_config()  # noqa: F821  (injected by Jupyter)

c.ServerApp.root_dir = os.path.expanduser("~")
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.LabApp.news_url = None
c.LabApp.extension_manager = "readonly"
c.ServerApp.jpserver_extensions.update(
    {
        "nbgrader.server_extensions.assignment_list": True,
        "nbgrader.server_extensions.validate_assignment": True,
        "nbgrader.server_extensions.formgrader": False,
        "nbgrader.server_extensions.course_list": False,
        # the Validate button gives the grader's judgement, as `course validate` does (the
        # student's copy of the kit, first on their PYTHONPATH, holds course/validate_button.py)
        "course.validate_button": True,
    }
)

# Terminals: bash with the course's own startup file (course/hub/student/terminal.bashrc):
# a login shell's setup, then `course` and the class environment first on PATH again
# (Jupyter's default, `bash -l`, lets Debian's /etc/profile reset PATH: no `course` at all).
if os.environ.get("COURSE_TERMINAL_RC"):
    c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash", "--rcfile", os.environ["COURSE_TERMINAL_RC"], "-i"]}
