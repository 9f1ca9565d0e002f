"""The grader's parts on small inputs: value validation, cell restoration, the refusal of
old assert-form test cells, and the sandbox's walls."""
from __future__ import annotations

import os
import re
import sys
import shutil
from pathlib import Path

import nbformat
import pytest
import torch

from autograder.observe import Converter
from autograder.values import BadObservation, Opaque, rebuild
from coursebase.paths import CONFIG_RELATIVE_PATH, REPO


def _tensor(values, dtype="float32", subclass=None):
    return {"kind": "tensor", "dtype": dtype, "shape": [len(values)], "data": values,
            "requires_grad": False, "grad_fn": None, "subclass": subclass, "device": "cpu"}


def test_tensor_subclasses_come_back_as_plain_tensors_with_their_data():
    rebuilt = rebuild(_tensor([7.0], subclass="__main__.Liar"), "s")
    assert type(rebuilt) is torch.Tensor and torch.equal(rebuilt, torch.tensor([7.0]))
    assert rebuild(_tensor([0.5], "float64"), "s").dtype is torch.float64


def test_opaque_objects_equal_only_themselves():
    data = {"kind": "opaque", "mro": ["__main__.Truthy"], "id": 1}
    student, again, reference = rebuild(data, "s"), rebuild(data, "s"), rebuild(data, "r")
    assert student == again and student != reference and student != 1.0 and student != True  # noqa: E712


@pytest.mark.parametrize("data", [
    {"kind": "tensor", "dtype": "float32", "shape": [3], "data": [1.0]},
    {"kind": "tensor", "dtype": "evil", "shape": [1], "data": [1.0]},
    {"kind": "tensor", "dtype": "float32", "shape": [10**7], "data": []},
    {"kind": "pickle", "data": "gASV"},
    {"kind": "list", "items": "nope"},
    {"kind": "opaque", "mro": "x", "id": 1},
])
def test_malformed_observations_are_rejected(data):
    with pytest.raises(BadObservation):
        rebuild(data, "s")


def test_rebuild_round_trip():
    assert torch.equal(rebuild(_tensor([1.0, 2.0]), "s"), torch.tensor([1.0, 2.0]))
    assert rebuild({"kind": "size", "dims": [2, 3]}, "s") == torch.Size([2, 3])
    assert rebuild({"kind": "dtype", "name": "float64"}, "s") is torch.float64
    assert isinstance(rebuild({"kind": "opaque", "mro": ["a.B"], "id": 3}, "s"), Opaque)


def _notebook(cells):
    nb = nbformat.v4.new_notebook()
    for source, meta in cells:
        cell = nbformat.v4.new_code_cell(source)
        if meta:
            cell.metadata["nbgrader"] = meta
        nb.cells.append(cell)
    return nb


PROBE_TEST = "@probe\ndef _f():\n    return f()\ncheck('f()', _f, expect=1)"
OLD_FORM_TEST = "assert f() == 1"


def test_plan_restores_deleted_edited_and_duplicated_cells(tmp_path):
    from autograder.plan import build_plan, load_spec

    test = {"grade": True, "solution": False, "locked": True, "points": 2, "grade_id": "t1"}
    answer = {"grade": False, "solution": True, "grade_id": "a1"}
    source = _notebook([("def f():\n    return 1", answer), (PROBE_TEST, test),
                        (PROBE_TEST.replace("expect=1", "expect=2"), {**test, "grade_id": "t2"})])
    path = tmp_path / "a.ipynb"
    nbformat.write(source, str(path))
    spec = load_spec("a", "a", path)
    student = _notebook([("def f():\n    return 2", answer), ("pass", {**test, "points": 99}),
                         ("pass", {**test, "points": 99})])
    plan = build_plan(spec, student)
    assert [c["kind"] for c in plan.cells] == ["code", "probe", "probe"]
    assert plan.cells[0]["source"].endswith("return 2")
    assert plan.cells[1]["names"] == ["_f"] and "expect" not in plan.cells[1]["source"]
    notes = " | ".join(plan.notes)
    assert "t1 edited" in notes and "t1 duplicated" in notes and "t2 deleted" in notes
    assert spec.max_score == 4


