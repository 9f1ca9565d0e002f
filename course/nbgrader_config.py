"""nbgrader's view of this repository: which folder holds each step of an assignment.

Loaded by every `course` command (through coursebase.model.Course.load) and usable with the
stock CLI from the repository root: `nbgrader autograde 01_tensors --config course/nbgrader_config.py`.
The root is this file's parent folder, so a copy of the tree elsewhere (as the CI gates
make) is a complete course of its own.
"""
import os

c = get_config()  # noqa: F821 (provided by traitlets when it runs this file)

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

c.CourseDirectory.root = root
c.CourseDirectory.course_id = "reftorch-course"
# Instructor versions (with solutions and hidden tests) and the student release live at the
# top of the repository; everything the course writes during a term (student work, grades,
# the roster) stays in var/, one git-ignored folder (coursebase/paths.py lists it).
state = os.path.join(root, "var")
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.submitted_directory = os.path.join("var", "submitted")
c.CourseDirectory.autograded_directory = os.path.join("var", "autograded")
c.CourseDirectory.feedback_directory = os.path.join("var", "feedback")
c.CourseDirectory.solution_directory = os.path.join("var", "solution")
c.CourseDirectory.source_with_tests_directory = os.path.join("var", "source_with_tests")
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(state, "gradebook.db")
# The course hub (`make hub`) shares one exchange between Unix users at a system path.
c.Exchange.root = os.environ.get("COURSE_EXCHANGE") or os.path.join(state, "exchange")

# Autograde restores grade cells from the gradebook *with* their hidden tests, and stock
# feedback would print them. Clearing them here keeps hidden tests out of every feedback file.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
# Limits for every notebook `course grade` and `course validate` run (coursebase.model.grading_limits):
# nbgrader's own Execute.timeout is the time limit of one cell (a test that loops is stopped
# there, reported "timed out after N s", and the tests after it still run); a whole run of the
# notebook, all its cells and reruns together, stops at notebook_timeout; memory_mb per run.
# A whole assignment runs in a few seconds on a laptop; anything slower is a runaway loop.
c.Execute.timeout = 120
c.CourseLimits.notebook_timeout = 300
c.CourseLimits.memory_mb = 2048

# Due dates and late penalties, per assignment (autograder/late.py). A due date needs its
# zone. The penalty is nbgrader's LateSubmissionPlugin setting; `course grade` writes the due
# date and each penalty into the gradebook (where Formgrader shows them) when it makes the
# grades; after changing them here, run `course grade` again (unchanged work is not re-run).
#   c.CourseDeadlines.due = {"03_autograd": "2026-11-20 23:59 Europe/Berlin"}
#   c.PercentPerDay.percent_per_day = {"03_autograd": 10}   # % of the score per started day late
#   c.PercentPerDay.max_percent = 50
c.CourseDeadlines.due = {}
c.AssignLatePenalties.plugin_class = "autograder.late.PercentPerDay"
c.PercentPerDay.percent_per_day = {}
