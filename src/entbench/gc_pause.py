"""The cyclic garbage collector paused around bulk builds of acyclic objects.

A scan's map task, an edge-probing file read or a memorisation index builds hundreds of thousands
to millions of tuples, strings and frozensets and holds them until it is done. CPython 3.11's
cyclic GC re-traverses every live container at each collection and frees none of them (measured:
10-15% of a scan's time, half of an edge-probing read, 5x an index build on EWT); reference
counting frees all of it anyway. One module at the bottom of the layers so that readers, filters
and the engine's stages share it.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector paused for a block, then restored as it was."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
