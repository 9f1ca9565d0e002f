"""`course hub start|stop|status`: the course server for a class on one machine.

JupyterHub (configured by course/hub/jupyterhub_config.py) behind configurable-http-proxy,
PAM logins for real Unix users (`course roster import` creates the students), and one
JupyterLab per person started as that person's Unix user (LocalProcessSpawner).

Students get the course by allow-list: `course hub start` publishes a class install
(course/hub_install.py, default /srv/course: the student kit of the checkout's git HEAD, a
Python environment, the students' settings), and that is all of the course they can read.
The instructor's checkout must be private: the hub refuses to start while students could
enter it (git history, settings, solutions, gradebook, anything added later stay unread).

- students: their home as the file browser's root, a copy of the kit there from their first
  login on (course/hub/deliver_kit.py, run as them), the Assignment List and Validate, and
  the settings in course/hub/student/;
- the instructor (the hub's admin, the Unix owner of the course folder): the checkout with
  Formgrader, configured by course/ as for `make lab` (plus course/hub/instructor/);
- everyone: the class environment's Python, and nbgrader's exchange at a system path
  (default /srv/nbgrader/exchange), world-writable with the sticky bit, as nbgrader expects.

The hub runs as root (it must start servers as other users). Its state (database, cookie
secret, pid, log, the settings below as JSON) lives in a root-only folder, default
/srv/nbgrader/hub.
"""
from __future__ import annotations

import grp
import json
import os
import pwd
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from course.hub_install import DEFAULT_CLASS_DIR, folder_barring, folder_shutting_out
from course.roster import STUDENTS_GROUP
from coursebase.model import Course
from coursebase.paths import REPO

# `make hub-proxy` installs configurable-http-proxy here from course/hub/package-lock.json.
LOCAL_PROXY = REPO / "course" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
DEFAULT_STATE = Path("/srv/nbgrader/hub")
DEFAULT_EXCHANGE = Path("/srv/nbgrader/exchange")
SETTINGS_ENV = "COURSE_HUB_SETTINGS"
# Ours, not JupyterHub's own pid file: JupyterHub deletes that one when shutdown *begins*.
PID_FILE = "course-hub.pid"


class HubError(RuntimeError):
    """Why the hub cannot start or stop; worded for the instructor at the terminal."""


@dataclass
class HubSettings:
    course_root: str
    instructor: str
    state_dir: str = str(DEFAULT_STATE)
    exchange: str = str(DEFAULT_EXCHANGE)
    students_group: str = STUDENTS_GROUP
    ip: str = "127.0.0.1"
    port: int = 8000
    hub_port: int = 0        # the hub's own API and the proxy's, on loopback: free ports
    proxy_api_port: int = 0  # picked at start, so two hubs (a class, a test) never clash
    proxy: str = ""
    class_dir: str = str(DEFAULT_CLASS_DIR)  # what students can read (course/hub_install.py)
    # filled in by `course hub start` from the class install it publishes
    environment: str = ""                   # the Python environment of everyone's server
    kit: str = ""                           # the student kit, copied into students' homes
    student_config: str = ""
    deliver_script: str = ""
    course_id: str = ""
    # extra arguments for every JupyterLab (tests expose the app to the browser with them)
    singleuser_args: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.port}"

    @property
    def python(self) -> str:
        return str(Path(self.environment) / "bin" / "python3")

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path | str) -> "HubSettings":
        known = {item.name for item in fields(cls)}  # a hub started by an older version
        return cls(**{key: value for key, value in json.loads(Path(path).read_text()).items()
                      if key in known})


def server_environment(settings: "HubSettings", instructor: bool, home: str = "") -> dict[str, str]:
    """What a person's JupyterLab (and their kernels and terminals) runs with: the class
    environment, the shared exchange, and their settings. A student: the class install's
    student settings, and their home first on sys.path (their copy of the kit: reftorch and
    `course validate`; the class kit is on the environment's path behind it). The
    instructor: the checkout (code, and course/ configuring Jupyter as for `make lab`)."""
    environment = Path(settings.environment)
    jupyter = environment / "share" / "jupyter"
    if instructor:
        course = Path(settings.course_root) / "course"
        python_path, config = settings.course_root, [course / "hub" / "instructor", course]
    else:
        python_path, config = home, [Path(settings.student_config)]
    return {
        "PATH": f"{environment / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": python_path,
        # terminals run course/hub/student/terminal.bashrc, which puts these back after the
        # login shell's /etc/profile has reset PATH
        "COURSE_PATH": str(environment / "bin"),
        "COURSE_PYTHONPATH": python_path,
        "COURSE_TERMINAL_RC": str(Path(settings.student_config) / "terminal.bashrc"),
        "JUPYTER_PATH": str(jupyter),
        "JUPYTERLAB_DIR": str(jupyter / "lab"),
        "JUPYTER_CONFIG_PATH": os.pathsep.join(map(str, [*config, environment / "etc" / "jupyter"])),
        "COURSE_ID": settings.course_id,
        "COURSE_EXCHANGE": settings.exchange,
    }


