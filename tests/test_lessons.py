"""Gates on the lessons as stored (what a student reads before running anything).

The lessons themselves are re-executed and compared with their stored outputs by the second
pytest run of `make test` (nbval); these tests check the rest, and show that nbval's
comparison fails on a stale output.
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course.lessons import (APPENDIX_HEADING, EXERCISE_KINDS, LESSONS, RAISES_TAG, answer_cells, appendix_start,
                            assignment_of, core_path, estimate, exercise_kind, exercise_minutes, exercises_start,
                            lesson_paths, problems, stated_minutes)

# The course's lessons in order; a lesson split in two keeps its number (09_graphs, 09b_compile), and
# both lead into the assignment of that number (course.lessons.assignment_of)
EXPECTED = ["01_tensors", "01b_strides", "02_devices", "03_autograd", "03b_autograd_functions", "04_autograd_advanced", "05_inplace", "06_clone_detach",
            "07_modules", "07b_using_modules", "08_training", "09_graphs", "09b_compile"]
ASSIGNMENTS = sorted(p.name for p in (LESSONS.parent / "assignments").iterdir() if (p / f"{p.name}.ipynb").is_file())

# Syllabus topics that must appear in a lesson's code (API names a lesson cannot teach without)
SYLLABUS_CODE = {
    "01_tensors": ["zeros(", "ones(", "full(", "arange(", "rand(", "randn(", "manual_seed", "float64",
                   "int32", "bool", "from_numpy", ".numpy()", "stride(", "storage_offset(",
                   "is_contiguous(", ".contiguous(", ".view(", ".reshape(", ".t()", "permute(",
                   "expand(", "result_type", "storage_diagram(",
                   "def contiguous_strides(shape)", "def is_contiguous(shape, strides)",
                   "def storage_position(index, strides, offset)", "def can_view(shape, strides, new_shape)"],
    "01b_strides": ["cat(", "stack(", "unsqueeze(", "squeeze(", "chunk(", "transpose(",
                    "tile(", "repeat(", ".max(", "maximum(", "ravel(", "flatten(", "topk(", "dim=",
                    "[::-1]", ".flip(", "[1::2", "[[0, 2]]", "x > 20", "[[0, 1], [1, 2]]",
                    "data_ptr()", "storage_diagram(", "broadcast_shapes", "keepdim=True",
                    "def expanded_strides(shape, strides, new_shape)", "def broadcast_shape(shape_a, shape_b)",
                    "def strided_map(fn, a)", "def strided_zip(fn, a, b)", "def strided_reduce(fn, start, a, dim)"],
    "02_devices": ["device(", ".to(", "copy=True", " is x", "is_available()", "synchronize", "memory_allocated",
                   ".item()", "_dispatch_keys(", "rename_privateuse1_backend", "_register_device_module",
                   "torch.library", "sim"],
    "03_autograd": ["requires_grad", "requires_grad_(", "is_leaf", ".grad_fn", "next_functions",
                    ".backward(", "gradient=", "retain_grad(", "zero_", "inputs=", "retain_graph=True",
                    "grad['a'] += grad['u'] * b"],
    "03b_autograd_functions": ["autograd.grad(", "grad_outputs", "create_graph=True", "hessian", "no_grad",
                               "enable_grad", "inference_mode", "autograd.Function", "save_for_backward",
                               "saved_tensors", ".apply(", "gradcheck", "make_dot", "special.zeta", "torch.erf("],
    "04_autograd_advanced": ["register_hook(", "saved_tensors_hooks", "forward_ad", "make_dual",
                             "torch.func.jvp", "torch.func.vjp", "vmap(", "torch.func.grad(",
                             "is_grads_batched", "checkpoint(", "use_reentrant=False",
                             "detect_anomaly("],
    "05_inplace": ["_version", "zero_()", "exp_()", "+=", "torch.where", "x > 0.5", "no_grad()", "[1:3]",
                   "saved_tensors_hooks", "memory_allocated", "max_memory_allocated"],
    "06_clone_detach": [".clone()", ".detach()", "detach().clone()", ".item()", ".copy()", "make_dot", ".data",
                        "copy_", "memory_allocated", "- x).detach()"],
    "07_modules": ["super().__init__()", "def forward", "register_parameter", "register_buffer",
                   "register_module", "ParameterList", "ParameterDict", "ModuleList", "ModuleDict",
                   "Sequential", "register_forward_hook(", "nn.Buffer(", "_call_impl", "extra_repr",
                   "layer.weight = nn.Parameter("],
    "07b_using_modules": ["named_parameters(", "buffers(", "children(", "modules(", "requires_grad_(", ".to(",
                          ".train(", ".eval(", "state_dict(", "load_state_dict(", "numel()", "FlopCounterMode",
                          "remove_duplicate=False"],
    "08_training": ["nn.Linear(", "nn.ReLU()", "Sequential(", "optim.SGD", "optim.Adam", "momentum=",
                    "zero_grad()", ".backward()", ".step()", "CrossEntropyLoss", "utils.data.Dataset",
                    "TensorDataset(", "DataLoader(", "shuffle=True", "drop_last=True", "__getitem__",
                    "__len__", "BatchNorm1d(", "running_mean", "running_var", "num_batches_tracked",
                    ".eval()", ".train()", "autocast(", "bfloat16", "float16", "finfo(",
                    "register_forward_hook("],
    "09_graphs": ["symbolic_trace(", "graph.nodes", "placeholder", "get_attr", "call_function", "call_method",
                  "call_module", "gm.code", "recompile()", "replace_pattern(", "eliminate_dead_code()",
                  "inserting_before(", "replace_all_uses_with(", "map_arg(", "ShapeProp(", "TorchDispatchMode",
                  "__torch_dispatch__", "FlopCounterMode", "make_fx(", "core_aten_decompositions()",
                  "decomposition_table", "Tag.core", "CompositeImplicitAutograd", "TorchRefsMode", "prims.",
                  "PrivateUse1", "ref_fx.trace(", "draw_fx_graph("],
    "09b_compile": ["torch.compile(", "_dynamo.explain(", "run_and_get_code(", "cpp.cxx", "backend='aot_eager'",
                    "torch.export.export(", "strict=strict", "run_decompositions()", "torch.cond(", "Dim(",
                    "torch.onnx.export(", "ReferenceEvaluator", "fuse_elementwise(", "unique_graphs"],
}


def lesson(name: str):
    return nbformat.read(LESSONS / f"{name}.ipynb", as_version=4)


def code_of(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "code")


def test_the_nine_lessons_exist_in_order():
    assert [p.stem for p in lesson_paths()] == EXPECTED


def test_course_map_lists_every_lesson():
    course_map = (LESSONS / "README.md").read_text()
    for name in EXPECTED:
        assert f"{name}.ipynb" in course_map


@pytest.mark.parametrize("name", EXPECTED)
def test_lesson_is_stored_executed_in_order_without_unexpected_errors(name):
    assert problems(LESSONS / f"{name}.ipynb") == []


@pytest.mark.parametrize("name", EXPECTED)
def test_lesson_states_goals_first_and_ends_its_core_path_with_exercises(name):
    nb = lesson(name)
    markdown = [c.source for c in core_path(nb) if c.cell_type == "markdown"]
    assert "Goals" in markdown[0]
    assert any("## Exercises" in m for m in markdown[-3:])
    assert "assignments/" in "\n".join(markdown[-3:])  # exercises lead into the graded assignment


@pytest.mark.parametrize("name", EXPECTED)
def test_lesson_shows_torch_and_opens_reftorch(name):
    code = code_of(lesson(name))
    assert "import torch" in code and "reftorch" in code


@pytest.mark.parametrize("name", EXPECTED)
def test_lesson_teaches_its_syllabus_topics_in_code(name):
    code = code_of(lesson(name))
    missing = [api for api in SYLLABUS_CODE[name] if api not in code]
    assert missing == []


@pytest.mark.parametrize("name", EXPECTED)
def test_lesson_has_pictures(name):
    nb = lesson(name)
    images = sum(1 for c in nb.cells if c.cell_type == "code" for o in c.outputs
                 if o.output_type in ("display_data", "execute_result") and "image/png" in o.get("data", {}))
    assert images >= 1


def test_gpu_cells_report_their_skip():
    for path in lesson_paths():
        for cell in nbformat.read(path, as_version=4).cells:
            if "gpu" in cell.metadata.get("tags", []):
                text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
                assert "SKIPPED (no CUDA device)" in text or "cuda" in text.lower(), path.name


MAX_CELLS = 100  # beyond this a lesson is two lessons
# What a student must do in the stated time: everything before the appendix heading. Parity checks
# against torch, long reftorch listings and extra examples go after it.
MAX_CORE_CELLS = 45
MAX_CORE_MINUTES = 90  # a sitting: a lesson that needs more is trimmed or split (01_tensors, 01b_strides)
TIMING = re.compile(r"perf_counter|timeit|median_seconds|time\.time\(|\btimed\(")


@pytest.mark.parametrize("name", EXPECTED)
def test_lesson_is_short_enough_to_read_in_one_sitting(name):
    assert len(lesson(name).cells) <= MAX_CELLS


@pytest.mark.parametrize("name", EXPECTED)
def test_core_path_fits_and_the_appendix_follows_the_exercises(name):
    nb = lesson(name)
    start = appendix_start(nb)
    assert start <= MAX_CORE_CELLS, f"{start} cells before {APPENDIX_HEADING!r} (at most {MAX_CORE_CELLS})"
    assert start == len(nb.cells) or start > exercises_start(nb)


@pytest.mark.parametrize("name", EXPECTED)
def test_every_answer_cell_says_what_kind_of_exercise_it_is(name):
    """The time of an exercise depends on its kind (a tag) and its size (read from the cell)."""
    nb = lesson(name)
    for i in answer_cells(nb):
        assert exercise_kind(nb.cells[i]), f"cell {i}: no tag of {sorted(EXERCISE_KINDS)}"
        exercise_minutes(nb.cells[i])   # raises when the kind does not fit what the cell asks


@pytest.mark.parametrize("name", EXPECTED)
def test_stated_time_is_honest_and_fits_a_sitting(name):
    nb = lesson(name)
    stated, minutes = stated_minutes(nb), estimate(nb).total
    assert minutes <= MAX_CORE_MINUTES, f"its core path takes about {minutes:.0f} minutes (at most {MAX_CORE_MINUTES})"
    assert minutes - 2 <= stated <= MAX_CORE_MINUTES, f"the first cell says {stated} minutes; its core path takes about {minutes:.0f}"
    assert stated <= minutes + 15, f"the first cell says {stated} minutes for a core path of about {minutes:.0f}"


def untested_timing_charts(nb) -> list[int]:
    """Cells that time something and draw a chart without asserting anything: their stored
    picture could show an ordering the text beside it denies."""
    return [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and TIMING.search(c.source)
            and any("image/png" in o.get("data", {}) for o in c.get("outputs", []))
            and "assert" not in c.source]


@pytest.mark.parametrize("name", EXPECTED)
def test_timing_charts_assert_the_ordering_they_show(name):
    assert untested_timing_charts(lesson(name)) == []


def asked_names(release) -> list[str]:
    """The functions and classes a released assignment asks the student to write."""
    names = []
    for cell in release.cells:
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("solution"):
            for node in ast.parse(cell.source).body:
                if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
                    names.append(node.name)
    return names


def names_missing_from_exercises(nb, release) -> list[str]:
    text = "\n".join(c.source for c in core_path(nb)[exercises_start(nb):])
    return [name for name in asked_names(release) if not re.search(rf"\b{re.escape(name)}\b", text)]


def test_every_lesson_leads_into_an_assignment():
    assert {name: assignment_of(name, ASSIGNMENTS) for name in EXPECTED if assignment_of(name, ASSIGNMENTS) is None} == {}


@pytest.mark.parametrize("assignment", sorted({assignment_of(name, ASSIGNMENTS) for name in EXPECTED}))
def test_exercises_name_every_function_the_assignment_asks_for(assignment):
    """One name per function: the exercises of the lessons with number N (01_tensors, 01b_strides)
    lead into assignment N by the same names."""
    release = nbformat.read(LESSONS.parent / "assignments" / assignment / f"{assignment}.ipynb", as_version=4)
    assert asked_names(release), f"assignments/{assignment} asks for no function or class"
    lessons = [lesson(name) for name in EXPECTED if assignment_of(name, ASSIGNMENTS) == assignment]
    missing = set(asked_names(release))
    for nb in lessons:
        missing &= set(names_missing_from_exercises(nb, release))
    assert sorted(missing) == []


def self_checks(nb) -> int:
    """Self-check cells after the Exercises heading: as stored (stubs unanswered) each says so."""
    return sum(1 for c in core_path(nb)[exercises_start(nb):] if c.cell_type == "code"
               and any("not answered yet" in o.get("text", "") for o in c.get("outputs", [])))


@pytest.mark.parametrize("name", EXPECTED)
def test_ungraded_exercises_have_self_checks(name):
    assert self_checks(lesson(name)) >= 2


# -- the gates can fail ---------------------------------------------------------------
def tiny_notebook(path: Path, stored_output: str, tags=(), source="print(6 * 7)"):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source, execution_count=1)
    cell.metadata["tags"] = list(tags)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=stored_output)]
    nb.cells = [nbformat.v4.new_markdown_cell("# Goals"), cell]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def run_nbval(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "--nbval", "--nbval-current-env", "-p", "no:cacheprovider",
         "-p", "no:xdist", "--nbval-sanitize-with", str(LESSONS / "nbval_sanitize.cfg"), str(path)],
        capture_output=True, text=True, timeout=120, cwd=path.parent)


@pytest.mark.slow
def test_nbval_passes_a_fresh_output_and_fails_a_stale_one(tmp_path):
    fresh = run_nbval(tiny_notebook(tmp_path / "fresh.ipynb", "42\n"))
    assert fresh.returncode == 0, fresh.stdout[-2000:]
    stale = run_nbval(tiny_notebook(tmp_path / "stale.ipynb", "41\n"))
    assert stale.returncode == 1 and "1 failed" in stale.stdout


def test_problems_catches_an_unrun_cell_an_untagged_error_and_a_tag_that_never_raised(tmp_path):
    path = tiny_notebook(tmp_path / "x.ipynb", "42\n")
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].execution_count = None
    nbformat.write(nb, path)
    assert any("execution_count" in p for p in problems(path))

    nb.cells[1].execution_count = 1
    nb.cells[1].outputs = [nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=[])]
    nbformat.write(nb, path)
    assert any("not tagged" in p for p in problems(path))

    nb.cells[1].outputs = []
    nb.cells[1].metadata["tags"] = [RAISES_TAG]
    nbformat.write(nb, path)
    assert any("raised nothing" in p for p in problems(path))


def test_name_and_chart_gates_fail_on_a_broken_lesson():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("## Exercises\nWrite `storage_position` (assignments/01)."),
                nbformat.v4.new_code_cell("t = median_seconds(f)\nplt.bar([0], [t])")]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBOR"})]
    release = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("def storage_position(i):\n    raise NotImplementedError()\n"
                                       "def can_view(s):\n    raise NotImplementedError()")
    answer.metadata["nbgrader"] = {"solution": True, "grade_id": "a"}
    release.cells = [answer]
    assert names_missing_from_exercises(nb, release) == ["can_view"]
    assert untested_timing_charts(nb) == [1]
    nb.cells[1].source += "\nassert t > 0"
    assert untested_timing_charts(nb) == []
    assert self_checks(nb) == 0
    nb.cells.append(nbformat.v4.new_code_cell("self_check(answer)"))
    nb.cells[-1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="exercise 1: not answered yet\n")]
    assert self_checks(nb) == 1


def test_core_path_and_time_gates_fail_on_a_broken_lesson():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Goals\n\n**Time:** about 10 minutes.")]
    nb.cells += [nbformat.v4.new_code_cell("\n".join(f"x = {i}" for _ in range(30))) for i in range(MAX_CORE_CELLS)]
    nb.cells += [nbformat.v4.new_markdown_cell("## Exercises\nassignments/"),
                 nbformat.v4.new_markdown_cell(f"{APPENDIX_HEADING}: sources")]
    assert appendix_start(nb) == MAX_CORE_CELLS + 2 > MAX_CORE_CELLS      # too long a core path
    assert stated_minutes(nb) == 10 < estimate(nb).total - 2               # and too long for its time
    nb.cells = [nb.cells[0], nb.cells[-2], nb.cells[-1]]
    assert appendix_start(nb) == 2 > exercises_start(nb) == 1              # fits, the appendix last
    assert estimate(nb).total <= stated_minutes(nb)
    nb.cells = [nb.cells[0], nb.cells[2], nb.cells[1]]                     # appendix before the exercises
    with pytest.raises(ValueError):
        exercises_start(nb)


def exercise_lesson(stated: int, answer: str, tags) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(answer)
    cell.metadata["tags"] = list(tags)
    nb.cells = [nbformat.v4.new_markdown_cell(f"# Goals\n\n**Time:** about {stated} minutes."),
                nbformat.v4.new_code_cell("import torch"),
                nbformat.v4.new_markdown_cell("## Exercises\nassignments/"), cell]
    return nb


def test_an_exercise_counts_by_its_kind_and_size_and_an_understated_lesson_fails():
    # the old formula gave every answer cell 4 minutes: lesson 01's three strided walks in one
    # cell were "4 minutes", stated as such; by kind and size they are 75
    strided = "def strided_map(fn, a): ...\ndef strided_zip(fn, a, b): ...\ndef strided_reduce(fn, s, a, d): ..."
    nb = exercise_lesson(10, strided, ["exercise-multistep"])
    assert exercise_minutes(nb.cells[3]) == 75
    assert stated_minutes(nb) == 10 < estimate(nb).total - 2               # under-stated: the gate fails
    nb = exercise_lesson(10, "guess = {'x': None, 'y': None, 'z': ...}", ["exercise-predict"])
    assert exercise_minutes(nb.cells[3]) == 2 + 3 * 1.5                    # three values to predict
    assert estimate(nb).total <= stated_minutes(nb)
    with pytest.raises(ValueError, match="needs one tag"):                 # no kind: no estimate
        estimate(exercise_lesson(10, strided, []))
    with pytest.raises(ValueError, match="asks for"):                      # a function is not a prediction
        estimate(exercise_lesson(10, strided, ["exercise-predict"]))
    with pytest.raises(ValueError, match="asks for"):                      # nothing to write
        estimate(exercise_lesson(10, "x = 1", ["exercise-write"]))
