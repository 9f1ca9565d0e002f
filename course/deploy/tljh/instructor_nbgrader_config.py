"""~instructor/course/course/nbgrader_config.py on the TLJH machine: the instructor's course.

The instructor clones the course repository into ~instructor/course; this file is the
repository's own course/nbgrader_config.py with three lines changed: the shared exchange,
who owns a student's submissions in it, and the gradebook in PostgreSQL when grading runs
on more than one machine.
"""
import os

c = get_config()  # noqa: F821

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
c.CourseDirectory.root = root
c.CourseDirectory.course_id = "reftorch-course"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "assignments"
# everything a term writes stays in var/, the one git-ignored folder (coursebase/paths.py)
c.CourseDirectory.submitted_directory = os.path.join("var", "submitted")
c.CourseDirectory.autograded_directory = os.path.join("var", "autograded")
c.CourseDirectory.feedback_directory = os.path.join("var", "feedback")
c.CourseDirectory.solution_directory = os.path.join("var", "solution")
c.CourseDirectory.source_with_tests_directory = os.path.join("var", "source_with_tests")
c.CourseDirectory.db_url = os.environ.get(
    "COURSE_DB_URL", "sqlite:///" + os.path.join(root, "var", "gradebook.db"))
c.Exchange.root = "/srv/nbgrader/exchange"
# TLJH's Unix accounts are jupyter-<name>, nbgrader's student ids <name>: `course collect`
# places an exchange submission only when that account wrote it.
c.CourseExchange.owner = "jupyter-{student}"
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
