"""On the host: a bubblewrap sandbox that runs notebooks, one forked child at a time.

The sandbox sees a read-only system (``/usr``, the Python environment, the course's
``autograder`` and ``reftorch`` packages, each host folder passed to bwrap as an open
descriptor, so private parent folders need not be searchable by anyone else), a private
size-limited ``/tmp`` and nothing else: no network, no ``solutions/``, no gradebook, no other submissions (a job's files
arrive through a pipe). It has its own user, PID, IPC, UTS and network namespaces, runs
as ``nobody`` when we are root, dies with its parent, cannot create further user
namespaces and cannot use kernel keyrings (:mod:`autograder.syscall_filter`). Each
notebook gets mount and IPC namespaces of its own, with an empty ``/tmp`` and
``/dev/shm`` (see :mod:`autograder.zygote`). Limits per notebook: wall time, CPU time,
address space, processes, size of any file written (stdout included) and of ``/tmp`` as
a whole; on the host, the observation bytes and what parsing them may cost.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from coursebase.paths import REPO

from .forbidden import FORBIDDEN
from .syscall_filter import sandbox_filter

GRADER_MOUNT = "/opt/course"
SITE_MOUNT = "/opt/site-packages"
PYTHON_MOUNT = "/opt/python"
NOBODY = 65534
# The sandbox's own user database: on a class server the host's /etc/passwd lists every
# student's login.
PASSWD = b"root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/tmp/home:/usr/sbin/nologin\n"
GROUP = b"root:x:0:\nnogroup:x:65534:\n"


class SandboxError(RuntimeError):
    """The sandbox could not be started or stopped answering."""


@dataclass
class Limits:
    wall_seconds: float = 60.0       # one run of a notebook, every cell together
    cpu_seconds: int = 60
    memory_bytes: int = 2 * 1024**3
    processes: int = 64
    file_bytes: int = 16 * 1024**2
    disk_bytes: int = 256 * 1024**2
    observation_bytes: int = 64 * 1024**2
    # What the host may spend holding one run's parsed observations, estimated per line
    # before parsing (see `parse_cost`): small JSON text can stand for far larger objects.
    parsed_bytes: int = 128 * 1024**2
    # One cell (nbgrader's Execute.timeout): a cell past it is stopped and the notebook runs
    # again without it, so the tests after it still count. None: the run's own limit.
    cell_seconds: float | None = None

    @classmethod
    def of_course(cls, config, cell_seconds: float | None = None, notebook_seconds: float | None = None,
                  memory_mb: int | None = None) -> "Limits":
        """The course's limits (coursebase.model.grading_limits), each overridable (the command line)."""
        from coursebase.model import grading_limits
        course = grading_limits(config)
        cell = float(cell_seconds or course["cell_seconds"])
        notebook = float(notebook_seconds or course["notebook_seconds"])
        return cls(wall_seconds=notebook, cpu_seconds=max(1, int(notebook)), cell_seconds=min(cell, notebook),
                   memory_bytes=int(memory_mb or course["memory_mb"]) * 1024**2)

    @property
    def per_cell(self) -> float:
        return min(self.cell_seconds or self.wall_seconds, self.wall_seconds)


@dataclass
class RunOutcome:
    messages: list[dict] = field(default_factory=list)
    end: dict | None = None          # how the child ended, from the zygote; None: sandbox died
    overflow: bool = False           # the run sent more observation bytes than allowed
    malformed_lines: int = 0
    # Set when the result may be the grader's trouble rather than the notebook's: the
    # sandbox died, or could not give the notebook a fresh state. Such a result is never final.
    grader_fault: str = ""
    # messages[:visible_end] came before the notebook said its visible checks were over (and
    # before any hidden case was sent); the rest may depend on hidden cases. None: never said.
    visible_end: int | None = None


def bwrap_available() -> bool:
    return shutil.which("bwrap") is not None


STAGE = "/tmp/course-sandbox"   # where, as root, host folders are re-mounted for nobody


