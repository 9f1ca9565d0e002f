"""Inside the sandbox: structural facts about the student's objects, read by the grader's own code.

A probe asks "which torch classes is this class built on?", "which autograd nodes made
this output?", "can a torch.optim.Optimizer be reached from this object?". Asked of the
student's objects themselves (``type(m).__mro__``, ``type(out.grad_fn).__name__``,
``getattr``), the answers are theirs to give: a metaclass property named ``__mro__``, a
``.clone()`` on top of a library kernel, an optimizer kept in a module-level dict all
pass. The grading tools' ``class_chain``, ``graph_nodes`` and ``reachable`` are plain Python
for a student's own runs; in the grader's runs the probes get these versions instead, which
read through the interpreter's own descriptors, captured in the zygote before any student
code exists:

- a class's chain is its real method-resolution order (``type``'s slot, not an attribute),
  and a library class is named by its identity, as it was named at start-up (renaming
  ``nn.Module.__module__`` changes nothing);
- an output's nodes are every node of its autograd graph, walked through the C-level
  ``next_functions`` of torch's node types, not only the last one;
- reachability follows what each object really references (the garbage collector's view:
  instances' dicts and slots, containers, closures, defaults, bound methods, classes), and a
  function's globals for the names its code uses, with the attributes a library module
  gained or had replaced since start-up.

The student's process is still the student's: code that rewrites this module's functions
in memory can make them say anything. What is gone is lying through one's own objects.
"""
from __future__ import annotations

import gc
import hashlib
import sys
import types

_MRO = type.__dict__["__mro__"].__get__
_TYPE_DICT = type.__dict__["__dict__"].__get__
_TYPE_NAME = type.__dict__["__name__"].__get__
_TYPE_QUALNAME = type.__dict__["__qualname__"].__get__
_TYPE_MODULE = type.__dict__["__module__"].__get__
_FLAGS = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9
_OBJECT_DICT = object.__getattribute__
_FUNCTION_CODE = types.FunctionType.__code__.__get__
_FUNCTION_GLOBALS = types.FunctionType.__globals__.__get__
_REFERENTS = gc.get_referents      # what an object really holds (its type's traverse slot)
_DICT_GET, _DICT_CONTAINS = dict.get, dict.__contains__
_TUPLE_ITER = tuple.__iter__
_LEAVES = (str, bytes, int, float, complex, bool, type(None), types.CodeType)
_isinstance, _id, _type, _len, _list = isinstance, id, type, len, list
_repr, _sorted, _tuple, _str = repr, sorted, tuple, str
_sha256 = hashlib.sha256
_CODE = {name: types.CodeType.__dict__[name].__get__ for name in (
    "co_code", "co_consts", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
    "co_posonlyargcount", "co_kwonlyargcount", "co_flags", "co_name")}
_FUNCTION_DICT = types.FunctionType.__dict__["__dict__"].__get__
_STATIC_FUNC = staticmethod.__dict__["__func__"].__get__
_CLASS_FUNC = classmethod.__dict__["__func__"].__get__
_METHOD_FUNC = types.MethodType.__dict__["__func__"].__get__
_PROPERTY_PARTS = [property.__dict__[name].__get__ for name in ("fget", "fset", "fdel")]
MAX_OBJECTS = 100_000
MAX_NODES = 10_000


class _Names:
    """Library classes and module contents as they were when the zygote started."""

    def __init__(self, user_namespaces=()):
        self.classes: dict[int, str] = {}
        self.keep: list = []          # keeps the ids below valid
        self.modules: dict[int, dict] = {}
        self.module_dicts: set[int] = set()
        self.library: set[int] = set()   # modules and classes that existed at start-up
        main = sys.modules.get("__main__")
        students = {_id(namespace) for namespace in user_namespaces}
        if main is not None:
            students.add(_id(_OBJECT_DICT(main, "__dict__")))
        for name, module in _list(sys.modules.items()):
            if not _isinstance(module, types.ModuleType):
                continue
            if _id(_OBJECT_DICT(module, "__dict__")) in students:
                continue
            try:
                contents = dict(_OBJECT_DICT(module, "__dict__"))
            except Exception:  # noqa: BLE001
                continue
            self.modules[_id(module)] = contents
            self.keep.append(module)
            namespace = _OBJECT_DICT(module, "__dict__")
            self.module_dicts.add(_id(namespace))
            self.keep.append(namespace)
            for value in contents.values():
                if type in _MRO(_type(value)) and _id(value) not in self.classes:
                    try:
                        self.classes[_id(value)] = f"{_TYPE_MODULE(value)}.{_TYPE_QUALNAME(value)}"
                    except Exception:  # noqa: BLE001
                        continue
                    self.keep.append(value)
        self.library = {_id(m) for m in self.keep if _isinstance(m, type)} | self.module_dicts

    def name(self, cls) -> str:
        known = self.classes.get(_id(cls))
        if known is not None:
            return known
        try:   # a class made since start-up: the student's, named as it names itself
            return f"{_TYPE_MODULE(cls)}.{_TYPE_QUALNAME(cls)}"
        except Exception:  # noqa: BLE001
            return "?"