def _state(settings: HubSettings, name: str) -> Path:
    return Path(settings.state_dir) / name


def find_proxy(explicit: str = "") -> str:
    """configurable-http-proxy from npm: the given path, the course's local install, or PATH."""
    for candidate in (explicit, str(LOCAL_PROXY), shutil.which("configurable-http-proxy") or ""):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    raise HubError("configurable-http-proxy is not installed: run `make hub-proxy` (npm "
                   "installs the locked version into course/hub/node_modules/)")


def running_pid(settings: HubSettings) -> int | None:
    """The pid in the state folder if that process is still a running JupyterHub."""
    import psutil

    try:
        process = psutil.Process(int(_state(settings, PID_FILE).read_text().strip()))
        if process.status() == psutil.STATUS_ZOMBIE:
            return None
        return process.pid if any("jupyterhub" in part for part in process.cmdline()) else None
    except (OSError, ValueError, psutil.Error):  # no pid file, no such process, or not ours to read
        return None


def _port_in_use(ip: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((ip, port))
        except OSError:
            return True
    return False


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def prepare_exchange(exchange: Path) -> None:
    """nbgrader's exchange root: world-writable with the sticky bit (only the owner of a
    course folder inside may rename or delete it). nbgrader itself then makes each course's
    inbound write-only for students (they cannot list it) and feedback not listable."""
    exchange.mkdir(parents=True, exist_ok=True)
    exchange.chmod(0o1777)


def student_gids(group: str) -> set[int]:
    """Every group a student is in (the students group, each student's primary group and
    their other groups): a folder open to one of these is open to a student."""
    try:
        students_group = grp.getgrnam(group)
    except KeyError:
        return set()  # no roster imported yet: no students
    names = set(students_group.gr_mem) | {entry.pw_name for entry in pwd.getpwall()
                                          if entry.pw_gid == students_group.gr_gid}
    gids = {students_group.gr_gid}
    for name in names:
        gids.update(os.getgrouplist(name, pwd.getpwnam(name).pw_gid))
    return gids


def check_checkout_private(settings: HubSettings) -> None:
    """Students must not be able to enter the instructor's checkout at all: not its git
    history, settings, solutions and gradebook, nor whatever is added to it later."""
    root = Path(settings.course_root)
    gids = student_gids(settings.students_group)
    if folder_shutting_out(root, gids) is None:
        mode = oct(root.stat().st_mode & 0o777)[2:]
        raise HubError(
            f"students could read the course checkout {root} (mode {mode}, and every folder "
            "above it is open to other users): its git history holds the solutions and "
            f"hidden tests. Make it private first: chmod 700 {shlex.quote(str(root))} (or its "
            "parent). Students never need it: they get the student kit the hub publishes in "
            f"{settings.class_dir}")
    for name, path in (("--class-dir", settings.class_dir), ("--exchange", settings.exchange)):
        path = Path(path).resolve()
        if path == root.resolve() or root.resolve() in path.parents:
            raise HubError(f"{name} {path} is inside the private course checkout {root}: "
                           "students must reach it; give a folder outside it")
        existing = next(p for p in (path, *path.parents) if p.exists())
        closed = folder_barring(existing, gids)
        if closed is not None:
            raise HubError(f"{name} {path}: students cannot enter {closed} (mode "
                           f"{oct(closed.stat().st_mode & 0o777)[2:]}); choose a folder that "
                           "every user can reach, such as the default")


def check_instructor(settings: HubSettings) -> None:
    try:
        account = pwd.getpwnam(settings.instructor)
    except KeyError:
        raise HubError(f"the instructor {settings.instructor!r} is not a Unix user; create it "
                       "(useradd) or name another with --instructor") from None
    if account.pw_uid == 0:
        raise HubError("the instructor must be an ordinary Unix user, not root: JupyterHub "
                       "will not start a server as root; chown the course folder to the "
                       "instructor's account or name one with --instructor")
    owner = Path(settings.course_root, "course").stat().st_uid
    if owner != account.pw_uid:
        raise HubError(f"the course folder {settings.course_root}/course belongs to uid "
                       f"{owner}, not to the instructor {settings.instructor!r}: formgrader "
                       "and `course grade` write the course's var/ there as the instructor "
                       f"(chown -R {settings.instructor} {settings.course_root})")


def start(settings: HubSettings, timeout: float = 60.0, say=lambda line: None) -> int:
    """Publish the class install, start the hub in the background and wait until it
    answers; returns its pid. ``say`` gets a line for each step an instructor waits on."""
    if os.geteuid() != 0:
        raise HubError("the hub must run as root: it logs people in with PAM and starts each "
                       "JupyterLab as that person's Unix user (run `sudo make hub`)")
    pid = running_pid(settings)
    if pid:
        raise HubError(f"the course hub is already running (pid {pid}, {settings.url}); it "
                       "keeps running. `course hub stop` first to restart it")
    if _port_in_use(settings.ip, settings.port):
        raise HubError(f"port {settings.port} on {settings.ip} is already in use by another "
                       "program; choose another with --port")
    settings.proxy = find_proxy(settings.proxy)
    check_instructor(settings)
    check_checkout_private(settings)
    # Every check passed: from here on the hub changes things on the machine.
    from .hub_install import PublishError, base_python, publish
    try:
        say(f"publishing the class install in {settings.class_dir} (the student kit of git "
            f"HEAD; the Python environment from {base_python()} and the packages of "
            f"{sys.prefix}, reused while they do not change)")
        install = publish(Path(settings.course_root), Path(settings.class_dir))
    except PublishError as error:
        raise HubError(str(error)) from None
    from .lessons import LESSON_GLOB
    lessons = len(list(install.kit.glob(f"lessons/{LESSON_GLOB}")))
    assignments = len(list(install.kit.glob("assignments/*/*.ipynb")))
    say(f"students get the kit of commit {install.commit[:12]} ({lessons} lessons, {assignments} "
        "assignments) in their home at first login, and the files it gains later")
    if install.uncommitted:
        say(f"not published: {len(install.uncommitted)} uncommitted change(s) in the checkout "
            f"({', '.join(install.uncommitted[:5])}{' ...' if len(install.uncommitted) > 5 else ''})")
    settings.environment, settings.kit = str(install.environment), str(install.kit)
    settings.student_config, settings.deliver_script = (str(install.student_config),
                                                        str(install.deliver_script))
    course = Course.load(settings.course_root)
    settings.course_id = course.course_id
    course.make_state_root()   # the instructor's Formgrader creates its gradebook there
    settings.hub_port, settings.proxy_api_port = _free_port(), _free_port()
    state = Path(settings.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o700)  # cookie secret, database and passwords: root only
    prepare_exchange(Path(settings.exchange))
    settings_file = _state(settings, "settings.json")
    settings.save(settings_file)
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTER")}
    env[SETTINGS_ENV] = str(settings_file)
    env["PYTHONPATH"] = settings.course_root
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "/usr/bin:/bin")
    log_path = _state(settings, "jupyterhub.log")
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(hub_config_file(settings))],
            cwd=state, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    _state(settings, PID_FILE).write_text(f"{process.pid}\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise HubError(f"JupyterHub exited with status {process.returncode}; its log "
                           f"{log_path} ends with:\n{_tail(log_path)}")
        try:
            with urllib.request.urlopen(f"{settings.url}/hub/api/", timeout=2) as reply:
                if reply.status == 200:
                    return process.pid
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    stop(settings)
    raise HubError(f"JupyterHub did not answer within {timeout:.0f}s; its log {log_path} "
                   f"ends with:\n{_tail(log_path)}")