class Binds:
    """Host folders the sandbox mounts read-only.

    The checkout, its ``.venv`` and the Python may live in a private folder (0700 parents):
    - as a regular user, bwrap runs as that user, who can walk their own folders: bwrap gets
      the paths themselves;
    - as root, bwrap runs as ``nobody``, who cannot walk into such a folder by name. A
      launcher (:func:`root_launcher`) first enters a private mount namespace, mounts each
      folder on one under ``STAGE`` that anyone can enter, then drops to ``nobody`` and runs
      bwrap on those. Only that namespace sees them; it ends with the sandbox.
    What is inside each folder must still be readable by that user
    (:func:`unreadable_by_sandbox`)."""

    def __init__(self, staged: bool):
        self.staged = staged
        self.sources: list[str] = []
        self.arguments: list[str] = []

    def add(self, source: str | Path, inside: str) -> None:
        self.sources.append(str(source))
        outside = f"{STAGE}/{len(self.sources) - 1}" if self.staged else str(source)
        self.arguments += ["--ro-bind", outside, inside]


# Runs as root in a fresh private mount namespace. Each folder is opened first (its path may
# lie under /tmp), then a small tmpfs covers /tmp in this namespace alone, each open folder
# is mounted under it and its descriptor closed (a directory descriptor from outside the
# sandbox's root would lead anywhere), and bwrap runs as nobody on the staged copies.
# Arguments: the folders, "--", the setpriv+bwrap command.
_LAUNCHER = f"""
set -eu
STAGE={STAGE}
fds=()
while [ "$1" != "--" ]; do
  exec {{fd}}<"$1"
  fds+=("$fd")
  shift
done
shift
mount -t tmpfs -o mode=0755,size=64k course-sandbox /tmp
mkdir -m 0755 "$STAGE"
for i in "${{!fds[@]}}"; do
  fd=${{fds[$i]}}
  mkdir -m 0755 "$STAGE/$i"
  mount --no-canonicalize --bind "/proc/self/fd/$fd" "$STAGE/$i"
  exec {{fd}}<&-
done
exec "$@"
"""


def root_launcher(sources: list[str]) -> list[str]:
    """The command that stages ``sources`` (see :class:`Binds`), then runs what follows it."""
    return ["unshare", "--mount", "--propagation", "private", "--",
            "/bin/bash", "-c", _LAUNCHER, "course-sandbox", *sources, "--"]


def _sandbox_uid() -> int:
    return NOBODY if os.geteuid() == 0 else os.geteuid()


def unreadable_by_sandbox(paths: list[Path]) -> list[str]:
    """Which of these files or folders the sandbox's user could not read once mounted.

    As root the sandbox runs as ``nobody``, so files need read (folders read and search)
    permission for others; as anyone else it runs as that user, who can read their own
    files. Only the folders' own modes count: their parents are reached by descriptor."""
    if _sandbox_uid() == os.geteuid():
        return []
    bad = []
    for path in paths:
        try:
            mode = path.stat().st_mode
        except OSError as error:
            bad.append(f"{path} ({error.strerror})")
            continue
        needed = 0o005 if path.is_dir() else 0o004
        if mode & needed != needed:
            bad.append(f"{path} (mode {mode & 0o777:o})")
    return bad


def choose_interpreter() -> tuple[str, str]:
    """(python executable, its installation prefix), the same Python that runs the grader.

    The prefix is mounted at PYTHON_MOUNT, found there through PYTHONHOME (and its shared
    ``libpython`` through LD_LIBRARY_PATH): the sandbox names no folder of the host. CPython finds its standard library from its own
    location, and a shared ``libpython`` through an absolute run path."""
    executable = Path(sys.executable).resolve()
    base = Path(sys.base_prefix).resolve()
    if base in (Path("/"), Path("/usr")) or base.is_relative_to("/usr"):
        return str(executable), ""   # a system Python: /usr is mounted anyway
    if base.is_relative_to("/tmp") or base.is_relative_to("/dev"):
        raise SandboxError(f"the grader's Python is installed in {base}, which the sandbox "
                           "replaces with its own empty folder: install Python elsewhere")
    return str(executable), str(base)


