"""What every executor is: the `Executor` protocol, and the memory hand-back between task phases.

Tasks are module-level functions taking picklable arguments and a `progress` keyword. Every
executor yields results as tasks finish; callers never depend on that order (shard bytes depend
only on the task's own inputs), which is why the worker count cannot change the output. The
executors themselves are siblings: `local` (inline or a process pool) and `dask`; this module
imports neither.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from entbench.engine.progress import StageBar

TaskFn = Callable[..., Any]


#: Called by `release_memory`: drop what tasks of one kind keep across tasks in a process.
_RELEASE_HOOKS: list[Callable[[], None]] = []


def on_release(hook: Callable[[], None]) -> Callable[[], None]:
    """Call `hook` whenever a process ends a phase (`release_memory`): for a cache that the tasks of
    one stage share in a worker (an automaton loaded once instead of once per task), so that the
    next stage does not carry it."""
    _RELEASE_HOOKS.append(hook)
    return hook


def release_memory(*, empty_free_lists: bool = False) -> None:
    """Hand memory freed by finished tasks back to the system; called between phases.

    A map task frees a block's worth of small Python objects into glibc's heap (and Arrow
    buffers into mimalloc, when a user picks that pool: `process.unmap_freed_buffers`); both keep
    the pages, and the next phase's tasks (a reduce allocating through Arrow, say) take new ones,
    so a worker's peak was the sum of its task kinds, not the largest task. Tasks of one kind
    reuse each other's freed pages, so trimming after every task only made each one fault its
    memory in again (about 3 ms a task, plus the faults).

    `empty_free_lists`: also run a full collection, which empties CPython's free lists (see
    below). Pool workers ask for it; the building process does not, because the collection walks
    every object it holds (~25 ms a phase in the golden check's process, a third of its time).
    """
    import pyarrow as pa

    for hook in _RELEASE_HOOKS:
        hook()
    # CPython's type attribute cache keeps a strong reference to the name of each of its 4096
    # latest look-ups. Names built while the tasks ran outlive them there, a few hundred small
    # strings scattered over the whole phase's heap, and each pins a 1 MiB arena of the small-
    # object allocator: after a one-worker 256 MB Wikipedia scan, 150 arenas for 36 MB of live
    # objects (+110 MiB carried into every later stage); cleared, 39. It refills in microseconds.
    _clear_type_cache()
    # CPython keeps freed tuples, lists, dicts and floats on free lists for reuse (2,000 tuples of
    # each length up to 20). At a phase's end they sit where the phase's last frees left them,
    # scattered over its arenas, and pin them like the names above; map tasks run with the GC
    # paused, so no full collection (the one thing that clears the lists) came. Measured after
    # the 256 MB zhwiki scan on 2 workers: the worker that mapped and reduced held 35 arenas for
    # 20 MB of live objects and +28 MiB of anonymous memory into every later stage (+5 after the
    # 64 MB scan); with the lists cleared, 22 arenas and +0. A full collection of a pool
    # worker's ~50-70k long-lived objects takes ~10 ms.
    if empty_free_lists:
        gc.collect()
    pa.default_memory_pool().release_unused()
    trim_heap()


def resident_bytes() -> int | None:
    """This process's resident memory (`/proc/self/statm`), or None off Linux."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return None


_PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def trim_heap() -> None:
    """Give the free pages of malloc's heaps back to the system (`malloc_trim`; a no-op off glibc).

    For a task that has freed most of what it built and is about to build something else of a
    different shape: glibc reuses a free gap only for what fits in it, so the second part of the
    task would take new pages beside the first's gaps (see `engine.in_order`). A few ms."""
    if _libc is not None:
        _libc.malloc_trim(0)


#: `sys._clear_type_cache` (3.11, 3.12), `sys._clear_internal_caches` from 3.13 (which deprecates it).
_clear_type_cache: Any = getattr(sys, "_clear_internal_caches", None) or sys._clear_type_cache


def _load_libc() -> Any:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        return libc
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


_libc = _load_libc()


class Executor(Protocol):
    """Runs task functions and yields their results as they complete."""

    workers: int

    def run(self, fn: TaskFn, tasks: Iterable[tuple[Any, ...]], bar: StageBar) -> Iterator[Any]:
        """Run `fn(*args, progress=...)` for each args tuple."""
        ...

    def prepare(self, modules: Sequence[str]) -> None:
        """Let workers import `modules` (the build's stage modules) ahead of their first task."""
        ...

    def start(self) -> None:
        """Start the workers now, if they have not started: a stage is about to run."""
        ...

    def close(self) -> None:
        """Release workers."""
        ...
