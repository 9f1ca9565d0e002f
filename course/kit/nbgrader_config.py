"""nbgrader for a student: the course id, the exchange to fetch from and submit to, a timeout.

Nothing here is the instructor's: no source folder, no gradebook, no formgrader. The
exchange is where your course server keeps it (nbgrader's default, /srv/nbgrader/exchange);
set NBGRADER_EXCHANGE to use another folder.
"""
import os

c = get_config()  # noqa: F821 (provided by traitlets when it runs this file)

c.CourseDirectory.root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
c.CourseDirectory.course_id = "@COURSE_ID@"
# One copy of each assignment: the Assignment List fetches a release into assignments/<name>/,
# where the kit puts it, and Submit sends that folder, the one the student worked in.
c.Exchange.assignment_dir = os.path.join(c.CourseDirectory.root, "assignments")
os.makedirs(c.Exchange.assignment_dir, exist_ok=True)
if os.environ.get("NBGRADER_EXCHANGE"):
    c.Exchange.root = os.environ["NBGRADER_EXCHANGE"]
# A whole assignment runs in a few seconds on a laptop; anything slower is a runaway loop.
c.Execute.timeout = 120
