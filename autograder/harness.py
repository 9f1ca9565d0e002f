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
import operator
import os
import sys

from . import structure
from .observe import Converter, build
from .written import rule_of

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
_len, _all, _map, _is = len, all, map, operator.is_
# The builtins as they were before any student code ran: probes look names up here, so a
# notebook global called `isinstance` or a patched `builtins.all` does not change them.
_BUILTINS = dict(vars(builtins))
# The grading tools' structural facts, as the grader reads them (see autograder.structure).
_STRUCTURE = {"class_chain": structure.class_chain, "graph_nodes": structure.graph_nodes,
              "reachable": structure.reachable, "code_of": structure.code_of}


class _Unanswered:
    """Counts the ``NotImplementedError``s student code raises, caught or not.

    A blank answer still holds the release's ``raise NotImplementedError()``; a probe that
    catches ``RuntimeError`` (its base class) would otherwise report ``['RuntimeError', '']``
    as the student's result. The count only changes the words of a failing case's message
    ("not answered yet"), never whether it passes: a notebook that undoes it loses nothing
    but that wording."""

    count = 0

    @classmethod
    def install(cls) -> None:
        """In the zygote, before the library snapshot: student code's ``NotImplementedError``
        is a subclass that counts itself (probes keep the original, see ``_BUILTINS``)."""
        original = builtins.NotImplementedError

        class NotImplementedError(original):   # noqa: A001 - the name students see
            __module__ = "builtins"

            def __init__(self, *args):
                cls.count += 1
                original.__init__(self, *args)

        NotImplementedError.__qualname__ = "NotImplementedError"
        builtins.NotImplementedError = NotImplementedError


install_unanswered_marker = _Unanswered.install


def _message(error: BaseException) -> str:
    try:
        text = _str(error)
    except BaseException:  # noqa: BLE001 - a student exception whose __str__ raises
        text = ""
    name = _type(error).__name__ if _type(_type(error).__name__) is str else "Exception"
    return (f"{name}: {text}" if text else name)[:2000]