def _site_packages() -> list[str]:
    paths = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    return sorted(p for p in paths if os.path.isdir(p))


def _other_package_folders(prefix: str, ours: list[str]) -> list[str]:
    """Package folders the sandbox's file system shows besides ours: the interpreter's own
    site-packages (pyenv's may hold numpy and more) and Debian's dist-packages under /usr.
    Each is covered with an empty folder, so the only packages importable are the venv's,
    whatever a notebook appends to ``sys.path``."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    candidates = ["/usr/lib/python3/dist-packages", f"/usr/local/lib/{version}/dist-packages",
                  f"/usr/local/lib/{version}/site-packages", f"/usr/lib/{version}/site-packages",
                  f"/usr/lib/{version}/dist-packages"]
    if prefix:
        candidates += [f"{prefix}/lib/{version}/site-packages", f"{prefix}/lib/{version}/dist-packages"]
    mine = {os.path.realpath(p) for p in ours}
    return sorted({c for c in candidates if os.path.isdir(c) and os.path.realpath(c) not in mine})


def _inside(path: str, prefix: str) -> str:
    """Where a path of the Python's prefix is seen in the sandbox."""
    return PYTHON_MOUNT + path[len(prefix):] if prefix and (path + "/").startswith(prefix + "/") else path


def _naming_the_checkout(directory: str) -> list[str]:
    """Files of a site-packages folder that name where the checkout lives (an editable
    install's finder and .pth, direct_url.json): covered with an empty file in the sandbox."""
    found = []
    try:
        names = os.listdir(directory)
    except OSError:
        return found
    for name in names:
        path = os.path.join(directory, name)
        if name.startswith("__editable__") or name.endswith(".egg-link"):
            found.append(name)
        elif name.endswith(".pth") or name.endswith(".dist-info"):
            target = os.path.join(path, "direct_url.json") if name.endswith(".dist-info") else path
            try:
                with open(target, "rb") as handle:
                    text = handle.read(1 << 16)
            except OSError:
                continue
            if str(REPO).encode() in text or b"file://" in text:
                found.append(os.path.relpath(target, directory))
    return sorted(found)


def _check_readable(python: str, prefix: str, site_packages: list[str]) -> None:
    """Refuse, naming what to change, rather than start a sandbox whose imports fail."""
    probes = [Path(python)]
    if prefix:
        probes += [Path(prefix), *sorted(Path(prefix).glob("lib/python3*/os.py"))]
    for directory in site_packages:
        probes += [Path(directory), *(Path(directory) / name / "__init__.py" for name in ("torch", "numpy"))]
    probes += [REPO / package / "__init__.py" for package in ("autograder", "reftorch")]
    bad = unreadable_by_sandbox([path for path in probes if os.path.lexists(path)])
    if bad:
        raise SandboxError("the sandbox user (nobody) cannot read what it must run: "
                           + "; ".join(bad) + ". Make them readable by others "
                           "(chmod -R o+rX on the folder; its parents may stay private), "
                           "or grade as the non-root user who owns them")