def _instructor_notebook(tmp_path, second_test: str):
    test = {"grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "test_f"}
    notebook = _notebook([("def f():\n    return 1", {"grade": False, "solution": True, "grade_id": "f"}),
                          (PROBE_TEST, test), (second_test, {**test, "grade_id": "test_old"})])
    path = tmp_path / "solutions" / "a" / "a.ipynb"
    path.parent.mkdir(parents=True)
    nbformat.write(notebook, str(path))
    (tmp_path / "course").mkdir()   # a course of its own: `course release --root` needs its configuration
    shutil.copy(REPO / CONFIG_RELATIVE_PATH, tmp_path / CONFIG_RELATIVE_PATH)
    return path


def _scratch_course(root: Path):
    """A course at ``root`` with its folders there, and no gradebook (an in-memory one)."""
    from traitlets.config import Config

    from coursebase.model import Course

    config = Config()
    config.CourseDirectory.update(root=str(root), course_id="c", db_url="sqlite://", source_directory="solutions",
                                  submitted_directory="submitted", autograded_directory="autograded",
                                  feedback_directory="feedback")
    config.Exchange.root = str(root / "exchange")
    return Course(root, config)


OLD_FORM_MESSAGE = ("test cell 'test_old' is in the old assert form (it defines no @probe function); "
                    "the grader no longer grades that form")


def test_old_assert_form_test_cells_are_refused_naming_the_cell(tmp_path, capsys):
    from coursebase.model import Course
    from autograder.grade import Grader, GradingError
    from autograder.plan import load_spec
    from autograder.probes import OldFormTestCell
    from course.release import old_form_problems
    from course.self_check import EXIT_UNUSABLE, validate_notebook

    path = _instructor_notebook(tmp_path, OLD_FORM_TEST)
    with pytest.raises(OldFormTestCell, match=re.escape(OLD_FORM_MESSAGE)):
        load_spec("a", "a", path)
    course = _scratch_course(tmp_path)
    with pytest.raises(GradingError, match=re.escape("cannot grade a: " + OLD_FORM_MESSAGE)):
        Grader(course, "a")
    assert not (tmp_path / "autograded").exists()  # no seed file, nothing written
    [problem] = old_form_problems(["a"], tmp_path)
    assert problem.endswith("a.ipynb: " + OLD_FORM_MESSAGE + ": rewrite the cell with @probe functions "
                            "and check(...) calls (see solutions/README.md)")
    assert validate_notebook(path) == EXIT_UNUSABLE
    assert OLD_FORM_MESSAGE in capsys.readouterr().err


@pytest.mark.slow
def test_validate_without_the_graders_code_runs_nbgrader_in_a_kernel(tmp_path, monkeypatch, capsys):
    """Where the grader's code cannot run (not Linux), Validate falls back to nbgrader's Validator
    in a Jupyter kernel: it says so, refuses what is not a notebook, and a blank release fails."""
    import course.self_check as self_check

    monkeypatch.setattr(self_check, "grader_available", lambda: False)
    not_json = tmp_path / "broken.ipynb"
    not_json.write_text("{")
    assert self_check.validate_notebook(not_json) == self_check.EXIT_UNUSABLE
    assert "is not a notebook (invalid JSON" in capsys.readouterr().err
    blank = REPO / "assignments" / "02_devices" / "02_devices.ipynb"
    assert self_check.validate_notebook(blank) == self_check.EXIT_FAILED
    printed = capsys.readouterr().out
    assert "the grader's code cannot run here" in printed and "0 of 16 points" in printed, printed


def test_an_assignment_that_forbids_torch_runs_every_probe_without_it(tmp_path):
    from coursebase.model import Course
    from autograder.grade import Grader

    path = _instructor_notebook(tmp_path, PROBE_TEST.replace("@probe", "@probe(torch=False)"))
    course = _scratch_course(tmp_path)
    assert Grader(course, "a").kinds == [True, False]  # one probe cell allows torch, one does not
    notebook = nbformat.read(str(path), as_version=4)
    notebook.metadata["course"] = {"forbid_torch": True}
    nbformat.write(notebook, str(path))
    assert Grader(course, "a").kinds == [False]


def test_probe_form_notebooks_are_not_refused(tmp_path):
    from autograder.plan import load_spec
    from course.release import old_form_problems

    path = _instructor_notebook(tmp_path, PROBE_TEST)
    assert [c.probes.names for c in load_spec("a", "a", path).tests] == [["_f"], ["_f"]]
    assert old_form_problems(["a"], tmp_path) == []


@pytest.fixture(scope="module")
def sandbox():
    from autograder.sandbox import Limits, Sandbox
    with Sandbox(Limits(wall_seconds=10, cpu_seconds=10)) as box:
        yield box


def _run(sandbox, source, torch_allowed=True):
    """Run a student cell, then a probe returning its variable ``seen``: (outcome, value data)."""
    job = {"files": [["data/x.txt", "aGk="]],
           "cells": [{"index": 0, "kind": "code", "source": source, "grade_id": None},
                     {"index": 1, "kind": "probe", "grade_id": "t", "source": "def _seen():\n    return seen",
                      "names": ["_seen"], "torch": torch_allowed, "calls": [[0, "_seen", Converter()([])]]}]}
    outcome = sandbox.run(job)
    outs = [m for m in outcome.messages if m.get("t") == "out"]
    return outcome, (outs[0].get("value") if outs else None)


@pytest.mark.slow
def test_sandbox_walls(sandbox, tmp_path):
    from autograder.sandbox import REPO
    probe = (
        "import os, socket\n"
        "def can(f):\n"
        "    try:\n        f(); return True\n    except Exception:\n        return False\n"
        f"seen = [os.path.exists('{REPO / 'solutions'}') or os.path.exists('{REPO / 'course'}'),\n"
        f"         os.path.exists('{tmp_path}'), os.path.exists('/root/.bashrc'),\n"
        "         can(lambda: socket.create_connection(('1.1.1.1', 80), timeout=1)),\n"
        "         can(lambda: open('/usr/x', 'w')), open('data/x.txt').read(), os.getcwd(), os.getuid()]\n"
        "leftover = open('/tmp/mark', 'w').write('x')\n"
    )
    outcome, value = _run(sandbox, probe)
    seen = [item if not isinstance(item, dict) else item.get("text") for item in value["items"]]
    assert seen == [False, False, False, False, False, "hi", "/tmp/work", 65534]
    # A new child sees none of the previous one's files or globals.
    outcome, value = _run(sandbox, "import os\nseen = [os.path.exists('/tmp/mark'), 'leftover' in globals()]")
    assert value["items"] == [False, False]


@pytest.mark.slow
def test_the_sandbox_names_no_host_folder_and_no_host_user(sandbox):
    """Issue 31: the host's /etc/passwd (on a class server, every student's login) and a mount
    table naming where the checkout and the Python live were readable. Now: a passwd and group
    of the sandbox's own; no mount table, no other process in /proc; the Python, packages
    and course code at fixed places under /opt; an editable install's files naming the
    checkout read as empty."""
    from autograder.sandbox import REPO
    source = (
        "import os, sys, glob\n"
        "def read(path):\n"
        "    try:\n        with open(path, 'rb') as f:\n            return f.read().decode(errors='replace')\n"
        "    except OSError as error:\n        return type(error).__name__\n"
        "texts = [read('/etc/passwd'), read('/etc/group'), read('/proc/self/mountinfo'), read('/proc/mounts'),\n"
        "         read('/proc/1/mountinfo'), read('/proc/self/mounts'), read('/proc/self/status')[:5]]\n"
        "for pattern in ('/opt/site-packages/*/__editable__*', '/opt/site-packages/*/*.pth',\n"
        "                '/opt/site-packages/*/*.dist-info/direct_url.json'):\n"
        "    texts += [read(path) for path in glob.glob(pattern)]\n"
        "import torch, numpy, autograder\n"
        "paths = [sys.prefix, sys.base_prefix, sys.executable, torch.__file__, numpy.__file__, autograder.__file__,\n"
        "         *sys.path, os.getcwd()]\n"
        "seen = [texts, paths, sorted(os.listdir('/proc')), os.cpu_count()]\n")
    outcome, value = _run(sandbox, source)
    assert value is not None, outcome.messages
    texts, paths, proc, cpus = (item if not isinstance(item, dict) else item for item in value["items"])
    texts = [t if isinstance(t, str) else t.get("text") for t in texts["items"]]
    paths = [p if isinstance(p, str) else p.get("text") for p in paths["items"]]
    assert texts[0].splitlines() == ["root:x:0:0:root:/root:/usr/sbin/nologin",
                                     "nobody:x:65534:65534:nobody:/tmp/home:/usr/sbin/nologin"], texts[0]
    assert texts[1].splitlines() == ["root:x:0:", "nogroup:x:65534:"]
    assert texts[2:6] == ["FileNotFoundError"] * 4, texts[2:6]
    assert texts[6] == "Name:"
    host = [str(REPO), str(REPO.parent), sys.prefix, sys.base_prefix, os.path.realpath(sys.base_prefix)]
    # a host path counts as named where it stands as a whole path (the sandbox's own /tmp/work
    # names no checkout under /work)
    named = {name: re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])") for name in host if name and name != "/"}
    leaks = [(text[:80], name) for text in texts + paths for name, pattern in named.items() if pattern.search(text)]
    assert not leaks, leaks
    assert all(p == "" or p.startswith(("/opt/", "/tmp")) for p in paths), paths
    assert [p for p in proc["items"] if p.isdigit()] == [], proc   # no other process, not even its own
    assert isinstance(cpus, int) and cpus >= 1


