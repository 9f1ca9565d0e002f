"""nbgrader for a student on the course hub: which course, and where the shared exchange is
(both set by the hub in each server's environment, from the course's own config)."""
import os

c = get_config()  # noqa: F821  (injected by Jupyter)

c.CourseDirectory.course_id = os.environ["COURSE_ID"]
c.Exchange.root = os.environ["COURSE_EXCHANGE"]
# One copy of each assignment: the home holds the kit, whose assignments/<name>/ is where the
# Assignment List fetches a release to and what Submit sends (the file the student worked in).
c.Exchange.assignment_dir = os.path.join(os.path.expanduser("~"), "assignments")
os.makedirs(c.Exchange.assignment_dir, exist_ok=True)