def bwrap_command(control_fd: int, limits: Limits, with_torch: bool, seccomp_fd: int,
                  binds: Binds | None = None, user_fds: tuple[int, int] | None = None) -> list[str]:
    """The command line that starts the sandbox (see :class:`Binds` for how, as root, host
    folders reach it). ``user_fds``: descriptors to read the sandbox's /etc/passwd and
    /etc/group from (PASSWD, GROUP); without them the files are left out."""
    as_nobody = os.geteuid() == 0
    if as_nobody and not (shutil.which("setpriv") and shutil.which("unshare")):
        raise SandboxError("grading as root needs setpriv and unshare (Debian: util-linux)")
    binds = binds if binds is not None else Binds(staged=as_nobody)
    python, prefix = choose_interpreter()
    site_directories = _site_packages()
    _check_readable(python, prefix, site_directories)
    command = []
    if as_nobody:
        # Unprivileged bwrap: RLIMIT_NPROC is only enforced for a non-root user.
        command += ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    command += ["bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--die-with-parent", "--new-session",
                "--disable-userns", "--seccomp", str(seccomp_fd),
                # The zygote itself is PID 1: no bwrap reaper that a notebook could ptrace (it is
                # not dumpable) and take over to watch later notebooks, and a notebook's signals
                # cannot kill it (PID 1 ignores them from inside its namespace).
                "--as-pid-1",
                # Only inside the sandbox's own user namespace: the zygote needs it to give each
                # child fresh mount/IPC namespaces; the child drops it before reading its job.
                "--cap-add", "CAP_SYS_ADMIN",
                "--ro-bind", "/usr", "/usr"]
    if not as_nobody:
        command += ["--uid", str(NOBODY), "--gid", str(NOBODY)]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64"):
        if os.path.islink(top):
            command += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            command += ["--ro-bind", top, top]
    for etc in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
                "/etc/localtime", "/etc/fonts", "/etc/nsswitch.conf"):
        if os.path.exists(etc):
            command += ["--ro-bind", etc, etc]
    if user_fds is not None:
        command += ["--ro-bind-data", str(user_fds[0]), "/etc/passwd", "--ro-bind-data", str(user_fds[1]), "/etc/group"]
    # Host folders by descriptor (no walk through the instructor's private parents). The
    # Python at its own path; packages at fixed places inside: the checkout (and its .venv)
    # may live under /tmp, which the sandbox replaces with its own empty tmpfs below.
    if prefix:
        binds.add(prefix, PYTHON_MOUNT)
    site_packages = []
    hidden_packages = []
    for index, directory in enumerate(site_directories):
        inside = f"{SITE_MOUNT}/{index}"
        site_packages.append(inside)
        binds.add(directory, inside)
        for name in _naming_the_checkout(directory):
            hidden_packages += ["--ro-bind", "/dev/null", f"{inside}/{name}"]
        # a run without torch does not see the packages its stand-ins replace (forbidden.py:
        # array, autodiff and symbolic-maths libraries); `reftorch` is not mounted for it
        for hidden in FORBIDDEN:
            if not with_torch and os.path.isdir(os.path.join(directory, hidden)):
                hidden_packages += ["--tmpfs", f"{inside}/{hidden}"]
    for package in ("autograder", "reftorch") if with_torch else ("autograder",):
        if (REPO / package).is_dir():
            binds.add(REPO / package, f"{GRADER_MOUNT}/{package}")
    for folder in _other_package_folders(prefix, site_directories):
        hidden_packages += ["--tmpfs", _inside(folder, prefix)]
    command += binds.arguments + hidden_packages
    command += ["--proc", "/proc", "--dev", "/dev",
                "--size", str(limits.disk_bytes), "--tmpfs", "/tmp",
                "--size", str(64 * 1024**2), "--tmpfs", "/dev/shm",
                "--chdir", "/tmp", "--clearenv"]
    environment = {
        "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp/home", "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/tmp/cache", "IPYTHONDIR": "/tmp/cache/ipython",
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "NBGRADER_EXECUTION": "autograde",
        "COURSE_GRADER_PATH": GRADER_MOUNT, "COURSE_SITE_PACKAGES": ":".join(site_packages),
    }
    if prefix:
        environment["PYTHONHOME"] = PYTHON_MOUNT
        if os.path.isdir(os.path.join(prefix, "lib")):
            environment["LD_LIBRARY_PATH"] = f"{PYTHON_MOUNT}/lib"
    for key, value in environment.items():
        command += ["--setenv", key, value]
    command += [_inside(python, prefix), "-s", "-B", f"{GRADER_MOUNT}/autograder/zygote.py", str(control_fd),
                f"--disk-bytes={limits.disk_bytes}"]
    if not with_torch:
        command.append("--no-torch")
    return root_launcher(binds.sources) + command if binds.staged else command


