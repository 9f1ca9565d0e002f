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
