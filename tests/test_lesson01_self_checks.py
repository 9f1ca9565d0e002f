"""Lessons 01 and 01b's self-check cells judge answers, not just print: they say "not answered
yet" on the stubs as stored, "correct" on right answers and "wrong: ..." on wrong ones, and never
raise.

The cells are taken from the stored lessons (exercises and the appendices' practice cells for the
assignment) and run here, each stub cell replaced by an answer written below (this file is not
shipped to students: tests/ is not in the kit). The seven are numbered as lesson 01 numbered them
before it was split; each is found by what its stub defines.
"""
from __future__ import annotations

import contextlib
import io
import linecache
import re

import nbformat
import pytest
import torch

from course.lessons import LESSONS

RIGHT = {
    1: '''
def contiguous_strides(shape):
    out, step = [], 1
    for n in shape[::-1]:
        out.insert(0, step)
        step *= n
    return tuple(out)


def is_contiguous(shape, strides):
    step = 1
    for n, s in reversed(list(zip(shape, strides))):
        if n != 1 and s != step:
            return False
        step *= n
    return True
''',
    2: '''
def storage_position(index, strides, offset):
    return offset + sum(map(lambda p: p[0] * p[1], zip(index, strides)))
''',
    3: '''
def can_view(shape, strides, new_shape):
    # runs of dims that sit one after another in memory, as (element count, innermost stride)
    runs = []
    for n, s in reversed([p for p in zip(shape, strides) if p[0] != 1]):
        if runs and s == runs[-1][0] * runs[-1][1]:
            runs[-1][0] *= n
        else:
            runs.append([n, s])
    sizes = [n for n in reversed(new_shape) if n != 1]
    for count, _ in runs:
        product = 1
        while product < count and sizes:
            product *= sizes.pop(0)
        if product != count:
            return False
    return not sizes
''',
    4: '''
def expanded_strides(shape, strides, new_shape):
    lead = len(new_shape) - len(shape)
    if lead < 0:
        raise RuntimeError("too few sizes")
    out = [0] * lead
    for n, s, m in zip(shape, strides, new_shape[lead:]):
        if n == m:
            out.append(s)
        elif n == 1:
            out.append(0)
        else:
            raise RuntimeError(f"size {n} cannot expand to {m}")
    return tuple(out)


def broadcast_shape(shape_a, shape_b):
    width = max(len(shape_a), len(shape_b))
    a = (1,) * (width - len(shape_a)) + tuple(shape_a)
    b = (1,) * (width - len(shape_b)) + tuple(shape_b)
    out = []
    for m, n in zip(a, b):
        if m != n and 1 not in (m, n):
            raise RuntimeError(f"shapes {shape_a} and {shape_b} do not broadcast")
        out.append(max(m, n) if 1 in (m, n) else m)
    return tuple(out)
''',
    5: '''
Strided = namedtuple("Strided", "storage shape strides offset")


def _indices(shape):
    return itertools.product(*[range(n) for n in shape])


def _dense(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= n
    return tuple(strides)


def _at(a, index):
    return a.storage[a.offset + sum(i * s for i, s in zip(index, a.strides))]


def strided_map(fn, a):
    return Strided([fn(_at(a, i)) for i in _indices(a.shape)], tuple(a.shape), _dense(a.shape), 0)


def strided_zip(fn, a, b):
    width = max(len(a.shape), len(b.shape))
    def widen(t):
        pad = width - len(t.shape)
        shape = (1,) * pad + tuple(t.shape)
        return shape, (0,) * pad + tuple(s if n != 1 else 0 for n, s in zip(t.shape, t.strides))
    (sa, ta), (sb, tb) = widen(a), widen(b)
    shape = tuple(max(m, n) for m, n in zip(sa, sb))
    wa, wb = Strided(a.storage, shape, ta, a.offset), Strided(b.storage, shape, tb, b.offset)
    return Strided([fn(_at(wa, i), _at(wb, i)) for i in _indices(shape)], shape, _dense(shape), 0)


def strided_reduce(fn, start, a, dim):
    shape = tuple(1 if d == dim else n for d, n in enumerate(a.shape))
    out = []
    for index in _indices(shape):
        acc = start
        for k in range(a.shape[dim]):
            acc = fn(acc, _at(a, index[:dim] + (k,) + index[dim + 1:]))
        out.append(acc)
    return Strided(out, shape, _dense(shape), 0)
''',
    6: '''
def outer(a, b):
    return a[:, None] * b[None, :]


def eye(n):
    return torch.where(torch.arange(n)[:, None] == torch.arange(n), 1, 0)
''',
    7: '''
shares_storage = {
    "x[:, ::2]": True,
    "x[[0, 2]]": False,
    "x[x[:, 0] > 0]": False,
    "x[1::2, 1]": True,
    "x.t()[1:]": True,
    "x.clone()": False,
    "x.t().contiguous()": False,
    "x.unsqueeze(0).expand(2, 3, 4)": True,
}
''',
}