class Snapshot:
    """Attribute values of the modules test code uses, taken before student code runs, and of
    the library classes probes use: put back before each test cell's probes (a notebook that
    made torch.autograd.graph.saved_tensors_hooks a no-op, or rebound torch.optim.Optimizer,
    changed what a probe measured). ~1 ms a test cell for ~250 modules."""

    MODULES = ("torch", "torch._C", "torch._C._nn", "torch._C._autograd", "torch._C._functions",
               "torch.functional", "torch._tensor", "torch.random", "torch.overrides", "torch.library",
               "torch.utils.checkpoint", "torch.utils.hooks", "torch.utils._python_dispatch",
               "numpy", "numpy.linalg", "numpy.random", "numpy.testing",
               "math", "random", "operator", "builtins", "json", "functools", "contextlib", "weakref", "gc")
    # every module below these, as loaded when the zygote starts
    PACKAGES = ("torch.nn", "torch.autograd", "torch.optim", "torch.fx", "torch.func", "torch.utils.data",
                "torch.testing")
    CLASSES = ("torch.Tensor", "torch.nn.Module", "torch.nn.Parameter", "torch.autograd.Function",
               "torch.autograd.graph.saved_tensors_hooks", "torch.autograd.grad_mode.no_grad",
               "torch.autograd.grad_mode.enable_grad", "torch.autograd.grad_mode.set_grad_enabled",
               "torch.optim.Optimizer", "torch.optim.SGD", "torch.optim.RMSprop", "torch.optim.Adagrad",
               "torch.nn.modules.batchnorm._NormBase", "torch.nn.modules.batchnorm._BatchNorm",
               "torch.nn.BatchNorm1d", "torch.nn.BatchNorm2d", "torch.nn.Linear", "torch.nn.Sequential")

    def __init__(self):
        names = [name for name in sys.modules if name in self.MODULES or name in self.PACKAGES
                 or name.startswith(tuple(f"{package}." for package in self.PACKAGES))]
        self.modules = {name: sys.modules[name] for name in names
                        if sys.modules.get(name) is not None and hasattr(sys.modules[name], "__dict__")}
        self.attributes = {name: dict(vars(module)) for name, module in self.modules.items()}
        self.values = {name: list(saved.values()) for name, saved in self.attributes.items()}
        self.classes = []
        for dotted in self.CLASSES:
            module_name, _, attribute = dotted.rpartition(".")
            cls = getattr(sys.modules.get(module_name), attribute, None)
            if isinstance(cls, type):
                self.classes.append((cls, dict(vars(cls))))

    def restore(self, namespace: dict):
        for name, module in self.modules.items():
            sys.modules[name] = module
            current = vars(module)
            if _len(current) == _len(self.values[name]) and _all(_map(_is, current.values(), self.values[name])):
                continue   # untouched (the usual case): thousands of attributes checked at C speed
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
    """``tools._recorder`` in the reference run: one message per ``check(...)`` call.

    Runs only in a trusted run: the instructor's own notebook (grading) or the test cells of
    the notebook being validated, without its answers (Validate). The probe gets a copy of its
    arguments rebuilt from the data the student's process will get, so both runs call it
    with the same values. A case is *hidden* when the check runs from a line of the cell's
    hidden-tests region; its arguments never reach a student run that feedback is drawn from.
    A case without ``expect=`` is compared with the instructor's own result only when hidden;
    a visible one checks the form (the probe returns), the same in grading and in Validate."""

    def __init__(self, channel: Channel, convert: Converter, namespace: dict, validate: bool = False):
        self.channel = channel
        self.convert = convert
        self.namespace = namespace
        self.validate = validate
        self.cell = None
        self.filename = ""
        self.hidden_lines: frozenset = frozenset()
        self.count = 0
        self.seed_key: str | None = None   # the student whose own hidden cases are being drawn

    def _hidden(self) -> bool:
        """Whether the cell's top-level statement running now is in its hidden region."""
        frame, line = sys._getframe(2), None
        while frame is not None:
            if frame.f_code.co_filename == self.filename:
                line = frame.f_lineno      # the outermost frame of the cell: its top level
            frame = frame.f_back
        return line in self.hidden_lines

    def __call__(self, what, probe, args, expect, has_expect, how):
        number, self.count = self.count, self.count + 1
        hidden = self._hidden()
        args_data = self.convert(list(args))
        code = how.get("code")
        how = {"close": bool(how.get("close")), "rtol": float(how.get("rtol")), "atol": float(how.get("atol")),
               "agree": None if how.get("agree") is None else float(how["agree"]),
               "partial": how.get("partial") is True}
        if code is not None:   # a code check (tools.check_code): the host judges it on the notebook's cells
            how["code"] = rule_of(code)
        message = {"t": "call", "cell": self.cell, "n": number, "probe": getattr(probe, "__name__", "?"),
                   "args": args_data, "what": _str(what)[:1000], "how": how, "hidden": hidden,
                   "form_only": not has_expect and code is None and (self.validate or not hidden)}
        ref_error, got = "", None
        if not self.validate:   # Validate has no instructor's answers to run the probe on
            try:
                got = probe(*build(args_data))
            except _BaseException as error:  # noqa: BLE001 - the instructor's solution fails its own probe
                ref_error = _message(error)
            if has_expect and not ref_error:
                compare = {key: how[key] for key in ("close", "rtol", "atol", "agree")}
                reason = self.namespace["mismatch"](got, expect, **compare)
                if reason:
                    ref_error = _str(reason)
        message["expected"] = None if message["form_only"] else self.convert(expect if has_expect else got)
        message["ref_error"] = ref_error
        if self.seed_key is not None and hidden:
            message["seed"] = self.seed_key
        self.channel.send(**message)


def _probe_scope(namespace: dict, snapshot: "Snapshot") -> dict:
    """The globals a test cell's probes run with: the student's names as they are bound at
    that cell, the original builtins, library modules and torch defaults put back."""
    snapshot.restore(namespace)
    _reset_torch_defaults(snapshot)
    scope = {key: value for key, value in namespace.items() if key not in _BUILTINS}
    scope["__builtins__"] = _BUILTINS
    scope.update(_STRUCTURE)
    return scope


def _reset_torch_defaults(snapshot: "Snapshot") -> None:
    torch = snapshot.modules.get("torch")
    if torch is not None:  # probes build their inputs with torch's defaults
        torch.set_grad_enabled(True)
        torch.set_default_dtype(torch.float32)
        # The public setter imports torch._inductor: about a second per notebook.
        torch._C._set_deterministic_algorithms(False, warn_only=False)


