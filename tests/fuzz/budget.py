"""How hard the fuzz tests of the native extensions try: seconds in `make test`, hours if you like.

Each test states its budget for `make test` (a few seconds' worth of examples). ENTBENCH_FUZZ_SCALE
multiplies every budget: `make sanitize` runs them at 0.15 (an example costs about 2.5 times as
much under the sanitizers, and the plain run has already compared the outputs); a local hunt runs
e.g. `ENTBENCH_FUZZ_SCALE=50 .venv/bin/python -m pytest -p no:xdist tests/fuzz/test_native_fuzz.py`,
or `make sanitize SANITIZE_FUZZ_SCALE=20` under the sanitizers.

Up to scale 1 the examples are derandomized: the same ones on every run, so a check never fails by
chance on a commit that did not change what it tests. Above it they are fresh random ones each run
(a failing example is kept in `.hypothesis/` and replayed first next time).
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, settings


def fuzz_scale() -> float:
    """ENTBENCH_FUZZ_SCALE (default 1)."""
    raw = os.environ.get("ENTBENCH_FUZZ_SCALE", "1")
    try:
        scale = float(raw)
    except ValueError:
        raise ValueError(f"ENTBENCH_FUZZ_SCALE must be a number, not {raw!r}") from None
    if not scale > 0:
        raise ValueError(f"ENTBENCH_FUZZ_SCALE must be above 0, not {raw!r}")
    return scale


def fuzz_settings(examples: int, **overrides: Any) -> settings:
    """Hypothesis settings for a fuzz test whose `make test` budget is `examples`."""
    scale = fuzz_scale()
    options: dict[str, Any] = {
        "max_examples": max(1, round(examples * scale)),
        "derandomize": scale <= 1,
        "deadline": None,  # a slow example (a sanitizer, a busy machine) is not a failure
        "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    }
    options.update(overrides)
    return settings(**options)
