"""What to run for one notebook: the student's cells, with the instructor's cells restored.

The instructor's source notebook (``solutions/<a>/<a>.ipynb``) is the trusted version of
every locked and test cell, hidden tests included. A student's copy of such a cell is
replaced by it; an edited copy is noted, a duplicate is dropped, a deleted one is put
back where it belongs. Answer cells and the student's own extra cells run as written.
Every test cell must be in the probe form (see probes.py); an instructor's notebook with a
test cell in the old assert form is refused, naming the cell.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field

import nbformat

from coursebase.markers import HIDDEN, Markers, course_markers
from coursebase.model import forbids_torch

from .probes import ProbeCell, require_probe_form, split_test_cell, strip_magics


MAX_NOTEBOOK_BYTES = 64 * 1024**2
# What parsing a submission may cost the host, checked on its bytes before they are parsed
# (an honest notebook has a few hundred cells and a few thousand JSON containers, ten deep):
# 5.5 million empty cells in 16 MiB took 43-90 s and 3.6 GiB to read and rebuild.
MAX_CELLS = 5_000
MAX_CONTAINERS = 250_000      # JSON objects and arrays, outside strings
MAX_DEPTH = 64
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"')   # possessive: linear on any input
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"{}[]")


class UnreadableNotebook(ValueError):
    """The submitted file is not a notebook we can run."""


@dataclass
class TrustedCell:
    grade_id: str
    role: str          # "test" (graded test cell), "locked" (read-only code), "answer"
    source: str
    points: float = 0.0
    position: int = 0  # order in the source notebook
    probes: ProbeCell | None = None   # test cells only: the cell's probes (see probes.py)
    # Test cells only: hidden source lines long enough to recognise (redacted from messages),
    # the hidden lines' numbers (markers included) and the cell as released (without them).
    hidden_lines: list[str] = field(default_factory=list)
    hidden_line_numbers: list[int] = field(default_factory=list)
    visible_source: str = ""


@dataclass
class AssignmentSpec:
    """The instructor's notebook, parsed once per batch."""
    name: str
    notebook: str
    cells: list[TrustedCell]
    source_notebook: nbformat.NotebookNode

    @functools.cached_property
    def markdown_sources(self) -> frozenset:
        """The notebook's own markdown cells (a release shows the same ones)."""
        return frozenset(c.source for c in self.source_notebook.cells if c.get("cell_type") == "markdown")

    @property
    def forbids_torch(self) -> bool:
        return forbids_torch(self.source_notebook)

    @property
    def tests(self) -> list[TrustedCell]:
        return [c for c in self.cells if c.role == "test"]

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.tests)


@dataclass
class Plan:
    cells: list[dict]                  # the job's cells, in run order
    notes: list[str]                   # what was restored or dropped, for the instructor
    test_index: dict[str, int]         # grade_id -> index of its cell in `cells`
    # Cells that stopped an earlier run of this notebook (a cell over its time limit, a
    # crash), left out of the run judged: index -> (how that run ended, what the cell did),
    # in the host's words (e.g. ("timed out", "timed out after 120 s (...)")).
    skipped: dict[int, tuple[str, str]] = field(default_factory=dict)


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata", {})
    data = meta.get("nbgrader", {}) if isinstance(meta, dict) else {}
    return data if isinstance(data, dict) else {}


def _source(cell) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def load_spec(name: str, notebook: str, source_path, markers: Markers | None = None) -> AssignmentSpec:
    """Raises :class:`~autograder.probes.ProbeFormError` (``OldFormTestCell`` for a test cell
    without ``@probe``) when a test cell cannot be graded."""
    return spec_of(name, notebook, nbformat.read(str(source_path), as_version=4), markers)


def spec_of(name: str, notebook: str, source_notebook: nbformat.NotebookNode,
            markers: Markers | None = None) -> AssignmentSpec:
    """The trusted cells of an instructor's (or release) notebook, as :func:`load_spec`.
    ``markers``: nbgrader's, as the course configures them (default: this repository's)."""
    markers = markers or course_markers()
    cells = []
    for position, cell in enumerate(source_notebook.cells):
        meta = _nbgrader(cell)
        grade_id = meta.get("grade_id")
        if cell.cell_type != "code" or not grade_id:
            continue
        if meta.get("grade") and not meta.get("solution"):
            role = "test"
        elif meta.get("solution"):
            role = "answer"
        else:
            role = "locked"
        trusted = TrustedCell(grade_id, role, _source(cell), float(meta.get("points") or 0), position)
        if role == "test":
            require_probe_form(grade_id, trusted.source)
            stripped = strip_magics(trusted.source)
            trusted.probes = split_test_cell(trusted.source, markers.hidden_line_numbers(stripped))
            trusted.hidden_lines = [line.strip() for line in markers.inside(stripped, HIDDEN) if len(line.strip()) >= 6]
            trusted.hidden_line_numbers = sorted(markers.hidden_line_numbers(stripped))
            trusted.visible_source = "\n".join(markers.outside(trusted.source, HIDDEN))
        cells.append(trusted)
    return AssignmentSpec(name, notebook, cells, source_notebook)


