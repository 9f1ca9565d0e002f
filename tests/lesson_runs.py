"""`make test`'s lesson runs: every lesson re-executed under nbval and compared with its stored
outputs, twice: with the CPU kernels torch picks for this machine, and with its default (no
AVX) kernels, which any x86 CPU can run and which sum and round differently, so a stored
output that depends on the CPU fails on every machine.

    python -m tests.lesson_runs [PYTEST OPTIONS...]

The two runs go side by side when the system lets an ordinary process have its own network
namespace (`unshare -rn`, as Debian and Ubuntu do by default): each run's kernels then have a
loopback of their own. In one namespace, kernels started at the same instant can race for
the same free TCP port, and the loser never answers; that is why each run is one process, and
why, without namespaces, the two runs go one after the other. Each run's report is printed
whole, the first run's first; the exit status is the first failing run's.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

NBVAL = ["--nbval", "--nbval-current-env", "--nbval-sanitize-with", "lessons/nbval_sanitize.cfg"]
RUNS = (("torch's CPU kernels for this machine", {}),
        ("the default CPU kernels (ATEN_CPU_CAPABILITY=default)", {"ATEN_CPU_CAPABILITY": "default"}))
# `ip` lives in sbin, which an ordinary user's PATH may lack
IP = shutil.which("ip", path=os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"]))
# run a command in a new network namespace with its loopback up
IN_OWN_NETWORK = ["unshare", "--map-root-user", "--net", "sh", "-c", f'"{IP}" link set lo up && exec "$@"', "sh"]


def own_network_namespaces() -> bool:
    if IP is None or shutil.which("unshare") is None:
        return False
    return subprocess.run([*IN_OWN_NETWORK, "true"], capture_output=True).returncode == 0


def command(extra: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-p", "no:xdist", *NBVAL, *extra, "lessons"]


def main(extra: list[str]) -> int:
    if not own_network_namespaces():
        print("lesson runs: one after the other (no network namespace of our own here)", flush=True)
        status = 0
        for title, env in RUNS:
            print(f"\n== lessons with {title}", flush=True)
            status = status or subprocess.run(command(extra), env={**os.environ, **env}).returncode
        return status
    print("lesson runs: side by side, each in its own network namespace", flush=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="lesson-runs-") as logs:
        running = []
        for number, (title, env) in enumerate(RUNS):
            log = open(os.path.join(logs, f"run{number}.log"), "w+")
            running.append((title, log, subprocess.Popen([*IN_OWN_NETWORK, *command(extra)], stdout=log,
                                                         stderr=subprocess.STDOUT, env={**os.environ, **env})))
        status = 0
        for title, log, process in running:
            code = process.wait()
            log.seek(0)
            print(f"\n== lessons with {title} (exit {code})", flush=True)
            sys.stdout.write(log.read())
            log.close()
            status = status or code
    print(f"\nlesson runs: {time.monotonic() - started:.0f} s for both", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
