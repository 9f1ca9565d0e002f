"""Shared pytest configuration."""
# -- reftorch engine property tests (tests/test_engine_*.py) ---------------------------
# One fixed Hypothesis profile: the same examples on every machine (derandomize), no
# per-example deadline (the first call of an op warms caches), and few enough examples
# that the engine suite stays well under a minute and a half on two cores.
from hypothesis import HealthCheck, settings

settings.register_profile(
    "reftorch-engine",
    derandomize=True,
    deadline=None,
    max_examples=30,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
