"""The reftorch API reference: which public names mirror which torch names, and its pages.

Nothing here names a reftorch module by path: the reference walks ``reftorch``'s public
attributes (and those of its submodules that torch also has, such as ``nn`` or
``autograd.graph``), so it follows the engine when its files are split or renamed.

>>> entries = walk()                       # every public reftorch object, once
>>> entries[0].name, entries[0].torch_name, entries[0].torch_url
('reftorch.Generator', 'torch.Generator', 'https://docs.pytorch.org/docs/stable/generated/torch.Generator.html')
>>> pages = reference_pages(entries)       # {"reftorch.nn": "<reST>", ...}
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import types
from dataclasses import dataclass, field

TORCH_DOCS = "https://docs.pytorch.org/docs/stable/"
# A class with this many documented members gets a page of its own (Tensor, Module).
OWN_PAGE_MEMBERS = 20
# torch names documented on a topic page rather than a generated page of their own.
TOPIC_PAGES = {
    "torch.Tensor": "tensors.html",
    "torch.Size": "size.html",
    "torch.dtype": "tensor_attributes.html#torch.dtype",
    "torch.device": "tensor_attributes.html#torch.device",
    "torch.autocast": "amp.html#torch.autocast",
    "torch.amp.autocast": "amp.html#torch.autocast",
    "torch.default_generator": "torch.html#torch.torch.default_generator",
}
TOPIC_NAMESPACES = {
    "torch.utils.data": "data.html",
    "torch.utils.checkpoint": "checkpoint.html",
    "torch.nn.init": "nn.init.html",
    "torch.distributions": "distributions.html",   # and every module inside it
}


@dataclass
class Entry:
    """One public reftorch object, where it is documented, and the torch name it mirrors."""
    name: str                    # reftorch.nn.Linear
    namespace: str               # reftorch.nn
    kind: str                    # function, class, data, method, property, attribute
    torch_name: str | None       # torch.nn.Linear, or None: reftorch's own
    torch_url: str | None
    members: list["Entry"] = field(default_factory=list)


def torch_counterpart(reftorch_name: str):
    """The torch object at the same dotted name, or None when torch has none there."""
    import torch

    obj = torch
    for part in reftorch_name.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return None
    # torch.types holds typing aliases (torch.storage.Storage is one): no API page mirrors them
    if getattr(obj, "__module__", None) == "torch.types":
        return None
    return obj


def torch_url(torch_name: str, is_dtype: bool = False, owner: str | None = None) -> str:
    """The page of pytorch.org's documentation for ``torch_name``, built from the name alone."""
    if is_dtype:
        return TORCH_DOCS + TOPIC_PAGES["torch.dtype"]
    if torch_name in TOPIC_PAGES:
        return TORCH_DOCS + TOPIC_PAGES[torch_name]
    if owner is not None and owner != "torch.Tensor":  # a member of a class: on its class's page
        return torch_url(owner).split("#")[0] + f"#{torch_name}"
    namespace = torch_name.rsplit(".", 1)[0]
    topic = next((page for prefix, page in TOPIC_NAMESPACES.items()
                  if namespace == prefix or namespace.startswith(prefix + ".")), None)
    if topic:
        return TORCH_DOCS + topic + f"#{torch_name}"
    return TORCH_DOCS + f"generated/{torch_name}.html"


def _defined_in_reftorch(obj) -> bool:
    home = getattr(obj, "__module__", None) if isinstance(obj, (type, types.FunctionType)) else None
    home = home or type(obj).__module__
    return str(home).startswith("reftorch")


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "data"


def _member_kind(cls, name: str) -> str:
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, property):
        return "property"
    if isinstance(raw, (staticmethod, classmethod)) or inspect.isfunction(raw):
        return "method"
    if inspect.ismethoddescriptor(raw) and callable(raw):   # a C method; not a lazy_property
        return "method"
    return "attribute"


def _members(cls, name: str, torch_class) -> list[Entry]:
    """The class's own public members; for a mirrored class, those torch's class has too."""
    members = []
    for member in sorted(vars(cls)):
        if member.startswith("_"):
            continue
        mirrored = torch_class is not None and hasattr(torch_class, member)
        if torch_class is not None and not mirrored:
            continue  # reftorch's helpers on a torch class are not part of torch's API
        torch_name = f"{torch_name_of(name)}.{member}" if mirrored else None
        members.append(Entry(
            name=f"{name}.{member}", namespace=name, kind=_member_kind(cls, member), torch_name=torch_name,
            torch_url=torch_url(torch_name, owner=torch_name_of(name)) if torch_name else None))
    return members


def torch_name_of(reftorch_name: str) -> str:
    return "torch" + reftorch_name[len("reftorch"):]