@pytest.mark.slow
def test_memory_the_address_space_limit_does_not_count_is_refused(sandbox):
    """memfd_create (pages written with write() are mapped nowhere: RLIMIT_AS never sees them;
    it grew the host's shared memory 1.5 GiB past a 256 MiB limit), System V shared memory and
    message queues: refused by the seccomp filter; /dev/shm and /tmp are tmpfs of fixed size."""
    source = (
        "import os, ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "def errno_of(call):\n"
        "    try:\n        call(); return 0\n    except OSError as error:\n        return error.errno\n"
        "def c_errno(result):\n    return ctypes.get_errno() if result == -1 else 0\n"
        "shm = os.statvfs('/dev/shm')\n"
        "seen = [errno_of(lambda: os.memfd_create('x')),\n"
        "        c_errno(libc.shmget(0, 1 << 20, 0o1600)), c_errno(libc.msgget(0, 0o1600)),\n"
        "        shm.f_blocks * shm.f_frsize]\n")
    outcome, value = _run(sandbox, source)
    assert value is not None, outcome.messages
    import errno
    memfd, shmget, msgget, shm_bytes = value["items"]
    assert (memfd, shmget, msgget) == (errno.EPERM,) * 3, value
    assert shm_bytes <= 64 * 1024**2


@pytest.mark.slow
def test_a_blank_answer_caught_by_a_probe_is_marked_unanswered(sandbox):
    """A probe that catches RuntimeError (NotImplementedError's base) gets ['RuntimeError', '']
    from a blank answer; the run marks that case, so the host says "not answered yet"."""
    job = {"files": [], "cells": [
        {"index": 0, "kind": "code", "grade_id": "f", "source": "def f(x):\n    raise NotImplementedError()"},
        {"index": 1, "kind": "probe", "grade_id": "t", "names": ["_f"], "torch": True,
         "source": "def _f(x):\n    try:\n        return f(x)\n    except RuntimeError as error:\n"
                   "        return [type(error).__mro__[1].__name__, str(error)]",
         "calls": [[0, "_f", Converter()([1])]]},
        {"index": 2, "kind": "code", "grade_id": "g", "source": "def f(x):\n    return x"},
        {"index": 3, "kind": "probe", "grade_id": "u", "names": ["_f"], "torch": True,
         "source": "def _f(x):\n    return f(x)", "calls": [[0, "_f", Converter()([1])]]}]}
    outs = [m for m in sandbox.run(job).messages if m.get("t") == "out"]
    assert [(m["cell"], m.get("unanswered", False)) for m in outs] == [(1, True), (3, False)], outs


