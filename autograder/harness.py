"""Inside the sandbox, in the forked child: run one notebook and report observations.

The child reads its job (cells, files) from a pipe, compiles the instructor's cells
(probes in a student's run, whole test cells in the reference run) *before* any student
code runs, then executes the cells in order. Student cells go through IPython (magics
work); instructor cells run with ``exec`` on the precompiled code, after the harness has
put back the pieces of the interpreter they lean on (module attributes, builtins, torch
global settings).

It writes JSON lines to the observation pipe: ``start``/``end`` per cell, ``call`` per case
(reference run) or ``out`` per probe result (student run), ``done`` at the end. None of a
student run's messages is trusted by the host; they are what the host judges.
"""
from __future__ import annotations

import base64
import builtins
import hashlib
import json
import os
import sys

from .observe import Converter, build

MAX_JOB_BYTES = 256 * 1024 * 1024
WORK_DIR = "/tmp/work"

# Captured at import (in the zygote, before any student code exists).
_write = os.write
_dumps = json.dumps
_compile = compile
_exec = exec
_BaseException = BaseException
_type = type
_str = str
# The builtins as they were before any student code ran: probes look names up here, so a
# notebook global called `isinstance` or a patched `builtins.all` does not change them.
_BUILTINS = dict(vars(builtins))


def _message(error: BaseException) -> str:
    try:
        text = _str(error)
    except BaseException:  # noqa: BLE001 - a student exception whose __str__ raises
        text = ""
    name = _type(error).__name__ if _type(_type(error).__name__) is str else "Exception"
    return (f"{name}: {text}" if text else name)[:2000]


class Snapshot:
    """Attribute values of the modules test code uses, taken before student code runs."""

    MODULES = ("torch", "torch.nn", "torch.nn.functional", "torch.autograd", "torch.testing",
               "numpy", "numpy.testing", "math", "random", "operator", "builtins", "json")

    def __init__(self):
        self.modules = {name: sys.modules[name] for name in self.MODULES if sys.modules.get(name) is not None}
        self.attributes = {name: dict(vars(module)) for name, module in self.modules.items()}
        self.classes = []
        torch = self.modules.get("torch")
        if torch is not None:
            for cls in (torch.Tensor, torch.nn.Module, torch.nn.Parameter, torch.autograd.Function):
                self.classes.append((cls, dict(vars(cls))))

    def restore(self, namespace: dict):
        for name, module in self.modules.items():
            sys.modules[name] = module
            current = vars(module)
            for key, value in self.attributes[name].items():
                if current.get(key, _MISSING) is not value:
                    try:
                        setattr(module, key, value)
                    except _BaseException:  # noqa: BLE001 - read-only attribute: leave it
                        pass
        for cls, attributes in self.classes:
            current = vars(cls)
            for key, value in attributes.items():
                if key in ("__dict__", "__weakref__", "__doc__"):
                    continue
                if current.get(key, _MISSING) is not value:
                    try:
                        setattr(cls, key, value)
                    except _BaseException:  # noqa: BLE001
                        pass
        aliases = {"torch": "torch", "np": "numpy", "numpy": "numpy", "math": "math",
                   "F": "torch.nn.functional", "nn": "torch.nn", "random": "random"}
        for alias, module_name in aliases.items():
            if alias in namespace and module_name in self.modules:
                namespace[alias] = self.modules[module_name]


_MISSING = object()


class Channel:
    def __init__(self, fd: int):
        self.fd = fd

    def send(self, **message):
        data = (_dumps(message, allow_nan=True, default=_str) + "\n").encode()
        view = memoryview(data)
        while view:
            written = _write(self.fd, view)
            view = view[written:]


class Recorder:
    """``__course_record__`` in the reference run: one message per ``check(...)`` call.

    Runs only in the instructor's own run. The probe gets a copy of its arguments rebuilt
    from the data the student's process will get, so both runs call it with the same values."""

    def __init__(self, channel: Channel, convert: Converter, namespace: dict):
        self.channel = channel
        self.convert = convert
        self.namespace = namespace
        self.cell = None
        self.count = 0

    def __call__(self, what, probe, args, expect, has_expect, how):
        number, self.count = self.count, self.count + 1
        args_data = self.convert(list(args))
        how = {"close": bool(how.get("close")), "rtol": float(how.get("rtol")), "atol": float(how.get("atol")),
               "agree": None if how.get("agree") is None else float(how["agree"]),
               "partial": how.get("partial") is True}
        message = {"t": "call", "cell": self.cell, "n": number, "probe": getattr(probe, "__name__", "?"),
                   "args": args_data, "what": _str(what)[:1000], "how": how}
        ref_error = ""
        try:
            got = probe(*build(args_data))
        except _BaseException as error:  # noqa: BLE001 - the instructor's solution fails its own probe
            got, ref_error = None, _message(error)
        if has_expect and not ref_error:
            compare = {key: how[key] for key in ("close", "rtol", "atol", "agree")}
            reason = self.namespace["mismatch"](got, expect, **compare)
            if reason:
                ref_error = _str(reason)
        message["expected"] = self.convert(expect if has_expect else got)
        message["ref_error"] = ref_error
        self.channel.send(**message)


