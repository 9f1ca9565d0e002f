"""nbgrader for a student on the course hub: which course, and where the shared exchange is
(both set by the hub in each server's environment, from the course's own config)."""
import os

c = get_config()  # noqa: F821  (injected by Jupyter)

c.CourseDirectory.course_id = os.environ["COURSE_ID"]
c.Exchange.root = os.environ["COURSE_EXCHANGE"]
