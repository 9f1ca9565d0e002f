"""The base layer: the course model, nbgrader's markers, the roster and the paths (coursebase/paths.py
says where everything is kept, and names the layers)."""
