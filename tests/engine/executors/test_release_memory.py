"""What `release_memory` hands back between task phases."""

from __future__ import annotations

import gc
import sys
from typing import Any

from entbench.engine.executors import local
from entbench.engine.executors.base import release_memory
from entbench.engine.executors.local import DeferredPool, ProcessPoolTaskExecutor
from entbench.engine.progress import StageBar


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


def test_free_lists_a_phase_filled_are_emptied() -> None:
    # Tuples freed by a phase stay allocated on CPython's free list for their length (up to
    # 2,000 of each), wherever the phase left them; only a full collection empties the lists.
    gc.collect()
    before = sys.getallocatedblocks()
    pairs = [(i, -i) for i in range(10_000)]
    del pairs  # 2,000 of the 10,000 pairs go to the free list, still allocated blocks
    assert sys.getallocatedblocks() - before >= 1_000
    release_memory(empty_free_lists=True)  # as a pool worker releases
    assert sys.getallocatedblocks() - before < 500


def test_at_the_end_of_a_phase_every_worker_releases_even_one_that_ran_no_task() -> None:
    """A phase of one task (one shard, one global query) leaves the other worker idle: it must
    still hand back what it held from the phase before."""
    executor = ProcessPoolTaskExecutor(2)
    try:
        bar = StageBar("one task", total=None, unit="task", items="rows", enabled=False)
        assert list(executor.run(_square, [(3,)], bar)) == [9]
        workers = set(executor._processes)
        assert len(workers) == 2
        assert executor.released == workers  # each worker released once, the idle one too
    finally:
        executor.close()


def _square(value: int, *, progress: Any) -> int:
    return value * value


#: What `_keep` holds in a worker: memory a phase's release cannot hand back.
_kept: list[bytes] = []


def _keep(mib: int, *, progress: Any) -> int:
    """Hold `mib` MiB of written pages in this worker for good; returns its pid."""
    import os

    _kept.append(b"x" * (mib << 20))
    return os.getpid()


def test_workers_still_holding_much_of_a_phase_are_replaced_once_it_is_done() -> None:
    pool = DeferredPool(2)
    bar = StageBar("phase", total=None, unit="task", items="rows", enabled=False)
    try:
        pool.start()  # phase 1: each worker keeps a few MiB, under the bound
        first = set(pool.run(_keep, [(4,), (4,)], bar))
        kept = pool._pool
        assert kept is not None and kept.residue < local.RETIRE_RESIDUE_BYTES
        # phase 2: the same workers, which now keep more than the bound: replaced as it ends
        second = set(pool.run(_keep, [((local.RETIRE_RESIDUE_BYTES >> 20) + 16,)] * 2, bar))
        assert pool._pool is not kept and kept.residue > local.RETIRE_RESIDUE_BYTES
        assert first | second <= kept._processes.keys()
        third = set(pool.run(_keep, [(0,), (0,)], bar))  # phase 3: new workers, holding nothing
        assert third and not third & (first | second)
        assert pool._pool.residue < local.RETIRE_RESIDUE_BYTES
    finally:
        pool.close()


def test_a_worker_freezes_what_it_imported_so_each_phase_collects_only_what_tasks_made() -> None:
    from entbench.engine.executors.local import _import_modules

    try:
        _import_modules(["json"])
        frozen = gc.get_freeze_count()
        assert frozen > 1_000  # the modules, classes and functions this process holds
        garbage: list[Any] = []
        garbage.append(garbage)  # a cycle made after the freeze is still collected
        del garbage
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
