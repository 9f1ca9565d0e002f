"""Inside the sandbox: import torch once, then fork a fresh child per notebook.

Started by :mod:`autograder.sandbox` as ``python zygote.py CONTROL_FD [--no-torch]``.
For each job the host sends, over the control socket, a small JSON message with the
limits plus two fresh pipe ends (job input, observation output). The zygote never reads
the job or the observations itself, so nothing a student wrote ever enters its memory,
which later children inherit. After each child it enforces the wall-clock limit, kills
every process left in the sandbox's PID namespace, wipes the writable directories and
reports how the child ended.
"""
from __future__ import annotations

import ctypes
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


def _set_not_dumpable():
    # Children (same uid) must not ptrace or read /proc/<zygote>/mem.
    PR_SET_DUMPABLE = 4
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _other_pids() -> list[int]:
    me = os.getpid()
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, me)]


def _kill_everything_else() -> bool:
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        while True:  # reap our own children; orphans are reaped by bwrap's init
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


def _child(job_fd: int, obs_fd: int, limits: dict, shell, snapshot, convert):
    from autograder import harness

    os.setsid()
    mem = int(limits["memory_bytes"])
    with open("/proc/self/status") as handle:
        vm = next(int(line.split()[1]) * 1024 for line in handle if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + mem, vm + mem))
    cpu = int(limits["cpu_seconds"])
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_NPROC, (int(limits["processes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(limits["file_bytes"]),) * 2)
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open("/tmp/output.txt", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    channel = harness.Channel(obs_fd)
    try:
        job = harness.read_job(job_fd)
        harness.run_job(job, channel, shell, snapshot, convert)
    except BaseException as error:  # noqa: BLE001 - the host learns why, the child still exits
        try:
            channel.send(t="harness_error", error=harness._message(error))
        except BaseException:  # noqa: BLE001
            pass
    os._exit(0)


def _describe(status: int, timed_out: bool, rusage) -> dict:
    result = {"cpu_seconds": round(rusage.ru_utime + rusage.ru_stime, 3),
              "max_rss_kib": rusage.ru_maxrss}
    if timed_out:
        result["how"] = "timeout"
    elif os.WIFSIGNALED(status):
        result["how"] = "signal"
        result["signal"] = os.WTERMSIG(status)
    else:
        result["how"] = "exit"
        result["code"] = os.WEXITSTATUS(status)
    return result


def main(argv: list[str]) -> int:
    control = socket.socket(fileno=int(argv[0]))
    with_torch = "--no-torch" not in argv
    _wipe_writable()
    if with_torch:
        import torch
        torch.set_num_threads(1)
    else:
        sys.modules["torch"] = None  # `import torch` raises ModuleNotFoundError
    if with_torch:
        import numpy  # noqa: F401 - imported once here, inherited by every child
    from autograder import harness, observe

    shell = harness.make_shell()
    snapshot = harness.Snapshot()
    convert = observe.Converter()
    _set_not_dumpable()
    control.sendall(b'{"t": "ready"}\n')
    while True:
        message, fds, _, _ = socket.recv_fds(control, 65536, 2)
        if not message or len(fds) != 2:
            return 0
        limits = json.loads(message)
        job_fd, obs_fd = fds
        pid = os.fork()
        if pid == 0:
            control.close()
            _child(job_fd, obs_fd, limits, shell, snapshot, convert)
        os.close(job_fd)
        os.close(obs_fd)
        pidfd = os.pidfd_open(pid)
        ready, _, _ = select.select([pidfd], [], [], float(limits["wall_seconds"]))
        timed_out = not ready
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status, rusage = os.wait4(pid, 0)
        os.close(pidfd)
        result = _describe(status, timed_out, rusage)
        clean = _kill_everything_else()
        _wipe_writable()
        result["restart"] = (not clean) or _ipc_left()
        control.sendall((json.dumps({"t": "end", **result}) + "\n").encode())
        if result["restart"]:
            return 0


if __name__ == "__main__":
    import site

    for directory in filter(None, os.environ.get("COURSE_SITE_PACKAGES", "").split(":")):
        site.addsitedir(directory)
    sys.path.insert(0, os.environ["COURSE_GRADER_PATH"])
    sys.exit(main(sys.argv[1:]))
