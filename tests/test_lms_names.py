"""Each LMS naming autograder/lms_names.py declares, read on names its LMS writes.

Adding an LMS's naming is its class in lms_names.NAMINGS and its examples here: every
declared naming must have examples (the first test), and each example must read as the LMS
meant it (who, by what, the student's own file name, the time, the LATE mark). Whole
downloads of each LMS, collected end to end, are in tests/test_grading_collect.py.
"""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from autograder.lms_names import NAMINGS, collect_rule, lms_names, not_a_submission, untimed

UTC = timezone.utc
T = datetime(2026, 11, 20, 23, 5, 9, tzinfo=UTC)

# naming -> [(one path component, [(how, key, the student's file name, time, late), ...])]
EXAMPLES = {
    "Canvas": [
        ("lovelaceada_123_4567_03_autograd.ipynb",
         [("lms_id", "123", "03_autograd.ipynb", None, False), ("name", "lovelaceada", "03_autograd.ipynb", None, False)]),
        ("lovelaceada_LATE_123_4567_my_1_2_file.ipynb",   # the first _<digits>_<digits>_ is Canvas's own
         [("lms_id", "123", "my_1_2_file.ipynb", None, True), ("name", "lovelaceada", "my_1_2_file.ipynb", None, True)]),
        ("anonymous_anon_xY7_4567_03_autograd.ipynb", [("lms_id", "anon_xY7", "03_autograd.ipynb", None, False)]),
    ],
    "MoodleFolder": [
        ("Ada Lovelace_1234_assignsubmission_file_", [("name", "Ada Lovelace", "", None, False)]),
        ("Ada Lovelace_1234_assignsubmission_file", [("name", "Ada Lovelace", "", None, False)]),
        ("Ada Lovelace_1234_assignsubmission_file_03_autograd.ipynb", []),   # a flat file, not a folder
    ],
    "MoodleFlat": [
        ("Ada Lovelace_1234_assignsubmission_file_03_autograd.ipynb",
         [("name", "Ada Lovelace", "03_autograd.ipynb", None, False)]),
    ],
    "Blackboard": [
        ("Autograd_ada_attempt_2026-11-20-23-05-09_03_autograd.ipynb",
         [("suffix", "Autograd_ada", "03_autograd.ipynb", T, False)]),
        ("Autograd_ada_attempt_2026-11-20-23-05-09_x_attempt_2027-01-01-00-00-00_y.ipynb",   # the first is Blackboard's
         [("suffix", "Autograd_ada", "x_attempt_2027-01-01-00-00-00_y.ipynb", T, False)]),
        ("Autograd_ada_attempt_2026-11-20-23-05-09.txt", [("suffix", "Autograd_ada", "(receipt)", T, False)]),
    ],
    "BrightspaceFlat": [
        ("98765-123 - Ada Lovelace - Nov 20, 2026 1105 PM - 03_autograd.ipynb",
         [("lms_id", "123", "03_autograd.ipynb", T.replace(second=0), False),
          ("name", "Ada Lovelace", "03_autograd.ipynb", T.replace(second=0), False)]),
        ("98765-123 - Ada Lovelace - Nov 20, 2026 105 AM - a.ipynb",   # 1:05, not 10:5
         [("lms_id", "123", "a.ipynb", datetime(2026, 11, 20, 1, 5, tzinfo=UTC), False),
          ("name", "Ada Lovelace", "a.ipynb", datetime(2026, 11, 20, 1, 5, tzinfo=UTC), False)]),
    ],
    "BrightspaceFolder": [
        ("98765-123 - Ada Lovelace - Nov 20, 2026 1105 PM",
         [("lms_id", "123", "", T.replace(second=0), False), ("name", "Ada Lovelace", "", T.replace(second=0), False)]),
    ],
}
# Files an LMS puts in its download that are no submission.
NOT_SUBMISSIONS = {"Autograd_ada_attempt_2026-11-20-23-05-09.txt": "Blackboard's submission receipt",
                   "index.html": "the LMS's index of the download", "03_autograd.ipynb": "", "notes.txt": ""}


def test_every_declared_naming_has_examples():
    assert sorted(EXAMPLES) == sorted(naming.__name__ for naming in NAMINGS)


@pytest.mark.parametrize("naming, component, expected", [
    (name, component, expected) for name, examples in EXAMPLES.items() for component, expected in examples])
def test_a_name_reads_as_its_lms_meant_it(naming, component, expected):
    scheme = next(n for n in NAMINGS if n.__name__ == naming)()
    claims = scheme.claims(component, UTC)
    assert [(c.how, c.key, c.file_name, c.timestamp, c.late) for c in claims] == expected
    assert all(c.lms == scheme.lms for c in claims)


@pytest.mark.parametrize("name, what", NOT_SUBMISSIONS.items())
def test_an_lms_extra_file_is_no_submission(name, what):
    assert not_a_submission(name) == what


def test_what_collect_says_comes_from_the_declarations():
    assert lms_names() == ["Canvas", "Moodle", "Blackboard", "Brightspace"]
    assert [name for name in lms_names() if untimed(name)] == ["Canvas", "Moodle"]
    assert collect_rule() == ("per student the latest version by LMS time is placed (the time in Blackboard's "
                              "and Brightspace's file names; Canvas and Moodle downloads hold only each student's "
                              "latest submission)")