class Sandbox:
    """One long-lived sandbox; :meth:`run` executes one job in a fresh child."""

    def __init__(self, limits: Limits | None = None, with_torch: bool = True):
        self.limits = limits or Limits()
        self.with_torch = with_torch
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self._buffer = b""
        self._stderr = None
        self.pid_namespaces: set[str] = set()
        self.retired = False   # closed for good: its batch is over, nothing may start it again
        self.current: RunOutcome | None = None   # the run under way, its messages as they arrive

    def start(self, timeout: float = 120.0) -> None:
        self.launch()
        self.wait_ready(timeout)

    def launch(self) -> None:
        """Start the sandbox's process. bwrap's --die-with-parent follows the *thread* that
        started it: call this from a thread that lives as long as the sandbox should (the
        slow part, :meth:`wait_ready`, may run in any thread)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._stderr = tempfile.TemporaryFile()
        seccomp_r, seccomp_w = os.pipe()
        _write_all(seccomp_w, sandbox_filter())  # small: fits the pipe's buffer, closes its end
        passwd_r, passwd_w = os.pipe()
        _write_all(passwd_w, PASSWD)
        group_r, group_w = os.pipe()
        _write_all(group_w, GROUP)
        try:
            command = bwrap_command(theirs.fileno(), self.limits, self.with_torch, seccomp_r,
                                    user_fds=(passwd_r, group_r))
            self.process = subprocess.Popen(command, pass_fds=[theirs.fileno(), seccomp_r, passwd_r, group_r],
                                            stdin=subprocess.DEVNULL, stdout=self._stderr,
                                            stderr=self._stderr, start_new_session=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
            for fd in (seccomp_r, passwd_r, group_r):
                os.close(fd)
        self.control = ours
        self._buffer = b""

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Wait for the zygote to have imported what it preloads (torch: seconds)."""
        ready = self._read_line(timeout)
        if not ready or ready.get("t") != "ready":
            detail = self._stderr_text()
            self.close()
            raise SandboxError(f"sandbox did not start: {detail or 'no message'}")
        self.pid_namespaces.add(self._pid_namespace())

    def _pid_namespace(self) -> str:
        """The sandbox's PID namespace, so a caller can check that nothing in it survived."""
        pid = self.process.pid
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            return os.readlink(f"/proc/{children[0]}/ns/pid")
        except (OSError, IndexError):
            return ""

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read()[-4000:].decode(errors="replace").strip()

    def _read_line(self, timeout: float) -> dict | None:
        self.control.settimeout(timeout)
        while b"\n" not in self._buffer:
            try:
                chunk = self.control.recv(65536)
            except (socket.timeout, OSError):
                return None
            if not chunk:
                return None
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line)
        except ValueError:
            return None

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def run(self, job: dict, hidden: bytes = b"", limits: Limits | None = None) -> RunOutcome:
        """Run one job in a fresh child. ``hidden`` (the hidden cases, as JSON) is written to
        the child only once its observations have said ``visible_done``: nothing the child
        sent before that can depend on them. ``limits``: this run's, when not the sandbox's
        (a rerun gets what is left of the notebook's time)."""
        limits = limits or self.limits
        if not self.alive:
            if self.retired:
                raise SandboxError("the batch is over: its sandboxes are closed")
            self.start()
        payload = json.dumps(job).encode()
        job_r, job_w = os.pipe()
        obs_r, obs_w = os.pipe()
        hidden_r, hidden_w = os.pipe()
        outcome = RunOutcome()
        try:
            socket.send_fds(self.control, [json.dumps(asdict(limits)).encode()], [job_r, obs_w, hidden_r])
        except OSError as error:
            for fd in (job_r, job_w, obs_r, obs_w, hidden_r, hidden_w):
                os.close(fd)
            self.close(reap=False)
            raise SandboxError(f"sandbox stopped answering: {error}") from None
        os.close(job_r)
        os.close(obs_w)
        os.close(hidden_r)
        release = _HiddenRelease(hidden_w, hidden)
        self.current = outcome
        writer = threading.Thread(target=_write_all, args=(job_w, payload), daemon=True)
        reader = threading.Thread(target=self._read_observations, args=(obs_r, outcome, release), daemon=True)
        writer.start()
        reader.start()
        outcome.end = self._read_line(limits.wall_seconds + 30)
        if outcome.end is None or outcome.end.get("t") != "end":
            outcome.end = None
            outcome.grader_fault = "sandbox stopped responding"
            self.close(reap=False)
        elif outcome.end.get("setup") is not True:
            outcome.grader_fault = "the sandbox could not prepare a fresh state for the notebook"
        reader.join(10)
        if reader.is_alive():  # something still holds the pipe: never trust this sandbox again
            self.close(reap=False)
            reader.join(5)
        release.discard()
        self.current = None
        if outcome.end is not None and outcome.end.get("restart"):
            self.close(reap=False)
        return outcome

    def _read_observations(self, fd: int, outcome: RunOutcome, release: "_HiddenRelease | None" = None) -> None:
        """Parse line by line as the bytes arrive; past either budget keep nothing more.
        The first ``visible_done`` line marks the end of the visible part and releases the
        hidden cases (see :meth:`run`)."""
        received, cost = 0, 0
        pending: list[bytes] = []   # pieces of the line not yet ended (no quadratic joining)
        try:
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                received += len(chunk)
                if received > self.limits.observation_bytes:
                    outcome.overflow = True
                if outcome.overflow:
                    if release is not None:
                        release.discard()   # judged as over its limit: no hidden cases to wait for
                    pending.clear()
                    continue  # keep draining so the writer is not blocked, keep nothing
                *ends, rest = chunk.split(b"\n")
                for end in ends:
                    line = b"".join([*pending, end])
                    pending.clear()
                    cost += parse_cost(line)
                    if cost > self.limits.parsed_bytes:
                        outcome.overflow = True
                        break
                    _parse_into(line, outcome)
                    if release is not None and outcome.visible_end is None and outcome.messages \
                            and outcome.messages[-1].get("t") == "visible_done":
                        outcome.visible_end = len(outcome.messages) - 1
                        release.start()
                if outcome.overflow and release is not None:
                    release.discard()
                if rest and not outcome.overflow:
                    pending.append(rest)
        finally:
            os.close(fd)
        if pending and not outcome.overflow:
            line = b"".join(pending)
            if cost + parse_cost(line) <= self.limits.parsed_bytes:
                _parse_into(line, outcome)
            else:
                outcome.overflow = True

    def close(self, reap: bool = True, retire: bool = False) -> None:
        """Kill the sandbox. With ``reap``, wait until nothing is left in any PID namespace it
        ever had (the kernel takes a second or two to tear one down); a batch kills all its
        sandboxes first and reaps them together (:func:`reap_namespaces`). With ``retire``,
        :meth:`run` refuses to start it again (a batch that ends while a run is under way)."""
        self.retired = self.retired or retire
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
        if reap:
            reap_namespaces(self.pid_namespaces)
        self.process = None
        if self.control is not None:
            self.control.close()
            self.control = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()


