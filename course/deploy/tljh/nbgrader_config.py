"""/etc/jupyter/nbgrader_config.py on the TLJH machine: every user's nbgrader (students').

The exchange is nbgrader's own, on a local folder that every user can write to; nbgrader
makes each course's inbound write-only (students cannot list or read other submissions)
and names feedback files by the hash of the submitted notebook.
"""
c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "reftorch-course"
c.Exchange.root = "/srv/nbgrader/exchange"
c.Execute.timeout = 120