_names: _Names | None = None


def capture(user_namespaces=()) -> None:
    """In the zygote, after the libraries are imported and before any student code;
    ``user_namespaces``: the notebook's globals (the student's, though they exist already)."""
    global _names
    _names = _Names(user_namespaces)


def class_chain(cls) -> list[str]:
    """The classes ``cls`` is built on, its own first: 'module.qualname' for each."""
    if not _isinstance(cls, type):
        cls = _type(cls)
    return [_names.name(klass) for klass in _MRO(cls)]


def _next_functions(node):
    for klass in _MRO(_type(node)):
        if not _FLAGS(klass) & _HEAPTYPE:
            descriptor = _TYPE_DICT(klass).get("next_functions")
            if descriptor is not None:
                return descriptor.__get__(node, klass)
    return ()


def graph_nodes(tensor) -> list[str]:
    """The class names of every autograd node behind ``tensor`` (its grad_fn first)."""
    torch = sys.modules.get("torch")
    if torch is None or not _isinstance(tensor, torch._C.TensorBase):
        return []
    start = torch._C.TensorBase.grad_fn.__get__(tensor)
    found, seen, stack = [], set(), [start]
    while stack and _len(seen) < MAX_NODES:
        node = stack.pop()
        if node is None or _id(node) in seen:
            continue
        seen.add(_id(node))
        found.append(_TYPE_NAME(_type(node)))
        try:
            stack.extend(pair[0] for pair in _TUPLE_ITER(_next_functions(node)))
        except Exception:  # noqa: BLE001 - a node we cannot read further
            continue
    return found


def _code_names(code, into: set) -> set:
    into.update(code.co_names)
    for const in code.co_consts:
        if _isinstance(const, types.CodeType):
            _code_names(const, into)
    return into


def reachable(root, kind: type, depth: int = 24) -> bool:
    """Whether an instance of ``kind`` (or a class built on it, other than ``root``'s own)
    can be reached from ``root``: through what each object really references (the
    collector's view: instance dicts and slots, containers, closures, defaults, bound
    methods, classes), a function's globals for the names its code uses, and what a
    library module gained or had replaced since start-up. Library objects known at
    start-up are not walked into."""
    root_class = _type(root)
    stack, seen, names = [(root, 0)], set(), set()
    while stack and _len(seen) < MAX_OBJECTS:
        item, level = stack.pop()
        if _id(item) in seen or level > depth:
            continue
        seen.add(_id(item))
        item_type = _type(item)
        if kind in _MRO(item_type):
            return True
        if _isinstance(item, type) and item is not root_class and kind in _MRO(item):
            return True
        try:
            children = _children(item, item_type, names)
        except Exception:  # noqa: BLE001 - an object that cannot be read further
            continue
        stack.extend((child, level + 1) for child in children)
    return False


def _children(item, item_type, names: set) -> list:
    if item_type in _LEAVES or _id(item) in _names.library:
        return []
    if item_type is types.FunctionType:
        scope = _FUNCTION_GLOBALS(item)
        if _id(scope) in _names.module_dicts:
            return []      # a library's function
        used = _code_names(_FUNCTION_CODE(item), set())
        names.update(used)
        found = [child for child in _REFERENTS(item) if child is not scope]
        return found + [_DICT_GET(scope, name) for name in used if _DICT_CONTAINS(scope, name)]
    if _isinstance(item, types.ModuleType):
        return _module_children(item, names)
    return _list(_REFERENTS(item))