def read_submission(path) -> nbformat.NotebookNode:
    if path.is_symlink():
        # A link could point at the instructor's notebook; the grader reads only real files.
        raise UnreadableNotebook("unreadable notebook: it is a symbolic link, not a file")
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            raise UnreadableNotebook(f"unreadable notebook: larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
        raw = path.read_bytes()
    except OSError as error:
        raise UnreadableNotebook(f"unreadable notebook: {error.strerror}") from None
    if not raw.strip():
        raise UnreadableNotebook("unreadable notebook: the file is empty")
    check_structure(raw)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise UnreadableNotebook(f"unreadable notebook: not valid JSON ({str(error)[:120]})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise UnreadableNotebook("unreadable notebook: no list of cells")
    if len(data["cells"]) > MAX_CELLS:
        raise UnreadableNotebook(f"unreadable notebook: {len(data['cells'])} cells, more than {MAX_CELLS}")
    cells = []
    for cell in data["cells"]:
        if isinstance(cell, dict):
            cell.pop("outputs", None)   # never graded nor shown: the notebook runs again
            cells.append(cell)
    return nbformat.from_dict({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def check_structure(raw: bytes) -> None:
    """Refuse, before parsing, JSON whose parsed form would cost the host far more than its
    size: too many objects and arrays, or too deep (strings are skipped at C speed first)."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    if len(brackets) > 2 * MAX_CONTAINERS:
        raise UnreadableNotebook(f"unreadable notebook: more than {MAX_CONTAINERS} JSON objects and arrays")
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in (0x7B, 0x5B) else -1
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        raise UnreadableNotebook(f"unreadable notebook: JSON nested {deepest} levels deep, more than {MAX_DEPTH}")


def _normalized(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def build_plan(spec: AssignmentSpec, submission: nbformat.NotebookNode | None) -> Plan:
    """The run order for a submission; ``None`` plans the instructor's own notebook."""
    trusted = {c.grade_id: c for c in spec.cells}
    entries: list[tuple[tuple[float, int], dict]] = []   # (sort key, cell) to place restored cells
    notes: list[str] = []
    seen: set[str] = set()
    cells = spec.source_notebook.cells if submission is None else submission.cells
    last_position = -1.0
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        grade_id = _nbgrader(cell).get("grade_id")
        known = trusted.get(grade_id) if isinstance(grade_id, str) else None
        if known is not None and known.role != "answer":
            if grade_id in seen:
                notes.append(f"{_role(known)} {grade_id} duplicated: extra copy ignored")
                continue
            seen.add(grade_id)
            if _normalized(_source(cell)) != _normalized(known.source) and submission is not None \
                    and known.role == "locked":
                notes.append(f"locked cell {grade_id} edited: restored from the instructor's version")
            elif submission is not None and known.role == "test" and \
                    _normalized(_source(cell)) != _normalized(known.visible_source) and \
                    _normalized(_source(cell)) != _normalized(known.source):
                notes.append(f"test cell {grade_id} edited: restored from the instructor's version")
            last_position = known.position
            entries.append(((last_position, len(entries)), _job_cell(known, submission is None)))
            continue
        if known is not None:
            seen.add(grade_id)
            last_position = max(last_position, known.position)
        entries.append(((last_position, len(entries)),
                        {"kind": "code", "source": _source(cell), "grade_id": grade_id if known else None}))
    for cell in spec.cells:
        if cell.role != "answer" and cell.grade_id not in seen:
            notes.append(f"{_role(cell)} {cell.grade_id} deleted: restored from the instructor's version")
            entries.append(((cell.position - 0.5, 0), _job_cell(cell, submission is None)))
    entries.sort(key=lambda pair: pair[0])
    job_cells, test_index = [], {}
    for index, (_, cell) in enumerate(entries):
        cell["index"] = index
        job_cells.append(cell)
        if cell["kind"] in ("probe", "reference_test"):
            test_index[cell["grade_id"]] = index
    return Plan(job_cells, notes, test_index)


def _role(cell: TrustedCell) -> str:
    return "test cell" if cell.role == "test" else "locked cell"


def _job_cell(cell: TrustedCell, reference: bool) -> dict:
    if cell.role == "test":
        if reference:  # the instructor's run: the whole cell, expectations and hidden cases included
            return {"kind": "reference_test", "grade_id": cell.grade_id, "source": strip_magics(cell.source),
                    "hidden_lines": cell.hidden_line_numbers}
        # The student's run: the visible probe functions only; the cases are filled in from
        # the reference run (the hidden ones, and probes written among them, come later).
        return {"kind": "probe", "grade_id": cell.grade_id, "source": cell.probes.source,
                "names": cell.probes.names, "torch": cell.probes.torch, "calls": []}
    return {"kind": "code", "grade_id": cell.grade_id, "source": cell.source, "locked": True}