@pytest.mark.slow
def test_sandbox_limits_processes(sandbox):
    source = ("import os, time\nn = 0\ntry:\n    for _ in range(500):\n        if os.fork() == 0:\n"
              "            time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError:\n    pass\nseen = n")
    outcome, forked = _run(sandbox, source)
    assert 0 < forked < 100
    assert outcome.end["how"] == "exit"


@pytest.mark.slow
def test_exercises_that_forbid_torch_run_without_it():
    """An unused import of torch or numpy costs nothing; using one raises an error naming the
    rule; and behind the stand-ins there is nothing: torch, numpy and sympy are empty
    folders, reftorch is not there at all."""
    from autograder.sandbox import Limits, Sandbox
    source = (
        "import torch, numpy as np\nfrom torch import nn\nimport torch.nn.functional as F\n"
        "def use(f):\n    try:\n        f(); return 'used'\n    except ImportError as error:\n        return str(error)\n"
        "seen = [use(lambda: torch.tensor([1.0])), use(lambda: np.zeros(2)), use(lambda: F.relu)]\n"
        "import sys\nsys.meta_path.pop(0)\n"
        "for name in ('torch', 'numpy', 'sympy', 'reftorch'):\n    sys.modules.pop(name, None)\n"
        "def real(name):\n    try:\n        return [n for n in dir(__import__(name)) if not n.startswith('__')]\n"
        "    except ImportError:\n        return 'missing'\n"
        "seen += [real('torch'), real('numpy'), real('sympy'), real('reftorch')]")
    with Sandbox(Limits(wall_seconds=10, cpu_seconds=10), with_torch=False) as box:
        outcome, value = _run(box, source, torch_allowed=False)
    items = value["items"]
    assert items[0].startswith("torch.tensor: torch is not available in this exercise"), items[0]
    assert items[1].startswith("numpy.zeros: numpy is not available in this exercise"), items[1]
    assert items[2] == "used"   # naming something is not using it
    assert items[3:] == [{"kind": "list", "items": [], "truncated": False}] * 3 + ["missing"], items[3:]