# Plausible mistakes, one per function: each must be reported as wrong.
WRONG = {
    1: '''
def contiguous_strides(shape):
    return tuple(1 for _ in shape)  # forgets to multiply


def is_contiguous(shape, strides):
    return tuple(strides) == contiguous_strides(shape)  # also judges size-1 dims (and inherits the bug)
''',
    2: '''
def storage_position(index, strides, offset):
    return sum(i * s for i, s in zip(index, strides))  # forgets the offset
''',
    3: '''
def can_view(shape, strides, new_shape):
    return True  # as if view never failed
''',
    4: '''
def expanded_strides(shape, strides, new_shape):
    lead = len(new_shape) - len(shape)
    return (0,) * lead + tuple(strides)  # keeps the stride of a stretched size-1 dim, never raises


def broadcast_shape(shape_a, shape_b):
    return tuple(shape_a) if len(shape_a) >= len(shape_b) else tuple(shape_b)  # takes the longer one
''',
    5: '''
Strided = namedtuple("Strided", "storage shape strides offset")


def strided_map(fn, a):
    return Strided([fn(v) for v in a.storage], a.shape, a.strides, a.offset)  # maps the whole storage


def strided_zip(fn, a, b):
    return Strided([fn(v, w) for v, w in zip(a.storage, b.storage)], a.shape, a.strides, a.offset)


def strided_reduce(fn, start, a, dim):
    acc = start
    for v in a.storage:  # folds everything, whatever dim
        acc = fn(acc, v)
    return Strided([acc], (1,) * len(a.shape), (1,) * len(a.shape), 0)
''',
    6: '''
def outer(a, b):
    return torch.outer(a, b)  # right values, forbidden function


def eye(n):
    return torch.where(torch.arange(n)[:, None] <= torch.arange(n), 1, 0)  # a triangle, not the diagonal
''',
    7: '''
shares_storage = {
    "x[:, ::2]": True,
    "x[[0, 2]]": True,
    "x[x[:, 0] > 0]": False,
    "x[1::2, 1]": True,
    "x.t()[1:]": False,
    "x.clone()": False,
    "x.t().contiguous()": False,
    "x.unsqueeze(0).expand(2, 3, 4)": True,
}
''',
}
NAMES = {1: ["contiguous_strides", "is_contiguous"], 2: ["storage_position"], 3: ["can_view"],
         4: ["expanded_strides", "broadcast_shape"],
         5: ["strided_map", "strided_zip", "strided_reduce", "strided_reduce with max"],
         6: ["outer", "eye"], 7: ["shares_storage"]}


# what each stub defines, by which it is found in either lesson
DEFINES = {1: "def contiguous_strides(", 2: "def storage_position(", 3: "def can_view(", 4: "def expanded_strides(",
           5: "def strided_map(", 6: "def outer(", 7: "shares_storage = {"}


def lesson_cells():
    setups, exercises = [], {}
    for name in ("01_tensors", "01b_strides"):
        nb = nbformat.read(LESSONS / f"{name}.ipynb", as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        setups.append(next(s for s in code if "def self_check(" in s))
        for i, source in enumerate(code):
            if re.match(r"# (Exercise \d+|Practice) ", source):
                (number,) = [n for n, defines in DEFINES.items() if defines in source]
                assert number not in exercises, f"two stubs define {DEFINES[number]}"
                exercises[number] = (source, code[i + 1])
    return setups[-1], exercises   # 01b's setup is 01's with two more imports


def run(source: str, namespace: dict, name: str) -> str:
    """Run one cell's source as IPython would (its source findable by inspect); its stdout."""
    filename = f"<lesson01-{name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, filename, "exec"), namespace)
    return out.getvalue()


@pytest.fixture(scope="module")
def lesson():
    threads = torch.get_num_threads()
    setup, exercises = lesson_cells()
    # IPython's built-in display(); the pictures a wrong strided answer draws are kept here
    namespace: dict = {"display": lambda picture: namespace["_pictures"].append(picture), "_pictures": []}
    run("\n".join(line for line in setup.splitlines() if not line.startswith("%")), namespace, "setup")
    yield namespace, exercises
    torch.set_num_threads(threads)  # the lesson sets one thread; other tests keep their own


def verdicts(lesson, exercise: int, answer: str | None) -> list[str]:
    namespace, exercises = lesson
    stub, check = exercises[exercise]
    run(stub if answer is None else answer, namespace, f"answer{exercise}")
    return run(check, namespace, f"check{exercise}").splitlines()


def test_the_lessons_have_seven_exercises_each_a_stub_then_a_self_check(lesson):
    _, exercises = lesson
    assert sorted(exercises) == list(range(1, 8))


@pytest.mark.parametrize("exercise", range(1, 8))
def test_stub_says_not_answered_yet(lesson, exercise):
    assert verdicts(lesson, exercise, None) == [f"{name}: not answered yet" for name in NAMES[exercise]]


@pytest.mark.parametrize("exercise", range(1, 8))
def test_right_answer_says_correct(lesson, exercise):
    lines = verdicts(lesson, exercise, RIGHT[exercise])
    assert [line.split(":")[0] for line in lines] == NAMES[exercise]
    assert all(re.fullmatch(r"[\w ]+: correct( \(\d+ cases\))?", line) for line in lines), lines


@pytest.mark.parametrize("exercise", range(1, 8))
def test_wrong_answer_says_wrong_and_why(lesson, exercise):
    pictures = lesson[0]["_pictures"]
    pictures.clear()
    lines = verdicts(lesson, exercise, WRONG[exercise])
    assert [line.split(":")[0] for line in lines] == NAMES[exercise]
    assert all(line.split(": ", 1)[1].startswith("wrong: ") for line in lines), lines
    # strided answers (exercises 1 and 4) also draw the expected layout and the student's
    drawn = [picture.source.split("label=", 1)[1][:10] for picture in pictures]
    assert (exercise in (1, 4)) == bool(drawn), drawn
