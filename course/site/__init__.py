"""The course website (`course site`, `make site`): see build.py."""
from course.site.build import register  # noqa: F401  (course/cli.py)