def publish_again(settings: HubSettings) -> int:
    """The weekly step on a running hub: the class kit of the checkout's HEAD, with the
    assignments released by now, replaces the published one; each student gets the files it
    gained at their next server start, and nothing they have is touched (deliver_kit.py).
    The Python environment stays the one the running servers use."""
    from .hub_install import PublishError, publish
    if os.geteuid() != 0:
        raise HubError("publishing the class install needs root (sudo .venv/bin/course hub publish)")
    if not running_pid(settings) or not settings.environment:
        raise HubError("the course hub is not running: `course hub start` publishes the kit")
    try:
        install = publish(Path(settings.course_root), Path(settings.class_dir), Path(settings.environment))
    except PublishError as error:
        raise HubError(str(error)) from None
    released = sorted(p.name for p in (install.kit / "assignments").glob("*") if p.is_dir())
    print(f"published the kit of commit {install.commit[:12]} in {install.kit} (assignments: "
          f"{', '.join(released) or 'none yet'}); students get what is new at their next server start "
          "(File > Hub Control Panel > Stop My Server, then Start), and nothing of theirs is touched")
    return 0


def hub_config_file(settings: HubSettings) -> Path:
    """The jupyterhub_config.py of the course being served (its copy, in tests)."""
    return Path(settings.course_root) / "course" / "hub" / "jupyterhub_config.py"