def _module_children(module, names: set) -> list:
    """A module's attributes that the code reached so far uses by name, where the module is a
    library's: only what it gained or had replaced since start-up."""
    contents = _OBJECT_DICT(module, "__dict__")
    before = _names.modules.get(_id(module))
    found = []
    for name in _list(names):
        if _DICT_CONTAINS(contents, name):
            value = _DICT_GET(contents, name)
            if before is None or before.get(name, _MISSING) is not value:
                found.append(value)
    return found


_MISSING = object()


def fingerprint(code) -> str:
    """What a code object computes, independent of where it was compiled (file, lines): the
    same on the host compiling a notebook's cells as in the sandbox that ran them."""
    get = _CODE
    consts = []
    for const in get["co_consts"](code):
        if _type(const) is types.CodeType:
            consts.append("code:" + fingerprint(const))
        elif _type(const) is frozenset:
            consts.append("frozenset:" + _repr(_sorted(_repr(item) for item in const)))
        else:
            consts.append(_type(const).__name__ + ":" + _repr(const))
    parts = (get["co_code"](code), get["co_names"](code), get["co_varnames"](code), get["co_freevars"](code),
             get["co_cellvars"](code), get["co_argcount"](code), get["co_posonlyargcount"](code),
             get["co_kwonlyargcount"](code), get["co_flags"](code), get["co_name"](code), consts)
    return _sha256(_repr(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


def code_of(obj) -> dict:
    """What an answer is made of, for the host to check against the notebook's own cells
    (autograder/written.py): ``classes``, the names of the real class chain of ``obj`` (or of
    its class), library classes named as they were at start-up; ``functions``, for every
    function of those classes that is not a library's (methods, static and class methods,
    properties; a decorated one through its ``__wrapped__``) and of ``obj`` itself (a
    function, or an instance's own functions), ``[label, fingerprint]``, and for a library
    function ``[label, "library:module.qualname"]``."""
    functions: list = []
    if _type(obj) is types.FunctionType:
        _add_function(obj, _str(_CODE["co_name"](_FUNCTION_CODE(obj))), functions)
        return {"classes": [], "functions": functions}
    cls = obj if _isinstance(obj, type) else _type(obj)
    chain = _list(_MRO(cls))
    for klass in chain:
        if _id(klass) in _names.library:
            continue
        owner = _names.name(klass)
        for name, value in _list(_TYPE_DICT(klass).items()):
            _add_member(value, f"{owner}.{name}", functions)
    if not _isinstance(obj, type):
        try:
            own = _OBJECT_DICT(obj, "__dict__")
        except Exception:  # noqa: BLE001 - no instance dict
            own = {}
        if _type(own) is dict:
            for name, value in _list(own.items()):
                _add_member(value, f"{_names.name(cls)}().{name}", functions)
    return {"classes": [_names.name(klass) for klass in chain], "functions": functions}


def _add_member(value, label: str, into: list) -> None:
    kind = _type(value)
    if kind is staticmethod:
        value = _STATIC_FUNC(value)
    elif kind is classmethod:
        value = _CLASS_FUNC(value)
    elif kind is property:
        for part in _PROPERTY_PARTS:
            function = part(value)
            if function is not None:
                _add_function(function, label, into)
        return
    elif kind is types.MethodType:
        value = _METHOD_FUNC(value)
    if _type(value) is types.FunctionType:
        _add_function(value, label, into)
    elif _isinstance(value, (types.BuiltinFunctionType, types.MethodDescriptorType, types.WrapperDescriptorType)):
        into.append([label, "library:" + _str(getattr(value, "__qualname__", "?"))])


def _add_function(function, label: str, into: list, depth: int = 0) -> None:
    scope = _FUNCTION_GLOBALS(function)
    if _id(scope) in _names.module_dicts:   # a library's function: perhaps a decorator's wrapper
        wrapped = _FUNCTION_DICT(function).get("__wrapped__")
        if _type(wrapped) is types.FunctionType and depth < 8:
            _add_function(wrapped, label, into, depth + 1)
        else:
            module = scope.get("__name__", "?")
            into.append([label, f"library:{module}.{_str(_CODE['co_name'](_FUNCTION_CODE(function)))}"])
        return
    into.append([label, fingerprint(_FUNCTION_CODE(function))])
