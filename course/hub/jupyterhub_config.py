"""JupyterHub for the course: PAM logins, one JupyterLab per Unix user, nbgrader for all.

Started by `course hub start` (or `make hub`), which writes the settings this file reads
(course/hub.py's HubSettings, as JSON in the hub's root-only state folder) and puts their
path in COURSE_HUB_SETTINGS. Run as root: the hub checks passwords with PAM and starts each
person's JupyterLab as their own Unix user.
"""
import asyncio
import os
import pwd
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
# Everyone's server runs the class install's Python (readable by all), never the checkout's.
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [settings.python, "-m", "jupyterhub.singleuser"]
# Nothing of the hub's own environment (its PYTHONPATH is the private checkout) reaches
# people's servers: server_environment() sets what they run with.
c.Spawner.env_keep = ["JUPYTERHUB_SINGLEUSER_APP"]
c.Spawner.args = list(settings.singleuser_args)
c.Spawner.default_url = "/lab"
# A student's ~/.jupyter cannot switch nbgrader's settings. Not for the instructor (set in
# the hook below): that switch drops every config folder inside the person's home, and the
# instructor's checkout, whose course/ configures their server, usually lives there.
c.Spawner.disable_user_config = True
# A class logs in at once on a small machine: give a server time to start.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120


async def deliver_kit(spawner, home: str) -> None:
    """The student kit into the student's home, run as the student (course/hub/deliver_kit.py):
    all of it at the first login, then only files the kit gained since."""
    account = pwd.getpwnam(spawner.user.name)
    process = await asyncio.create_subprocess_exec(
        settings.python, "-I", settings.deliver_script, settings.kit, home,
        user=account.pw_uid, group=account.pw_gid,
        extra_groups=os.getgrouplist(account.pw_name, account.pw_gid),
        env={"HOME": home, "LANG": "C.UTF-8", "PATH": "/usr/bin:/bin"}, cwd="/",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    output, _ = await asyncio.wait_for(process.communicate(), timeout=300)
    text = output.decode(errors="replace").strip()
    # A failed copy must not keep the student out of their server: logged, and retried at
    # their next start.
    (spawner.log.info if process.returncode == 0 else spawner.log.warning)(
        "%s: %s", spawner.user.name, text or f"deliver_kit exited {process.returncode}")


async def course_environment(spawner):
    """Students: the kit in their home, their home as the root, the Assignment List on the
    shared exchange (course/hub/student/, published in the class install). The instructor:
    the checkout with Formgrader, as `make lab` configures it (course/)."""
    instructor = spawner.user.name == settings.instructor
    home = pwd.getpwnam(spawner.user.name).pw_dir
    spawner.disable_user_config = not instructor
    if not instructor:
        await deliver_kit(spawner, home)
    spawner.environment.update(server_environment(settings, instructor=instructor, home=home))


c.Spawner.pre_spawn_hook = course_environment
