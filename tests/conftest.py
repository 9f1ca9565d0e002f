"""Shared pytest configuration."""
# -- reftorch engine property tests (tests/test_engine_*.py) ---------------------------
# One fixed Hypothesis profile: the same examples on every machine (derandomize), no
# per-example deadline (the first call of an op warms caches), and few enough examples
# that the engine suite stays well under a minute and a half on two cores.
import os

from hypothesis import HealthCheck, settings

# REFTORCH_ENGINE_EXAMPLES=300 gives a deeper (slower) search when hunting for divergences
settings.register_profile(
    "reftorch-engine",
    derandomize=True,
    deadline=None,
    max_examples=int(os.environ.get("REFTORCH_ENGINE_EXAMPLES", "30")),
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)


# -- order: the longest files first --------------------------------------------------------
# `make test` hands whole files to two workers (--dist loadfile) in collection order, so files
# that take minutes and sort late by name (the kit's fresh clone, the two-week term, the site)
# ran last, one worker alone on them for several minutes. Handed out first, they run while the
# many short files fill the other worker. (Figures: `--durations` in make test's output.)
LONGEST_FIRST = ("test_assignments_gates.py", "test_private_checkout.py", "test_student_kit.py",
                 "test_grading_attacks.py", "test_grading_trust.py", "test_grading_probe_attacks.py",
                 "test_site.py", "test_assignments_capstone.py", "test_hub_browser.py",
                 "test_browser_course_loop.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        if item.path.name in LONGEST_FIRST:
            return LONGEST_FIRST.index(item.path.name)
        return len(LONGEST_FIRST) + (0 if item.get_closest_marker("slow") else 1)
    items.sort(key=rank)   # stable: each file's tests keep their order