def stop(settings: HubSettings, timeout: float = 30.0) -> bool:
    """Stop the hub (it stops its proxy and everyone's JupyterLab); False if none ran."""
    pid = running_pid(settings)
    if not pid:
        return False
    os.kill(pid, signal.SIGTERM)  # JupyterHub stops everyone's servers and its proxy
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and running_pid(settings):
        time.sleep(0.2)
    if running_pid(settings):
        os.killpg(pid, signal.SIGKILL)  # the hub and its proxy share the session we gave it
    _state(settings, PID_FILE).unlink(missing_ok=True)
    return True


def _tail(path: Path, size: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-size:]
    except OSError:
        return "(no log)"


# -- command line -------------------------------------------------------------------------

def _settings(args) -> HubSettings:
    root = Path(args.root or REPO).resolve()
    saved = Path(args.state_dir) / "settings.json"
    if args.hub_command != "start" and saved.exists():
        return HubSettings.load(saved)
    instructor = args.instructor or pwd.getpwuid((root / "course").stat().st_uid).pw_name
    return HubSettings(course_root=str(root), instructor=instructor, state_dir=args.state_dir,
                       exchange=args.exchange, class_dir=args.class_dir,
                       students_group=args.group, ip=args.ip,
                       port=args.port, proxy=args.proxy or "",
                       singleuser_args=list(args.lab_arg or []))


def cmd_hub(args) -> int:
    settings = _settings(args)
    try:
        if args.hub_command == "start":
            pid = start(settings, say=print)
            print(f"course hub running at {settings.url} (pid {pid}); instructor "
                  f"{settings.instructor!r}, students: Unix group {settings.students_group!r}, "
                  f"exchange {settings.exchange}; log {settings.state_dir}/jupyterhub.log")
        elif args.hub_command == "stop":
            print("course hub stopped" if stop(settings) else "course hub was not running")
        elif args.hub_command == "publish":
            return publish_again(settings)
        else:
            pid = running_pid(settings)
            print(f"course hub running at {settings.url} (pid {pid})" if pid
                  else "course hub is not running")
            return 0 if pid else 3
    except HubError as error:
        print(f"course hub {args.hub_command}: {error}", file=sys.stderr)
        return 1
    return 0


def register(subparsers) -> None:
    hub = subparsers.add_parser("hub", help="the course server for a class: JupyterHub with "
                                "the roster's Unix users (start, stop, status)")
    hub.add_argument("hub_command", choices=("start", "stop", "status", "publish"),
                     help="publish: the kit of git HEAD again (this week's release), hub running")
    hub.add_argument("--root", help="course root (default: this repository)")
    hub.add_argument("--state-dir", default=str(DEFAULT_STATE),
                     help=f"hub database, secrets, pid and log (default {DEFAULT_STATE})")
    hub.add_argument("--exchange", default=str(DEFAULT_EXCHANGE),
                     help=f"nbgrader exchange shared by the class (default {DEFAULT_EXCHANGE})")
    hub.add_argument("--class-dir", default=str(DEFAULT_CLASS_DIR),
                     help="what students can read, published at start: the student kit of git "
                     f"HEAD and the Python environment of everyone's JupyterLab (default {DEFAULT_CLASS_DIR})")
    hub.add_argument("--instructor", help="Unix user of the instructor, the hub's admin "
                     "(default: the owner of the course folder)")
    hub.add_argument("--group", default=STUDENTS_GROUP,
                     help="Unix group whose members may log in as students "
                     f"(default {STUDENTS_GROUP})")
    hub.add_argument("--ip", default="127.0.0.1", help="address to listen on (default 127.0.0.1; "
                     "0.0.0.0 for the class network, behind HTTPS)")
    hub.add_argument("--port", type=int, default=8000)
    hub.add_argument("--proxy",
                     help="path of configurable-http-proxy (default: `make hub-proxy`'s)")
    hub.add_argument("--lab-arg", action="append", metavar="ARG",
                     help="an extra command-line argument for everyone's JupyterLab (repeatable)")
    hub.set_defaults(func=cmd_hub)
