"""Set-up of the processes entbench owns: the `entbench` command and its pool workers.

pyarrow imports pandas on its first list-to-array conversion whenever pandas is installed (it
checks whether the list is "array-like"), which costs ~0.5 s and ~50 MB in every process and
worker. entbench never uses pandas, so in processes it owns (never in a library user's process,
where pandas may be wanted) it makes pandas unimportable.

The same processes also get allocators that give big freed buffers back (`unmap_freed_buffers`),
so their peak RSS is what their tasks hold, not what earlier tasks left fragmented.
"""

from __future__ import annotations

import ctypes
import os
import sys
from collections.abc import Sequence
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType


class _NoPandas(MetaPathFinder):
    """An import hook that reports pandas as not installed."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        """Refuse `pandas` and its submodules; leave every other import to the next finder."""
        if fullname == "pandas" or fullname.startswith("pandas."):
            raise ModuleNotFoundError("pandas is not used in entbench processes", name=fullname)
        return None


def without_pandas() -> None:
    """Make `import pandas` fail in this process, unless pandas is already imported."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


#: glibc's `mallopt` parameter: the size from which an allocation is a mapping of its own.
_M_MMAP_THRESHOLD = -3
#: Allocations of at least this size are mapped on their own and unmapped when freed: the 16-64 MB
#: decompressed blocks of a map task, Arrow's column buffers and a reduce's gathered tables.
MMAP_THRESHOLD_BYTES = 4 << 20
#: Arrow's documented switch for its default allocator; a value the user set is kept.
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def unmap_freed_buffers() -> None:
    """Make buffers of `MMAP_THRESHOLD_BYTES` or more go back to the system when freed.

    Measured on `entbench build wikidata --workers 1` (.gz, 16 MB tasks), peak RSS at 20k and 200k
    entities was 240-244 and 258-280 MB, and the 200k peak did not come down with shards of the
    20k dump's size: it grew with the number of tasks, not with what a task holds. Two causes:

    * Arrow's default allocator (its bundled mimalloc) keeps freed pages: a reduce gathering a
      shard's batches from every map task's spills held 60-70 MB more than Arrow's own peak
      allocation, and ~10 MB more again for a shard of the same rows read from 10x the spills.
      Arrow goes through malloc instead (`ARROW_DEFAULT_MEMORY_POOL` set to `system` unless the
      user chose a pool), which with the threshold below maps big buffers and unmaps them on free.
    * glibc raises its mmap threshold to the size of the first freed mapped chunk (up to 32 MB),
      so from the second decompressed block on, blocks came from the heaps of the main and the
      prefetch thread's arena, where free gaps are only reused when the next block fits: the map
      held one block (16 MB) more or less at random, and a long run met the worse layout. A fixed
      threshold (`mallopt`) turns the dynamic one off.

    After both: 194-197 MB at 20k and 195 MB at 200k entities (3 runs each), the map at the top
    of both; CPU time the same (5.5 s against 5.7 s at 20k, medians of 6).
    """
    if ARROW_POOL_VARIABLE not in os.environ:
        os.environ[ARROW_POOL_VARIABLE] = "system"  # read at pyarrow's import; inherited by workers
        if "pyarrow" in sys.modules:  # already imported: allocations from here on
            import pyarrow as pa

            pa.set_memory_pool(pa.system_memory_pool())
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES)
    except (OSError, AttributeError):  # not glibc (musl, macOS): their own policies apply
        pass