def _run_probes(cell: dict, compiled, namespace: dict, channel: Channel, convert: Converter,
                snapshot: "Snapshot") -> None:
    """In the student's process: define the probes, call each with its arguments, send results.

    The probes see the student's names (that is what they call) but the original builtins and
    library modules; whatever else the student changes only changes the student's results."""
    snapshot.restore(namespace)
    torch = snapshot.modules.get("torch")
    if torch is not None:  # probes build their inputs with torch's defaults
        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)
        torch.use_deterministic_algorithms(False)
    probe_globals = {key: value for key, value in namespace.items() if key not in _BUILTINS}
    probe_globals["__builtins__"] = _BUILTINS
    _exec(compiled, probe_globals)
    functions = {name: probe_globals.get(name) for name in cell["names"]}
    for number, name, args in cell["calls"]:
        try:
            value = functions[name](*build(args))
            data = convert(value)
        except _BaseException as error:  # noqa: BLE001 - the student's code raised: that is its answer
            channel.send(t="out", cell=cell["index"], n=number, raised=_message(error))
            continue
        channel.send(t="out", cell=cell["index"], n=number, value=data)


def _cell_seed(grade_id: str) -> int:
    """The reference run's RNG seed for one test cell: fixed, so its recorded inputs are the
    same from batch to batch (the "0:" prefix keeps the values used so far)."""
    return int.from_bytes(hashlib.sha256(f"0:{grade_id}".encode()).digest()[:4], "little")


def _reset_globals(snapshot: Snapshot, namespace: dict, seed: int):
    sys.settrace(None)
    sys.setprofile(None)
    snapshot.restore(namespace)
    torch = snapshot.modules.get("torch")
    if torch is not None:
        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)
        torch.manual_seed(seed)
    numpy = snapshot.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed)
    import random
    random.seed(seed)


def read_job(fd: int) -> dict:
    chunks, total = [], 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        total += len(chunk)
        if total > MAX_JOB_BYTES:
            raise ValueError("job too large")
        chunks.append(chunk)
    os.close(fd)
    return json.loads(b"".join(chunks))


def _write_files(files):
    os.makedirs(WORK_DIR, exist_ok=True)
    for relative, encoded in files:
        path = os.path.normpath(os.path.join(WORK_DIR, relative))
        if not path.startswith(WORK_DIR + "/"):
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(base64.b64decode(encoded))


def run_job(job: dict, channel: Channel, shell, snapshot: Snapshot, convert: Converter) -> None:
    compiled = {}
    for cell in job["cells"]:
        if cell["kind"] in ("probe", "reference_test"):
            compiled[cell["index"]] = _compile(cell["source"], f"<test {cell['grade_id']}>", "exec")
            cell["source"] = ""  # no test source text left lying around for student code to find
    _write_files(job.get("files", []))
    os.chdir(WORK_DIR)
    namespace = shell.user_ns
    recorder = Recorder(channel, convert, namespace) if job.get("reference") else None
    if recorder is not None:
        namespace["__course_record__"] = recorder
    for cell in job["cells"]:
        index = cell["index"]
        channel.send(t="start", cell=index)
        if cell["kind"] in ("probe", "reference_test"):
            try:
                if cell["kind"] == "probe":
                    _run_probes(cell, compiled[index], namespace, channel, convert, snapshot)
                else:
                    recorder.cell, recorder.count = index, 0
                    _reset_globals(snapshot, namespace, _cell_seed(cell["grade_id"]))
                    _exec(compiled[index], namespace)
            except _BaseException as error:  # noqa: BLE001 - reported, the next cell still runs
                channel.send(t="end", cell=index, ok=False, error=_message(error))
                continue
            channel.send(t="end", cell=index, ok=True)
        else:
            try:
                result = shell.run_cell(cell["source"], store_history=False)
                error = result.error_in_exec or result.error_before_exec
            except _BaseException as raised:  # noqa: BLE001
                error = raised
            if error is None:
                channel.send(t="end", cell=index, ok=True)
            else:
                channel.send(t="end", cell=index, ok=False, error=_message(error))
    channel.send(t="done")


def make_shell():
    """An IPython shell without history or a kernel: student cells keep their magics."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "NoColor"
    config.InteractiveShell.xmode = "Plain"
    return InteractiveShell.instance(config=config)