class Unsandboxed(Sandbox):
    """The same zygote, protocol and limits, as an ordinary child process of this one: no
    bubblewrap, no namespaces, no seccomp filter, nothing hidden from the file system.

    For a student's `course validate` on a machine without bubblewrap: their own notebook,
    on their own machine, judged by the grader's own code. What it still does as a sandbox
    does: a fresh forked child per notebook, with the wall-time, CPU, memory and file-size
    limits; runs without torch get the same stand-ins (:mod:`autograder.forbidden`), so the
    rule is enforced by the finder alone (a notebook could remove it; grading's sandbox also
    hides the packages' folders). Each child works in a folder of its own under a private
    temporary folder, removed when this closes; no child may outlive the zygote."""

    def __init__(self, limits: Limits | None = None, with_torch: bool = True):
        super().__init__(limits, with_torch)
        self.scratch: str | None = None

    def launch(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._stderr = tempfile.TemporaryFile()
        self.scratch = tempfile.mkdtemp(prefix="course-validate-")
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": self.scratch, "TMPDIR": self.scratch,
            "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
            "NBGRADER_EXECUTION": "autograde", "COURSE_GRADER_PATH": str(REPO), "COURSE_SITE_PACKAGES": "",
        }
        command = [sys.executable, "-s", "-B", str(REPO / "autograder" / "zygote.py"), str(theirs.fileno()),
                   f"--disk-bytes={self.limits.disk_bytes}", f"--plain={self.scratch}"]
        if not self.with_torch:
            command.append("--no-torch")
        try:
            self.process = subprocess.Popen(command, pass_fds=[theirs.fileno()], cwd=self.scratch, env=environment,
                                            stdin=subprocess.DEVNULL, stdout=self._stderr, stderr=self._stderr,
                                            start_new_session=True)
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self.control = ours
        self._buffer = b""

    def _pid_namespace(self) -> str:
        return ""   # the host's own: nothing of it is this sandbox's to reap

    def close(self, reap: bool = True, retire: bool = False) -> None:
        super().close(reap=False, retire=retire)   # no PID namespace to reap
        if self.scratch is not None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def reap_namespaces(namespaces: set[str], patience: float = 3.0) -> None:
    """Killing bwrap kills its PID namespace; wait for the kernel to finish, force if needed."""
    namespaces = set(namespaces) - {""}
    deadline = time.monotonic() + patience
    give_up = deadline + 2 * patience
    while namespaces and (left := processes_in(namespaces)) and time.monotonic() < give_up:
        if time.monotonic() > deadline:
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            deadline = time.monotonic() + patience
        time.sleep(0.01)