def _call_probes(cell_index: int, calls, scope: dict, channel: Channel, convert: Converter) -> None:
    """Each case: the probe called on fresh arguments, its result (or exception) sent as data."""
    for number, name, args in calls:
        before = _Unanswered.count
        try:
            function = scope.get(name)
            if function is None:
                raise NameError(f"name {name!r} is not defined")
            value = function(*build(args))
            data = convert(value)
        except _BaseException as error:  # noqa: BLE001 - the student's code raised: that is its answer
            channel.send(t="out", cell=cell_index, n=number, raised=_message(error))
            continue
        if _Unanswered.count != before:   # a blank answer's NotImplementedError, caught on the way
            channel.send(t="out", cell=cell_index, n=number, value=data, unanswered=True)
        else:
            channel.send(t="out", cell=cell_index, n=number, value=data)


def _run_hidden(fd: int, scopes: dict, channel: Channel, convert: Converter, snapshot: "Snapshot",
                beat_fd: int | None = None) -> None:
    """After every cell ran: the hidden cases, which the host sends only now. Nothing that
    happens from here on is shown to the student (see :mod:`autograder.judge`)."""
    try:
        payload = read_job(fd)
    except _BaseException:  # noqa: BLE001 - no hidden cases reach us: each counts as no result
        return
    for cell in payload.get("cells", []):
        scope = scopes.get(cell["index"])
        if scope is None:   # this test cell's probes were never defined
            continue
        _beat(beat_fd)
        channel.send(t="hidden_start", cell=cell["index"])
        snapshot.restore(scope)
        _reset_torch_defaults(snapshot)
        try:
            _exec(_compile(cell["source"], f"<test {cell['grade_id']}>", "exec"), scope)
        except _BaseException:  # noqa: BLE001
            continue
        _call_probes(cell["index"], cell["calls"], scope, channel, convert)


def _hidden_part(source: str, filename: str, hidden_lines) -> object | None:
    """The top-level statements of a test cell that lie in its hidden-tests region, compiled
    with their own line numbers (so the recorder sees them as hidden); None when none do."""
    import ast
    lines = set(hidden_lines)
    tree = ast.parse(source)
    body = [node for node in tree.body if lines & set(range(node.lineno, (node.end_lineno or node.lineno) + 1))]
    return _compile(ast.Module(body, type_ignores=[]), filename, "exec") if body else None


def _draw_for_students(index: int, grade_id: str, hidden, seeds: dict, recorder, channel, snapshot,
                       namespace: dict, beat_fd) -> None:
    """The cell's hidden checks again, once per student, each drawn from that student's seed
    (Hypothesis's examples and torch's, numpy's and random's generators): cases tagged with
    the student, expected values computed here as for the shared ones. A draw that fails
    is reported; that student keeps the shared hidden cases of this cell."""
    from . import tools
    for student, seed in seeds.items():
        _beat(beat_fd)
        mixed = int.from_bytes(hashlib.sha256(f"{_cell_seed(grade_id)}:{seed}".encode()).digest()[:4], "little")
        _reset_globals(snapshot, namespace, mixed)
        tools._seed, recorder.seed_key = mixed, student
        try:
            _exec(hidden, namespace)
        except _BaseException as error:  # noqa: BLE001 - this student keeps the shared cases
            channel.send(t="seed_error", cell=index, seed=student, error=_message(error))
        finally:
            tools._seed, recorder.seed_key = None, None


def _cell_seed(grade_id: str) -> int:
    """The reference run's RNG seed for one test cell: fixed, so its recorded inputs are the
    same from batch to batch (the "0:" prefix keeps the values used so far)."""
    return int.from_bytes(hashlib.sha256(f"0:{grade_id}".encode()).digest()[:4], "little")


def _reset_globals(snapshot: Snapshot, namespace: dict, seed: int):
    sys.settrace(None)
    sys.setprofile(None)
    snapshot.restore(namespace)
    namespace.update(_STRUCTURE)   # the instructor's run reads facts as the students' runs do
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


def _beat(fd: int | None) -> None:
    """Tell the zygote a cell begins: each cell has its own time limit (see zygote._watch)."""
    if fd is not None:
        try:
            _write(fd, b".")
        except OSError:
            pass


