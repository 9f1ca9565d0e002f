"""The course's trusted, sandboxed, parallel grader (see README.md)."""
import sys

# nbformat validates notebooks with jsonschema, which imports rfc3987_syntax when it is
# installed: only for the "iri" string formats, which no notebook schema uses, and building its
# grammar takes about 2 s at every start of `course grade` or `course validate`.
sys.modules.setdefault("rfc3987_syntax", None)
