"""Inside the sandbox: import torch once, then fork a fresh child per notebook.

Started by :mod:`autograder.sandbox` as ``python zygote.py CONTROL_FD [--no-torch]``.
For each job the host sends, over the control socket, a small JSON message with the
limits plus three fresh pipe ends (job input, observation output, and the hidden cases,
which the host writes only after the notebook's visible checks are over). The zygote never reads
the job or the observations itself, so nothing a student wrote ever enters its memory,
which later children inherit.

Each child starts in new mount and IPC namespaces of its own, with a new empty tmpfs on
``/tmp`` and ``/dev/shm``: files, System V objects and POSIX message queues that one
notebook leaves behind die with its namespaces, and no later notebook can see them or
trip over them. The zygote holds ``CAP_SYS_ADMIN`` (inside the sandbox's user namespace
only) to do that; the child drops every capability before it reads its job, and tells
the zygote through a one-shot pipe that its setup succeeded, so a sandbox that could not
prepare a fresh state is reported as the grader's trouble, never as the notebook's.

After each child the zygote enforces the wall-clock limit, kills every process left in
the sandbox's PID namespace, checks that its own ``/tmp``, ``/dev/shm`` and IPC space
are as it left them, and reports how the child ended (asking for a restart if anything
was left).

With ``--plain=FOLDER`` (:class:`autograder.sandbox.Unsandboxed`: a student's Validate where
bubblewrap is missing) there is no sandbox around the zygote: nothing of the above that
needs one (namespaces, capabilities, killing every process it can see, wiping ``/tmp``)
is done. Each child gets a folder of its own under FOLDER instead, and the same limits;
the zygote is a subreaper, and after each child it kills what the child left running.
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time

WRITABLE = ("/tmp", "/dev/shm")
SHM_BYTES = 64 * 1024**2
SETUP_FAILED = 70       # exit code of a child that could not prepare its sandbox state

_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_MOVE, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x2000, 0x4000, 0x40000
# What a notebook's /proc shows: the machine-wide files libraries read (os.cpu_count reads
# /proc/stat where /sys is missing) and this process's own basics, never a mount table
# (/proc/*/mountinfo names each mounted folder's path on the host) nor another process.
PROC_SHOWN = ("cpuinfo", "meminfo", "stat", "loadavg", "uptime", "version")
PROC_SELF_SHOWN = ("status", "stat", "statm", "limits", "cmdline", "maps", "fd", "fdinfo")
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
CAPABILITY_VERSION_3 = 0x20080522


class SetupError(OSError):
    """The child could not get its fresh namespaces or drop its capabilities."""


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise SetupError(number, f"{what}: {os.strerror(number)}")


def _set_not_dumpable():
    # Children (same uid) must not ptrace or read /proc/<zygote>/mem.
    PR_SET_DUMPABLE = 4
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _other_pids() -> list[int]:
    # The zygote is PID 1 of the sandbox (bwrap --as-pid-1): orphans are reparented to it.
    me = os.getpid()
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]


def _kill_everything_else() -> bool:
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:  # reap our children, the orphans reparented to us included
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
        if not _other_pids():
            return True
        time.sleep(0.005)
    return False


def _fresh_state(disk_bytes: int) -> None:
    """New mount and IPC namespaces with empty tmpfs on /tmp and /dev/shm (in the child)."""
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC), "unshare")
    # Our mounts must not propagate back to the zygote's namespace.
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    for target, size in (("/tmp", disk_bytes), ("/dev/shm", SHM_BYTES)):
        options = f"size={size},mode=1777".encode()
        _check(_libc.mount(b"tmpfs", target.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options),
               f"mount tmpfs on {target}")
    _cover_proc()
    for path in ("/tmp/home", "/tmp/cache"):
        os.makedirs(path)


def _cover_proc() -> None:
    """Cover /proc (in the child's own mount namespace) with a small tmpfs holding only
    PROC_SHOWN and, as ``self``, PROC_SELF_SHOWN of the child, each bound from the real one."""
    stage = "/tmp/.proc"
    os.mkdir(stage)
    _check(_libc.mount(b"proc-view", stage.encode(), b"tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                       b"size=64k,mode=0755"), "mount the /proc view")
    os.mkdir(f"{stage}/self")
    pid = os.getpid()
    for name, source in [(name, f"/proc/{name}") for name in PROC_SHOWN] + \
            [(f"self/{name}", f"/proc/{pid}/{name}") for name in PROC_SELF_SHOWN]:
        target = f"{stage}/{name}"
        if os.path.isdir(source):
            os.mkdir(target)
        else:
            open(target, "w").close()
        _check(_libc.mount(source.encode(), target.encode(), None, MS_BIND, None), f"show {source}")
    _check(_libc.mount(None, stage.encode(), None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, None),
           "make the /proc view read-only")
    _check(_libc.mount(stage.encode(), b"/proc", None, MS_MOVE, None), "put the /proc view on /proc")
    os.rmdir(stage)


def _drop_capabilities() -> None:
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clear ambient capabilities")
    header = (ctypes.c_uint32 * 2)(CAPABILITY_VERSION_3, 0)
    empty = (ctypes.c_uint32 * 6)()   # effective, permitted, inheritable for both 32-bit halves
    _check(_libc.capset(header, empty), "drop capabilities")


def _listing() -> set[str]:
    found = set()
    for top in WRITABLE:
        for directory, subdirectories, files in os.walk(top):
            found.update(os.path.join(directory, name) for name in subdirectories + files)
    return found


def _leftovers(baseline: set[str]) -> list[str]:
    """What a child managed to leave in the zygote's own writable places (should be nothing)."""
    found = sorted(_listing() - baseline)
    return found + (["System V IPC objects"] if _ipc_left() else [])


def _wipe_writable():
    for top in WRITABLE:
        if not os.path.isdir(top):
            continue
        for name in os.listdir(top):
            path = os.path.join(top, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass
    for path in ("/tmp/home", "/tmp/cache"):
        os.makedirs(path, exist_ok=True)


def _ipc_left() -> bool:
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                if len(handle.read().splitlines()) > 1:
                    return True
        except OSError:
            pass
    return False


def _own_folder(folder: str, zygote: int) -> str:
    """Without a sandbox: the child dies with the zygote and works in ``folder`` (its home,
    temporary files and the notebook's files). Returns where its output goes."""
    PR_SET_PDEATHSIG = 1
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "die with the zygote")
    if os.getppid() != zygote:
        raise SetupError(0, "the zygote ended before the child started")
    import tempfile

    from autograder import harness
    for name in ("home", "cache"):
        os.makedirs(os.path.join(folder, name))
    os.chdir(folder)
    os.environ.update(HOME=os.path.join(folder, "home"), TMPDIR=folder, MPLCONFIGDIR=os.path.join(folder, "cache"),
                      IPYTHONDIR=os.path.join(folder, "cache", "ipython"))
    tempfile.tempdir = folder
    harness.WORK_DIR = os.path.join(folder, "work")
    return os.path.join(folder, "output.txt")


def _prepare(limits: dict, disk_bytes: int, folder: str | None = None, zygote: int = 0) -> None:
    """Fresh namespaces, no capabilities, limits, stdio: everything before the job is read.
    With ``folder`` (no sandbox), that folder instead of fresh namespaces."""
    os.setsid()
    if folder is None:
        _fresh_state(disk_bytes)
        _drop_capabilities()
        output = "/tmp/output.txt"
    else:
        output = _own_folder(folder, zygote)
    mem = int(limits["memory_bytes"])
    with open("/proc/self/status") as handle:
        vm = next(int(line.split()[1]) * 1024 for line in handle if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + mem, vm + mem))
    cpu = int(limits["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if folder is None:   # outside a sandbox it would count every process of the user
        resource.setrlimit(resource.RLIMIT_NPROC, (int(limits["processes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    out = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(out)


def _child(job_fd: int, obs_fd: int, hidden_fd: int, setup_fd: int, limits: dict, disk_bytes: int, shell,
           snapshot, convert, folder: str | None = None, zygote: int = 0, beat_fd: int | None = None):
    try:
        _prepare(limits, disk_bytes, folder, zygote)
    except BaseException as error:  # noqa: BLE001 - the zygote reports it as the grader's trouble
        try:
            os.write(2, f"sandbox setup failed: {error}\n".encode(errors="replace"))
        finally:
            os._exit(SETUP_FAILED)
    os.write(setup_fd, b"1")
    os.close(setup_fd)   # closed before any student code: nothing later can claim a setup
    from autograder import harness

    channel = harness.Channel(obs_fd)
    try:
        job = harness.read_job(job_fd)
        harness.run_job(job, channel, shell, snapshot, convert, hidden_fd, beat_fd)
    except BaseException as error:  # noqa: BLE001 - the host learns why, the child still exits
        try:
            channel.send(t="harness_error", error=harness._message(error))
        except BaseException:  # noqa: BLE001
            pass
    os._exit(0)


def _end_what_is_left(child: int) -> bool:
    """Without a sandbox: kill what the child left (its process group, and any process that
    was reparented to the zygote, a subreaper), and reap it. Whether nothing was left."""
    me = os.getpid()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            os.killpg(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        left = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                if int(fields[1]) == me:   # our child (the 4th field: the parent's PID)
                    left.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                break
        if not left:
            return True
        time.sleep(0.005)
    return False


def _describe(status: int, timed_out: str, rusage) -> dict:
    result = {"cpu_seconds": round(rusage.ru_utime + rusage.ru_stime, 3),
              "max_rss_kib": rusage.ru_maxrss}
    if timed_out:
        result["how"] = timed_out   # "timeout" (the whole run) or "cell_timeout" (one cell)
    elif os.WIFSIGNALED(status):
        result["how"] = "signal"
        result["signal"] = os.WTERMSIG(status)
    else:
        result["how"] = "exit"
        result["code"] = os.WEXITSTATUS(status)
    return result


def _watch(pidfd: int, beats: int, wall: float, cell: float) -> str:
    """Wait for the child to end: "" when it did, "timeout" past ``wall`` seconds in all,
    "cell_timeout" past ``cell`` seconds since the last cell began (a byte on ``beats``)."""
    start = time.monotonic()
    run_deadline, cell_deadline = start + wall, start + min(cell, wall)
    watched = [pidfd, beats]
    while True:
        now = time.monotonic()
        if now >= run_deadline:
            return "timeout"
        if now >= cell_deadline:
            return "cell_timeout"
        ready, _, _ = select.select(watched, [], [], min(run_deadline, cell_deadline) - now)
        if pidfd in ready:
            return ""
        if beats in ready:
            if os.read(beats, 4096):
                cell_deadline = time.monotonic() + min(cell, wall)
            else:
                watched = [pidfd]   # the child closed it: only the run's limit is left


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[0]))
    with_torch = "--no-torch" not in argv
    disk_bytes = next(int(a.split("=", 1)[1]) for a in argv if a.startswith("--disk-bytes="))
    plain = next((a.split("=", 1)[1] for a in argv if a.startswith("--plain=")), None)
    if plain is None:
        _wipe_writable()
    else:
        PR_SET_CHILD_SUBREAPER = 36
        _check(_libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), "become a subreaper")
    if with_torch:
        import numpy  # noqa: F401 - imported once here, inherited by every child
        import torch
        torch.set_num_threads(1)
    else:
        from autograder import forbidden
        forbidden.install()  # `import torch` gives a stand-in that fails on use, naming the rule
    from autograder import harness, observe

    harness.warm_up(with_torch)
    harness.install_unanswered_marker()
    shell = harness.make_shell()
    from autograder import structure
    structure.capture([shell.user_ns])   # library classes and modules as they are before any notebook
    snapshot = harness.Snapshot()
    convert = observe.Converter()
    _set_not_dumpable()
    # Everything imported so far is permanent: the collector never walks it again, so a
    # notebook that makes many cycles pays for its own objects only (not torch's million), and
    # children leave these pages shared.
    gc.collect()
    gc.freeze()
    baseline = _listing() if plain is None else set()
    runs = 0
    control.sendall(b'{"t": "ready"}\n')
    while True:
        message, fds, _, _ = socket.recv_fds(control, 65536, 3)
        if not message or len(fds) != 3:
            return 0
        limits = json.loads(message)
        job_fd, obs_fd, hidden_fd = fds
        setup_r, setup_w = os.pipe()
        # The child writes a byte here as each cell starts: one cell may take cell_seconds,
        # the whole run wall_seconds (a child that stops writing only loses the former).
        beat_r, beat_w = os.pipe()
        runs += 1
        folder = None if plain is None else os.path.join(plain, f"run-{runs}")
        zygote = os.getpid()
        pid = os.fork()
        if pid == 0:
            control.close()
            os.close(setup_r)
            os.close(beat_r)
            _child(job_fd, obs_fd, hidden_fd, setup_w, limits, disk_bytes, shell, snapshot, convert, folder, zygote,
                   beat_w)
        os.close(job_fd)
        os.close(obs_fd)
        os.close(hidden_fd)
        os.close(setup_w)
        os.close(beat_w)
        pidfd = os.pidfd_open(pid)
        timed_out = _watch(pidfd, beat_r, float(limits["wall_seconds"]),
                           float(limits.get("cell_seconds") or limits["wall_seconds"]))
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status, rusage = os.wait4(pid, 0)
        os.close(pidfd)
        os.close(beat_r)
        result = _describe(status, timed_out, rusage)
        result["setup"] = os.read(setup_r, 1) == b"1"
        os.close(setup_r)
        if plain is None:
            clean = _kill_everything_else()
            left = _leftovers(baseline)
        else:
            clean, left = _end_what_is_left(pid), []
            shutil.rmtree(folder, ignore_errors=True)
        result["restart"] = not (clean and result["setup"]) or bool(left)
        if left:
            result["left"] = left[:5]
        control.sendall((json.dumps({"t": "end", **result}) + "\n").encode())
        if result["restart"]:
            return 0


if __name__ == "__main__":
    import site

    for directory in filter(None, os.environ.get("COURSE_SITE_PACKAGES", "").split(":")):
        site.addsitedir(directory)
    sys.path.insert(0, os.environ["COURSE_GRADER_PATH"])
    sys.exit(main(sys.argv[1:]))