@pytest.mark.slow
def test_validate_without_bubblewrap_runs_the_same_zygote_as_plain_processes(tmp_path, monkeypatch):
    """Unsandboxed (a student's Validate where bwrap is missing): the same stand-ins and
    messages without torch, each notebook in a folder of its own with its files, a fresh child
    per notebook, and nothing the notebook started outlives it; its folders go on close."""
    from autograder.sandbox import Limits, Unsandboxed
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    source = ("import os, subprocess, numpy as np\n"
              "def use(f):\n    try:\n        f(); return 'used'\n    except ImportError as error:\n        return str(error)\n"
              "sleeper = subprocess.Popen(['sleep', '60'], start_new_session=True)\n"
              "seen = [use(lambda: np.zeros(2)), open('data/x.txt').read(), os.path.basename(os.getcwd()), sleeper.pid]")
    box = Unsandboxed(Limits(wall_seconds=20, cpu_seconds=20), with_torch=False)
    try:
        outcome, value = _run(box, source, torch_allowed=False)
        error, text, folder, sleeper = value["items"]
        assert error.startswith("numpy.zeros: numpy is not available in this exercise"), error
        assert (text, folder) == ("hi", "work")
        assert not os.path.exists(f"/proc/{sleeper}"), "a process the notebook started outlived it"
        outcome, value = _run(box, "seen = ['sleeper' in globals(), 'np' in globals()]", torch_allowed=False)
        assert value["items"] == [False, False]
        assert box.alive and not outcome.end.get("restart")
    finally:
        box.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_run_without_torch_finds_no_numpy_in_any_package_folder():
    # The interpreter's own site-packages (pyenv's holds numpy here) and Debian's dist-packages
    # are covered: appending them to sys.path finds nothing, and each looks empty. The notebook
    # first removes the stand-ins' finder (its own process: it may), so the file system decides.
    from autograder.sandbox import Limits, Sandbox, _other_package_folders, choose_interpreter
    folders = _other_package_folders(choose_interpreter()[1], [])
    source = (f"import os, sys\nfolders = {folders!r}\nsys.path.extend(folders)\n"
              "sys.meta_path[:] = [f for f in sys.meta_path if type(f).__module__ != 'autograder.forbidden']\n"
              "sys.modules.pop('numpy', None)\n"
              "try:\n    import numpy\n    found = numpy.__file__\nexcept ImportError:\n    found = None\n"
              "seen = [found, sorted(f for f in folders if os.path.isdir(f) and os.listdir(f))]")
    with Sandbox(Limits(wall_seconds=10, cpu_seconds=10), with_torch=False) as box:
        outcome, value = _run(box, source, torch_allowed=False)
    assert value is not None, outcome.messages
    found, non_empty = value["items"]
    assert found is None and non_empty["items"] == [], value


def test_sandbox_sees_packages_wherever_the_checkout_lives(monkeypatch, tmp_path):
    """A checkout (and its .venv) under /tmp must not vanish under the sandbox's own /tmp, and
    as root every host folder reaches bwrap through the launcher's private stage, never by a
    path that nobody would have to walk."""
    from autograder import sandbox as sandbox_module
    fake_site = tmp_path / ".venv" / "lib" / "python3.11" / "site-packages"
    (fake_site / "torch").mkdir(parents=True)
    monkeypatch.setattr(sandbox_module, "_site_packages", lambda: [str(fake_site)])
    for with_torch in (True, False):
        command = sandbox_module.bwrap_command(3, sandbox_module.Limits(), with_torch, seccomp_fd=4)
        bwrap = command[command.index("bwrap"):]
        bound = [(bwrap[i + 1], bwrap[i + 2]) for i, word in enumerate(bwrap) if word in ("--ro-bind", "--bind")]
        assert not any(inside.startswith("/tmp") for _, inside in bound), bound
        if os.geteuid() == 0:
            start = command.index("course-sandbox") + 1
            staged = command[start:command.index("--", start)]
            assert str(fake_site) in staged and str(fake_site) not in bwrap
            system = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64"}
            from_host = {outside for outside, _ in bound if outside not in system and not outside.startswith("/etc/")}
            assert all(p.startswith(sandbox_module.STAGE + "/") for p in from_host), from_host
        else:
            assert str(fake_site) in bwrap
        search_path = command[command.index("COURSE_SITE_PACKAGES") + 1]
        assert search_path and not search_path.startswith("/tmp"), search_path