def run_job(job: dict, channel: Channel, shell, snapshot: Snapshot, convert: Converter,
            hidden_fd: int | None = None, beat_fd: int | None = None) -> None:
    """Every cell in order. In a student's run, each test cell's probes are defined at its
    place and called on the visible cases; then ``visible_done`` is sent and the hidden cases
    (read from ``hidden_fd``, written by the host only after it has read that line) run with
    the probes each cell defined, on the names as they were bound at that cell."""
    compiled, hidden_parts = {}, {}
    seeds = (job.get("seeds") or {}) if job.get("reference") else {}
    for cell in job["cells"]:
        if cell["kind"] in ("probe", "reference_test"):
            compiled[cell["index"]] = _compile(cell["source"], f"<test {cell['grade_id']}>", "exec")
            if seeds and cell["kind"] == "reference_test":
                part = _hidden_part(cell["source"], f"<test {cell['grade_id']}>", cell.get("hidden_lines", ()))
                if part is not None:
                    hidden_parts[cell["index"]] = part
            cell["source"] = ""  # no test source text left lying around for student code to find
    _write_files(job.get("files", []))
    os.chdir(WORK_DIR)
    namespace = shell.user_ns
    recorder = None
    if job.get("reference"):
        recorder = Recorder(channel, convert, namespace, validate=bool(job.get("validate")))
        from . import tools   # here, not in the zygote: it imports torch (a stand-in, in a run without it)
        tools._recorder = recorder
    scopes: dict[int, dict] = {}
    last = job.get("stop_after")
    for cell in job["cells"]:
        index = cell["index"]
        if last is not None and index > last:
            break
        if cell.get("skip"):   # it stopped an earlier run of this notebook: the host says why
            continue
        _beat(beat_fd)
        channel.send(t="start", cell=index)
        if cell["kind"] in ("probe", "reference_test"):
            try:
                if cell["kind"] == "probe":
                    scope = scopes[index] = _probe_scope(namespace, snapshot)
                    _exec(compiled[index], scope)
                    _call_probes(index, cell["calls"], scope, channel, convert)
                else:
                    recorder.cell, recorder.count = index, 0
                    recorder.filename = f"<test {cell['grade_id']}>"
                    recorder.hidden_lines = frozenset(cell.get("hidden_lines", ()))
                    _reset_globals(snapshot, namespace, _cell_seed(cell["grade_id"]))
                    _exec(compiled[index], namespace)
                    if index in hidden_parts:
                        _draw_for_students(index, cell["grade_id"], hidden_parts[index], seeds, recorder, channel,
                                           snapshot, namespace, beat_fd)
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
                channel.send(t="end", cell=index, ok=False, error=_cell_error(error))
    if hidden_fd is not None and not job.get("reference") and not job.get("hidden_only"):
        channel.send(t="visible_done")
        _run_hidden(hidden_fd, scopes, channel, convert, snapshot, beat_fd)
    channel.send(t="done")


def _cell_error(error: BaseException) -> str:
    """A student cell's error, with the line of that cell it happened on."""
    text = _message(error)
    try:
        if isinstance(error, SyntaxError):
            name = _type(error).__name__ if _type(_type(error).__name__) is str else "SyntaxError"
            where = f" (line {error.lineno})" if _type(error.lineno) is int else ""
            return f"{name}: {_str(error.msg)[:300]}{where}"
        line, tb = None, error.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename.startswith("<ipython-input-"):
                line = tb.tb_lineno
            tb = tb.tb_next
    except _BaseException:  # noqa: BLE001 - an exception object built to break this
        return text
    return f"{text} (line {line})" if _type(line) is int else text


def warm_up(with_torch: bool) -> None:
    """In the zygote: import and call once what notebooks would otherwise each load in their own
    child (torch's first backward imports sympy and more; the grading-tools cell imports
    Hypothesis): ~1 s of CPU per notebook otherwise."""
    import hypothesis.strategies  # noqa: F401
    if with_torch:
        import torch
        import torch.utils.data  # noqa: F401
        x = torch.ones(3, dtype=torch.float64, requires_grad=True)
        (x * x).sum().backward()
        torch.autograd.gradcheck(lambda t: (t * t).sum(), (x,))
        torch.nn.Linear(3, 2, dtype=torch.float64)(x.unsqueeze(0)).sum().backward()
        torch._C._set_deterministic_algorithms(False, warn_only=False)


def make_shell():
    """An IPython shell without history or a kernel: student cells keep their magics."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "NoColor"
    config.InteractiveShell.xmode = "Plain"
    return InteractiveShell.instance(config=config)

