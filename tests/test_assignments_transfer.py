"""Assignments build rather than retype: no solution line is printed in what students receive.

A graded exercise should apply a lesson's idea to something the lesson did not show, or ask
for a variant of what it printed. A solution line that appears verbatim in a lesson (its code,
its markdown, its stored outputs, which include printed reftorch sources) or in reftorch's
own files is a line a student can copy instead of write. Lines are compared after
normalisation (a trailing comment dropped, runs of white space made one space); lines shorter
than MIN_LENGTH (`return x`, `else:`) prove nothing and are skipped. ALLOWED lists the few
one-liners that any answer must contain, each with its reason.
"""
from __future__ import annotations

import json
from pathlib import Path

from coursebase.paths import REPO as ROOT
MIN_LENGTH = 20
SOLUTION_REGION = ("### BEGIN SOLUTION", "### END SOLUTION")

ALLOWED = {
    "with torch.no_grad():":
        "the one way to change tensors without recording them; every lesson from 03 on uses it",
    "optimizer.zero_grad()":
        "every training step starts with it (lessons 03, 07 and 08 show why)",
    'raise ValueError("optimizer got an empty parameter list")':
        "torch's error wording, which assignment 08 asks for word for word",
    'raise ValueError(f"Invalid learning rate: {lr}")':
        "torch's error wording, which assignment 08 asks for word for word",
    'raise ValueError(f"Invalid epsilon value: {eps}")':
        "torch's error wording, which assignment 08 asks for word for word",
    "raise RuntimeError(f\"Invalid device string: '{spec}'\")":
        "torch's error wording, which assignment 02 asks for word for word",
    'raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")':
        "torch's own error message (assignment 01 asks only for RuntimeError; who copies torch's wording writes this line)",
    "out._backward = _backward":
        "assignment 03's given Value attaches each operation's closure so; a new operation must too",
    "return len(self._modules)":
        "a container's __len__ has one possible body",
    'self.register_parameter("bias", None)':
        "the one way to reserve an optional parameter's name, as lesson 07 teaches (torch's Linear does it)",
    # assignment 09 writes new passes with torch.fx's and dispatch modes' own protocol
    "def __torch_dispatch__(self, func, types, args=(), kwargs=None):":
        "the signature torch calls a dispatch mode with (lesson 09 shows the protocol)",
    "result = func(*args, **kwargs)":
        "a dispatch mode must run the operator it intercepts",
    "for node in gm.graph.nodes:":
        "the one way to walk an fx graph; every pass starts with it",
    "with gm.graph.inserting_before(node):":
        "the one way to place new nodes in an fx graph",
    "if isinstance(value, (list, tuple)):":
        "operator arguments nest tensors in lists and tuples; any walk over them tests this",
    "size = meta.shape.numel() * meta.dtype.itemsize":
        "a tensor's bytes from fx's shape metadata: the definition, not a method",
}


def normalised(line: str) -> str:
    """The line without its trailing comment and with single spaces ('#' inside quotes stays)."""
    quote, escaped = None, False
    for position, char in enumerate(line):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#":
            line = line[:position]
            break
    return " ".join(line.split())


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _texts_of_lesson(path: Path) -> list[str]:
    """Every cell's source and every stored text output of a lesson notebook."""
    texts = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        texts.append(_source(cell))
        for output in cell.get("outputs", []):
            if "text" in output:
                texts.append(_source({"source": output["text"]}))
            for kind, data in output.get("data", {}).items():
                if kind.startswith("text/"):
                    texts.append(_source({"source": data}))
    return texts


def public_lines(root: Path = ROOT) -> dict[str, set[str]]:
    """Normalised line -> the files students receive that contain it (lessons and reftorch)."""
    found: dict[str, set[str]] = {}

    def add(text: str, where: str) -> None:
        for line in text.splitlines():
            if len(line := normalised(line)) >= MIN_LENGTH:
                found.setdefault(line, set()).add(where)

    for lesson in sorted((root / "lessons").glob("*.ipynb")):
        for text in _texts_of_lesson(lesson):
            add(text, f"lessons/{lesson.name}")
    for module in sorted((root / "reftorch").rglob("*.py")):
        add(module.read_text(encoding="utf-8"), str(module.relative_to(root)))
    return found