_early: list[Sandbox] = []


def launch_early(limits: Limits, count: int) -> None:
    """Launch ``count`` sandboxes of each kind now, before the caller has loaded what tells
    it which kinds it needs (a course, its gradebook: seconds that the sandboxes spend
    importing torch meanwhile). :func:`take_early` hands them out; :func:`close_early` kills
    those nobody took."""
    for _ in range(count):
        for kind in (True, False):
            box = Sandbox(limits, kind)
            box.launch()
            _early.append(box)


def take_early(limits: Limits, kind: bool) -> Sandbox:
    """A sandbox launched early with these limits and kind, or a new one (not launched)."""
    for box in _early:
        if box.with_torch == kind and box.limits == limits:
            _early.remove(box)
            return box
    return Sandbox(limits, kind)


def close_early() -> set[str]:
    """Kill the early sandboxes nobody took; their PID namespaces, to reap."""
    namespaces = set()
    while _early:
        box = _early.pop()
        box.close(reap=False)
        namespaces |= box.pid_namespaces
    return namespaces


def parse_cost(line: bytes) -> int:
    """An upper estimate of the bytes CPython needs for ``json.loads(line)``: each container,
    item and string costs an object and a pointer whatever its text length
    (``[[],[],...]`` takes about 20 times its size)."""
    return (len(line) + 200 * line.count(b"{") + 64 * line.count(b"[") + 32 * line.count(b",")
            + 16 * line.count(b'"'))


def _parse_into(line: bytes, outcome: RunOutcome) -> None:
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        outcome.malformed_lines += 1
        return
    if isinstance(message, dict) and isinstance(message.get("t"), str):
        outcome.messages.append(message)
    else:
        outcome.malformed_lines += 1


class _HiddenRelease:
    """The write end of a child's hidden-case pipe: written once, in a thread, on request;
    closed unwritten otherwise."""

    def __init__(self, fd: int, payload: bytes):
        self.fd, self.payload = fd, payload
        self.lock = threading.Lock()

    def _take(self) -> int | None:
        with self.lock:
            fd, self.fd = self.fd, None
            return fd

    def start(self) -> None:
        fd = self._take()
        if fd is not None:
            threading.Thread(target=_write_all, args=(fd, self.payload), daemon=True).start()

    def discard(self) -> None:
        fd = self._take()
        if fd is not None:
            os.close(fd)


def _write_all(fd: int, payload: bytes) -> None:
    try:
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        pass  # the child died or stopped reading: its outcome says why
    finally:
        os.close(fd)


def processes_in(namespaces: set[str]) -> list[int]:
    """PIDs (host view) of processes still living in any of these PID namespaces."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") in namespaces:
                    found.append(int(entry))
            except OSError:
                pass
    return found