def walk() -> list[Entry]:
    """Every public object of reftorch, documented once, at the shortest name that reaches it."""
    import reftorch
    from reftorch.dtypes import dtype as reftorch_dtype

    # a submodule appears in dir() only once something imported it (reftorch.fx is imported by
    # lesson 09, not by `import reftorch`): import them all, so the reference is the same in any process
    for module in pkgutil.walk_packages(reftorch.__path__, "reftorch."):
        if not any(part.startswith("_") for part in module.name.split(".")):
            importlib.import_module(module.name)
    entries, seen, queue = [], set(), [("reftorch", reftorch)]
    while queue:
        namespace, module = queue.pop(0)
        for attribute in sorted(dir(module)):
            if attribute.startswith("_"):
                continue
            obj, name = getattr(module, attribute), f"{namespace}.{attribute}"
            if isinstance(obj, types.ModuleType):
                counterpart = torch_counterpart(name)
                if obj.__name__ == name and isinstance(counterpart, types.ModuleType):
                    queue.append((name, obj))
                continue
            if not _defined_in_reftorch(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            counterpart = torch_counterpart(name)
            mirrored = counterpart is not None
            torch_name = torch_name_of(name) if mirrored else None
            entry = Entry(name=name, namespace=namespace, kind=_kind(obj), torch_name=torch_name,
                          torch_url=torch_url(torch_name, isinstance(obj, reftorch_dtype)) if mirrored else None)
            if entry.kind == "class" and obj.__name__ != attribute:
                # another name for a class (torch's constraints.greater_than is _GreaterThan):
                # Sphinx documents it as "alias of ...", which a member list would break
                entry.kind = "data"
            elif entry.kind == "class":
                entry.members = _members(obj, name, counterpart if inspect.isclass(counterpart) else None)
            entries.append(entry)
    # a namespace that mirrors nothing of torch (an engine module whose name torch also uses)
    # is the engine's inside, not its API
    mirroring = {e.namespace for e in entries if e.torch_name}
    return [e for e in entries if e.namespace in mirroring]


# -- reST pages ---------------------------------------------------------------------------

def _directive(entry: Entry, indent: str = "") -> list[str]:
    directive = {"function": "autofunction", "class": "autoclass", "data": "autodata",
                 "method": "automethod", "property": "autoproperty", "attribute": "autoattribute"}[entry.kind]
    lines = [f"{indent}.. {directive}:: {entry.name}", ""]
    if entry.torch_name:
        lines += [f"{indent}   Mirrors `{entry.torch_name} <{entry.torch_url}>`__.", ""]
    else:
        lines += [f"{indent}   reftorch's own: torch has no ``{torch_name_of(entry.name)}``.", ""]
    return lines


def _class_block(entry: Entry) -> list[str]:
    lines = _directive(entry)
    for member in entry.members:
        lines += _directive(member, indent="   ")
    return lines


def _title(text: str, underline: str = "=") -> list[str]:
    return [text, underline * len(text), ""]


def package_docstring() -> list[str]:
    """reftorch's own docstring as reST: its map of files is an indented block after a line
    ending in a colon, which reST reads as a literal block once the colon is doubled."""
    import reftorch

    lines = inspect.cleandoc(reftorch.__doc__ or "").splitlines()
    for i, line in enumerate(lines[:-2]):
        if line.endswith(":") and not line.endswith("::") and not lines[i + 1] and lines[i + 2].startswith(" "):
            lines[i] += ":"
    return lines


def reference_pages(entries: list[Entry]) -> dict[str, str]:
    """{page name: reST} for every namespace and every class with a page of its own."""
    pages: dict[str, list[str]] = {}
    namespaces = sorted(set(e.namespace for e in entries))
    for namespace in namespaces:
        inside = [e for e in entries if e.namespace == namespace]
        mirrored = [e for e in inside if e.torch_name]
        own = [e for e in inside if not e.torch_name]
        lines = _title(namespace) + [f".. currentmodule:: {namespace}", ""]
        lines += [f"What ``{namespace}`` has of ``{torch_name_of(namespace)}``: each entry links "
                  "the torch documentation of the name it mirrors.", ""]
        big = [e for e in mirrored if len(e.members) >= OWN_PAGE_MEMBERS]
        if big:
            lines += [".. toctree::", "   :maxdepth: 1", ""] + [f"   {e.name}" for e in big] + [""]
        for entry in mirrored:
            if entry in big:
                pages[entry.name] = _title(entry.name) + _class_block(entry)
            else:
                lines += _class_block(entry) if entry.kind == "class" else _directive(entry)
        if own:
            lines += _title("reftorch's own", "-")
            lines += ["Public in reftorch with no torch counterpart at the same name: the engine's "
                      "inside, shown because the lessons read it.", ""]
            for entry in own:
                lines += _class_block(entry) if entry.kind == "class" else _directive(entry)
        pages[namespace] = lines
    index = _title("reftorch API reference") + [
        "Generated from reftorch's docstrings. ``import reftorch as torch`` runs the covered torch "
        "code unchanged; each entry links the torch function or class it mirrors on pytorch.org, "
        "and **[source]** shows reftorch's code for it.", "",
        *package_docstring(), "",
        ".. toctree::", "   :maxdepth: 1", ""] + [f"   {n}" for n in namespaces] + [""]
    pages["index"] = index
    return {name: "\n".join(lines) + "\n" for name, lines in pages.items()}
