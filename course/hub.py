"""`course hub start|stop|status`: the course server for a class on one machine.

JupyterHub (configured by course/hub/jupyterhub_config.py) behind configurable-http-proxy,
PAM logins for real Unix users (`course roster import` creates the students), and one
JupyterLab per person started as that person's Unix user (LocalProcessSpawner):

- students get the Assignment List and Validate, their home as the file browser's root,
  and the course's nbgrader settings from course/hub/student/;
- the instructor (the hub's admin, the Unix owner of the course folder) gets the course
  repository with Formgrader, with the same course/ configuration as `make lab`;
- everyone shares nbgrader's exchange at a system path (default /srv/nbgrader/exchange),
  a world-writable folder with the sticky bit, as nbgrader's exchange expects.

The hub runs as root (it must start servers as other users). Its state (database, cookie
secret, pid, log, the settings below as JSON) lives in a root-only folder, default
/srv/nbgrader/hub.
"""
from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .roster import STUDENTS_GROUP

REPO = Path(__file__).resolve().parent.parent
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
    venv: str = sys.prefix                  # where the course's packages are installed
    python: str = ""                        # the interpreter people's servers run
    course_id: str = ""
    # extra arguments for every JupyterLab (tests expose the app to the browser with them)
    singleuser_args: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.ip}:{self.port}"

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")

    @classmethod
    def load(cls, path: Path | str) -> "HubSettings":
        return cls(**json.loads(Path(path).read_text()))


def _others_can_run(path: Path) -> bool:
    """Can a user other than the owner (a student) execute `path`? Every folder above it
    must be enterable by others."""
    path = path.resolve()
    if not path.stat().st_mode & 0o001:
        return False
    return all(parent.stat().st_mode & 0o001 for parent in path.parents)


def server_python(course_root: Path) -> str:
    """The interpreter for people's JupyterLab, kernels and `course` commands: the venv's
    own, unless others cannot run it (a pyenv under /root, as on the course's CI machine).
    Then a venv of the system Python of the same minor version is laid out at
    course/hub/python/ whose site-packages *is* the course venv's: the same wheels, and
    everything that reads sys.prefix (the grading sandbox, `jupyter`) finds them."""
    if _others_can_run(Path(sys.executable)):
        return sys.executable
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system = Path(f"/usr/bin/python{version}")
    if not system.exists():
        raise HubError(f"students cannot run {Path(sys.executable).resolve()} (a folder above "
                       f"it is private) and there is no /usr/bin/python{version}: create the "
                       "venv with a Python every user can run (PYTHON=/usr/bin/python3 make venv)")
    runtime = course_root / "course" / "hub" / "python"
    packages = runtime / "lib" / f"python{version}" / "site-packages"
    (runtime / "bin").mkdir(parents=True, exist_ok=True)
    packages.parent.mkdir(parents=True, exist_ok=True)
    (runtime / "pyvenv.cfg").write_text(
        f"home = {system.parent}\ninclude-system-site-packages = false\nversion = "
        f"{'.'.join(map(str, sys.version_info[:3]))}\n")
    for link, target in ((runtime / "bin" / "python3", system),
                         (packages, Path(sysconfig.get_paths()["purelib"]))):
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return str(runtime / "bin" / "python3")


def server_environment(settings: "HubSettings", instructor: bool) -> dict[str, str]:
    """What every person's JupyterLab (and their kernels and terminals) runs with: the
    course's packages, the shared exchange, and the course config: the instructor gets the
    repository's course/ (as `make lab`, plus course/hub/instructor/), a student
    course/hub/student/."""
    venv = Path(settings.venv)
    course_config = Path(settings.course_root) / "course"
    return {
        "PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin",
        # reftorch: the lessons and assignments import it
        "PYTHONPATH": settings.course_root,
        # the venv's Jupyter data and config (server_python's interpreter may not be the
        # venv's own, so sys.prefix would not find them)
        "JUPYTER_PATH": str(venv / "share" / "jupyter"),
        "JUPYTERLAB_DIR": str(venv / "share" / "jupyter" / "lab"),
        "JUPYTER_CONFIG_PATH": os.pathsep.join(
            ([str(course_config / "hub" / "instructor"), str(course_config)] if instructor
             else [str(course_config / "hub" / "student")])
            + [str(venv / "etc" / "jupyter")]),
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
    pid_file = _state(settings, PID_FILE)
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return None
    return pid if b"jupyterhub" in cmdline else None  # a zombie's cmdline is empty


def _port_in_use(ip: str, port: int) -> bool:
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((ip, port))
        except OSError:
            return True
    return False


def _course_id(course_root: Path) -> str:
    from traitlets.config import PyFileConfigLoader
    config = PyFileConfigLoader("nbgrader_config.py", str(course_root / "course")).load_config()
    return config.CourseDirectory.course_id


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


def check_course_privacy(course_root: Path) -> list[str]:
    """The instructor's side of the course (answers, hidden tests, submissions, grades)
    must not be readable by students, who share the machine; returns what was closed."""
    closed = []
    for relative in ("solutions", "course/submitted", "course/autograded", "course/feedback",
                     "course/gradebook.db", "course/roster.csv", "course/refused",
                     "course/source_with_tests",
                     "course/solution", "course/reports"):
        path = course_root / relative
        if path.exists() and path.stat().st_mode & 0o007:
            path.chmod(path.stat().st_mode & ~0o007)
            closed.append(relative)
    return closed


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
                       "and `course grade` write there as the instructor "
                       f"(chown -R {settings.instructor} {settings.course_root})")


def start(settings: HubSettings, timeout: float = 60.0) -> int:
    """Start the hub in the background and wait until it answers; returns its pid."""
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
    # Every check passed: from here on the hub changes things on the machine.
    settings.python = settings.python or server_python(Path(settings.course_root))
    settings.course_id = _course_id(Path(settings.course_root))
    settings.hub_port, settings.proxy_api_port = _free_port(), _free_port()
    state = Path(settings.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    state.chmod(0o700)  # cookie secret, database and passwords: root only
    prepare_exchange(Path(settings.exchange))
    check_course_privacy(Path(settings.course_root))
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
                       exchange=args.exchange, students_group=args.group, ip=args.ip,
                       port=args.port, proxy=args.proxy or "",
                       singleuser_args=list(args.lab_arg or []))


def cmd_hub(args) -> int:
    settings = _settings(args)
    try:
        if args.hub_command == "start":
            pid = start(settings)
            print(f"course hub running at {settings.url} (pid {pid}); instructor "
                  f"{settings.instructor!r}, students: Unix group {settings.students_group!r}, "
                  f"exchange {settings.exchange}; log {settings.state_dir}/jupyterhub.log")
        elif args.hub_command == "stop":
            print("course hub stopped" if stop(settings) else "course hub was not running")
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
    hub.add_argument("hub_command", choices=("start", "stop", "status"))
    hub.add_argument("--root", help="course root (default: this repository)")
    hub.add_argument("--state-dir", default=str(DEFAULT_STATE),
                     help=f"hub database, secrets, pid and log (default {DEFAULT_STATE})")
    hub.add_argument("--exchange", default=str(DEFAULT_EXCHANGE),
                     help=f"nbgrader exchange shared by the class (default {DEFAULT_EXCHANGE})")
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
