"""JupyterHub for the course: PAM logins, one JupyterLab per Unix user, nbgrader for all.

Started by `course hub start` (or `make hub`), which writes the settings this file reads
(course/hub.py's HubSettings, as JSON in the hub's root-only state folder) and puts their
path in COURSE_HUB_SETTINGS. Run as root: the hub checks passwords with PAM and starts each
person's JupyterLab as their own Unix user.
"""
import os
from pathlib import Path

# `course hub start` puts the course root on PYTHONPATH: this is the served course's code.
from course.hub import HubSettings, server_environment

c = get_config()  # noqa: F821 (provided by traitlets when it runs this file)

settings = HubSettings.load(os.environ["COURSE_HUB_SETTINGS"])
state = Path(settings.state_dir)

# -- where it listens, and its own state (root only) --------------------------------------
c.JupyterHub.bind_url = settings.url
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = settings.hub_port
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
c.ConfigurableHTTPProxy.command = [settings.proxy]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{settings.proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = str(state / "proxy.pid")

# -- who may log in -------------------------------------------------------------------------
# PAM checks the Unix password (`course roster import` sets one per student). Sessions are
# not opened: on a container or a machine without logind, pam_systemd would refuse them, and
# the course needs authentication only.
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.open_sessions = False
c.Authenticator.allowed_groups = {settings.students_group}
c.Authenticator.allowed_users = {settings.instructor}
c.Authenticator.admin_users = {settings.instructor}

# -- each person's JupyterLab, as their own Unix user --------------------------------------
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [settings.python, "-m", "jupyterhub.singleuser"]
c.Spawner.args = list(settings.singleuser_args)
c.Spawner.default_url = "/lab"
c.Spawner.disable_user_config = True  # ~/.jupyter cannot switch nbgrader's settings
# A class logs in at once on a small machine: give a server time to start.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120


def course_environment(spawner):
    """Students: their home as the root, the Assignment List on the shared exchange
    (course/hub/student/). The instructor: the course repository with Formgrader, exactly
    as `make lab` configures it (course/), with the exchange moved to the shared one."""
    spawner.environment.update(
        server_environment(settings, instructor=spawner.user.name == settings.instructor))


c.Spawner.pre_spawn_hook = course_environment
