"""The instructor's JupyterLab on the course hub: course/ configures it as for `make lab`
(the hub puts this folder before it on JUPYTER_CONFIG_PATH); only this differs.

JupyterHub forbids framing single-user pages (frame-ancestors 'none') unless the server
sets its own policy, and JupyterLab shows Formgrader in a frame of the same server: allow
frames from the same origin, which is Jupyter Server's own default.
"""
import os

c = get_config()  # noqa: F821  (injected by Jupyter)

c.ServerApp.tornado_settings = {"headers": {"Content-Security-Policy": "frame-ancestors 'self'"}}

# Terminals: bash with the course's own startup file (course/hub/student/terminal.bashrc):
# a login shell's setup, then `course` and the class environment first on PATH again
# (Jupyter's default, `bash -l`, lets Debian's /etc/profile reset PATH: no `course` at all).
if os.environ.get("COURSE_TERMINAL_RC"):
    c.ServerApp.terminado_settings = {"shell_command": ["/bin/bash", "--rcfile", os.environ["COURSE_TERMINAL_RC"], "-i"]}