def solution_lines(notebook: Path) -> list[tuple[str, str]]:
    """(answer cell's grade_id, normalised line) for each line between the solution markers."""
    lines = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "?")
        inside = False
        for line in _source(cell).splitlines():
            if SOLUTION_REGION[0] in line:
                inside = True
            elif SOLUTION_REGION[1] in line:
                inside = False
            elif inside and len(line := normalised(line)) >= MIN_LENGTH:
                lines.append((grade_id, line))
    return lines


def retyped_lines(root: Path = ROOT, allowed: dict[str, str] = ALLOWED) -> dict[str, list[str]]:
    """Assignment -> 'answer cell: line  (where it is printed)' for every solution line a
    student receives verbatim, allowed ones left out."""
    public = public_lines(root)
    found = {}
    for notebook in sorted((root / "solutions").glob("*/*.ipynb")):
        hits = sorted({f"{grade_id}: {line}   ({', '.join(sorted(public[line]))})"
                       for grade_id, line in solution_lines(notebook) if line in public and line not in allowed})
        if hits:
            found[notebook.parent.name] = hits
    return found


def test_no_solution_line_is_printed_in_a_lesson_or_in_reftorch():
    found = retyped_lines()
    assert not found, "solution lines students receive verbatim:\n" + "\n".join(
        f"{assignment}: {hit}" for assignment, hits in found.items() for hit in hits)


def test_every_allowed_line_is_still_needed():
    # An allowed line that no solution uses any more, or that no lesson prints, goes.
    used = {line for notebook in (ROOT / "solutions").glob("*/*.ipynb") for _, line in solution_lines(notebook)}
    public = public_lines()
    stale = [line for line in ALLOWED if line not in used or line not in public]
    assert not stale, f"ALLOWED lists lines no solution retypes: {stale}"
    assert len(ALLOWED) <= 16, "the allow-list is for a few unavoidable one-liners only"


def test_the_check_finds_a_retyped_line(tmp_path):
    """Planted: one solution line printed by a lesson's output, one in reftorch, one only in a
    comment-stripped form, one short line and one allowed line (neither is reported)."""
    answer = {"cell_type": "code", "metadata": {"nbgrader": {"grade_id": "answer", "solution": True}},
              "source": ["def f(shape):\n", "    ### BEGIN SOLUTION\n",
                         "    strides = [1] * len(shape)  # from the lesson\n",
                         "    return tuple(reversed(strides))\n",
                         "    total = offset + stride * index\n",
                         "    return x\n",
                         "    with torch.no_grad():\n",
                         "    ### END SOLUTION\n"]}
    (tmp_path / "solutions" / "01_x").mkdir(parents=True)
    (tmp_path / "solutions" / "01_x" / "01_x.ipynb").write_text(json.dumps({"cells": [answer]}))
    printed = {"cell_type": "code", "source": "show()",
               "outputs": [{"output_type": "stream", "text": ["def g():\n", "  strides = [1] * len(shape)\n"]},
                           {"output_type": "execute_result", "data": {"text/plain": "with torch.no_grad():"}}]}
    (tmp_path / "lessons").mkdir()
    (tmp_path / "lessons" / "01_x.ipynb").write_text(json.dumps({"cells": [printed]}))
    (tmp_path / "reftorch").mkdir()
    (tmp_path / "reftorch" / "storage.py").write_text("def h(strides):\n    return tuple(reversed(strides))  # done\n"
                                                      "    return x\n")
    found = retyped_lines(tmp_path, allowed={"with torch.no_grad():": "an idiom"})
    assert found == {"01_x": [
        "answer: return tuple(reversed(strides))   (reftorch/storage.py)",
        "answer: strides = [1] * len(shape)   (lessons/01_x.ipynb)"]}
    assert normalised('    x = "a # b"  # note') == 'x = "a # b"'
