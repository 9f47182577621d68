"""What `release_memory` hands back between task phases."""

from __future__ import annotations

import sys

from entbench.engine.executors.base import release_memory


class _Row:
    """A class whose instances are looked up by names built at run time, as a task's code may."""


def test_names_the_type_cache_kept_from_a_phase_are_released() -> None:
    # A name built at run time (not interned), looked up once: CPython's type attribute cache now
    # holds a reference to it, and would keep it (and the arena under it) alive after the phase.
    name = "".join(["column_", str(id(_Row))])
    getattr(_Row(), name, None)
    held = sys.getrefcount(name)
    release_memory()
    assert sys.getrefcount(name) < held
